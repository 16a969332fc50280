"""retrograd.distributed: torch.distributed's process groups and collectives over MPI.

Start a job with `python -m retrograd.distributed.run --nproc-per-node N script.py` (torchrun's
counterpart) or with plain `mpiexec -n N python script.py`; the script calls
init_process_group("mpi") (init_method "env://" works too) and then uses the collectives with
torch's signatures: all_reduce, broadcast, reduce, all_gather(_into_tensor), reduce_scatter
(_tensor), gather, scatter, all_to_all(_single), barrier, the object collectives and
point-to-point messages; new_group makes subgroups. Any dtype works (bfloat16 and float8 are
reduced in float32). async_op=True returns a Work over MPI's non-blocking calls.

Tensors travel as their NumPy buffers (mpi4py's buffer interface), never pickled. A rank
waiting for a message spins briefly and then polls with short sleeps, so waiting ranks do not
take the CPU from computing ones when ranks outnumber cores.

Mismatched calls (different shapes, dtypes, roots or ops across ranks) raise the same error on
every rank (see _checks.py) rather than hanging or producing garbage.

Failure: `abort(reason)` tells every other rank (on a communicator of its own, see _failure.py)
that this rank failed; any rank that is waiting notices it and raises RankFailure naming the
failed rank and its reason, so no rank hangs on a message that will never come. Under
retrograd.distributed.run an uncaught exception does this by itself (see _bootstrap.py).
"""

from retrograd.distributed._collectives import (
    all_gather, all_gather_into_tensor, all_reduce, all_to_all, all_to_all_single, barrier,
    broadcast, gather, reduce, reduce_scatter, reduce_scatter_tensor, scatter)
from retrograd.distributed._core import (
    GroupMember, P2POp, ProcessGroup, Work, _group, abort, batch_isend_irecv,
    destroy_process_group, get_backend, get_global_rank, get_group_rank,
    get_process_group_ranks, get_rank, get_world_size, group, init_process_group, irecv,
    is_available, is_initialized, isend, new_group, recv, send)
from retrograd.distributed._failure import RankFailure
from retrograd.distributed._grad_bucket import GradBucket
from retrograd.distributed._backend import (
    Backend, get_default_backend_for_device, get_node_local_rank, is_backend_available)
from retrograd.distributed._monitored import monitored_barrier
from retrograd.distributed._subgroups import new_subgroups, new_subgroups_by_enumeration
from retrograd.distributed._objects import (
    all_gather_object, broadcast_object_list, gather_object, recv_object_list,
    scatter_object_list, send_object_list)
from retrograd.distributed._reduce import ReduceOp


def is_mpi_available() -> bool:
    return is_available()


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    import os

    return "RETROGRAD_RUN_DIR" in os.environ


__all__ = ["Backend", "get_default_backend_for_device", "get_node_local_rank",
           "is_backend_available", "monitored_barrier", "recv_object_list", "send_object_list",
           "new_subgroups", "new_subgroups_by_enumeration",
           "init_process_group", "destroy_process_group", "is_initialized", "get_rank",
           "get_world_size", "new_group", "get_process_group_ranks", "get_global_rank",
           "get_group_rank", "get_backend", "ProcessGroup", "GroupMember", "group", "isend",
           "irecv", "send", "recv", "P2POp", "batch_isend_irecv", "barrier", "all_reduce",
           "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter",
           "reduce_scatter_tensor", "gather", "scatter", "all_to_all", "all_to_all_single",
           "all_gather_object", "broadcast_object_list", "gather_object",
           "scatter_object_list", "ReduceOp", "Work", "RankFailure", "abort", "is_available",
           "is_mpi_available", "is_gloo_available", "is_nccl_available",
           "is_torchelastic_launched", "GradBucket", "_group"]
