"""Tensor collectives with torch.distributed's signatures, each one MPI non-blocking call.

Every collective checks its call against the other ranks' first (_checks.py), then starts the
MPI operation on contiguous scratch buffers and returns a Work; the Work's completion copies
the result into the caller's tensors (so their layout does not matter) and bumps their version.
With async_op=False the collective waits itself and returns None. (With async_op=True the
call still waits for the fingerprint exchange, i.e. until every rank of the group has made
the call; with RETROGRAD_DISTRIBUTED_CHECKS=0 it returns at once.) Ranks named in arguments
(src, dst) are global ranks, as in torch; group_src/group_dst name them within the group.
A rank outside `group` returns None at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._tensor import Tensor
from retrograd.distributed import _checks, _reduce
from retrograd.distributed._core import ProcessGroup, Work, _bump, _member, track
from retrograd.distributed._reduce import ReduceOp

__all__ = ["barrier", "all_reduce", "broadcast", "reduce", "all_gather",
           "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "gather",
           "scatter", "all_to_all", "all_to_all_single"]


def _run(pg: ProcessGroup, requests: list, op: str, what: str, async_op: bool,
         finish: Callable[[], None] | None, result: list, keep: tuple = ()) -> Work | None:
    work = Work(requests, op, what, on_done=finish, collective=True, result=result)
    work._keep = keep
    track(work)
    if async_op:
        return work
    work.wait()
    return None


def _array(t: Tensor, name: str = "tensor") -> np.ndarray:
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")
    return t._data


def _raw(arr: np.ndarray) -> np.ndarray:
    """A flat contiguous buffer MPI can send: bfloat16/float8 as their bytes."""
    arr = np.ascontiguousarray(arr).reshape(-1)
    return arr.view(np.uint8) if arr.dtype.kind == "V" else arr


def _same_dtype(*tensors: Any) -> None:
    """torch's check that a collective's tensors share one dtype (complex may pair with its
    real type)."""
    last = None
    for t in (x for item in tensors for x in (item if isinstance(item, (list, tuple))
                                               else [item])):
        if t is None:
            continue
        d = t.dtype
        if d.is_complex:
            d = _real_of(d)
        if last is None:
            last = d
        elif last != d:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {last} and  "
                             f"{t.dtype}")


def _real_of(d: Any) -> Any:
    return d.to_real()


def _store(t: Tensor, values: np.ndarray) -> None:
    np.copyto(t._data, values.reshape(t._data.shape), casting="unsafe")
    _bump(t)


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, name: str) -> int:
    """The group rank of a root given as a global rank (or directly as group_<name>)."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"Can not specify both {name} and group_{name}")
        pg.global_rank(group_rank)
        return group_rank
    return pg.group_rank(0 if rank is None else rank)


def _same_shapes(tensors: list, like: np.ndarray, name: str, size: int) -> None:
    if len(tensors) != size:
        raise ValueError(f"{name}: expected a list of {size} tensors (one per rank), got "
                         f"{len(tensors)}")
    for t in tensors:
        if _array(t).size != like.size:
            raise ValueError(f"{name}: every tensor of the list must have {like.size} elements "
                             f"(the input's), got {tuple(t.shape)}")


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    return _run(pg, [pg.comm.Ibarrier()], "barrier", "all ranks", async_op, None, [])


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    arr = _array(tensor)
    _checks.check(pg, _checks.describe("ALLREDUCE", tensor, ReduceOp=op.name))
    return _all_reduce(pg, tensor, arr, op, async_op)


def _all_reduce(pg: ProcessGroup, tensor: Tensor, arr: np.ndarray, op: ReduceOp,
                async_op: bool) -> Work | None:
    send, mpi_op, finish = _reduce.plan(arr, op, "all_reduce", pg.size())
    recv = np.empty_like(send)
    req = pg.comm.Iallreduce(send, recv, op=mpi_op)
    return _run(pg, [req], "allreduce", "all ranks", async_op,
                lambda: _store(tensor, finish(recv)), [tensor], (send, recv))


def all_reduce_unchecked(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None,
                         async_op: bool = False) -> Work | None:
    """all_reduce without the fingerprint exchange, for callers whose shapes are known to agree
    (DDP's buckets)."""
    pg = _member(group)
    if pg is None:
        return None
    return _all_reduce(pg, tensor, _array(tensor), op, async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: Any = None, async_op: bool = False,
              group_src: int | None = None) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, src, group_src, "src")
    arr = _array(tensor)
    _checks.check(pg, _checks.describe("BROADCAST", tensor, Root=pg.ranks[root]))
    buf = _raw(arr.copy() if pg.rank() != root else arr)
    req = pg.comm.Ibcast(buf, root=root)
    finish = None if pg.rank() == root else (
        lambda: _store(tensor, buf.view(arr.dtype)))
    return _run(pg, [req], "broadcast", f"from rank {pg.ranks[root]}", async_op, finish,
                [tensor], (buf,))


def reduce(tensor: Tensor, dst: int | None = None, op: ReduceOp = ReduceOp.SUM,
           group: Any = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "dst")
    arr = _array(tensor)
    _checks.check(pg, _checks.describe("REDUCE", tensor, Root=pg.ranks[root], ReduceOp=op.name))
    send, mpi_op, finish = _reduce.plan(arr, op, "reduce", pg.size())
    recv = np.empty_like(send)
    req = pg.comm.Ireduce(send, recv, op=mpi_op, root=root)
    done = (lambda: _store(tensor, finish(recv))) if pg.rank() == root else None
    return _run(pg, [req], "reduce", f"to rank {pg.ranks[root]}", async_op, done, [tensor],
                (send, recv))


def all_gather(tensor_list: list, tensor: Tensor, group: Any = None,
               async_op: bool = False) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    arr = _array(tensor)
    _same_dtype(tensor_list, tensor)
    _same_shapes(tensor_list, arr, "all_gather", pg.size())
    _checks.check(pg, _checks.describe("ALLGATHER", tensor))
    send = _raw(arr)
    recv = np.empty((pg.size(),) + send.shape, send.dtype)
    req = pg.comm.Iallgather(send, recv)

    def finish() -> None:
        for i, out in enumerate(tensor_list):
            _store(out, recv[i].view(arr.dtype))

    return _run(pg, [req], "allgather", "all ranks", async_op, finish, list(tensor_list),
                (send, recv))


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: Any = None,
                           async_op: bool = False) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    arr = _array(input_tensor, "input_tensor")
    out = _array(output_tensor, "output_tensor")
    if out.size != arr.size * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    if out.dtype != arr.dtype:
        raise ValueError("output tensor must have the same type as input tensor")
    _checks.check(pg, _checks.describe("_ALLGATHER_BASE", input_tensor))
    send = _raw(arr)
    recv = np.empty((pg.size(),) + send.shape, send.dtype)
    req = pg.comm.Iallgather(send, recv)
    return _run(pg, [req], "allgather", "all ranks", async_op,
                lambda: _store(output_tensor, recv.view(arr.dtype)), [output_tensor],
                (send, recv))


def reduce_scatter(output: Tensor, input_list: list, op: ReduceOp = ReduceOp.SUM,
                   group: Any = None, async_op: bool = False) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    arr = _array(output, "output")
    _same_dtype(output, input_list)
    _same_shapes(input_list, arr, "reduce_scatter", pg.size())
    _checks.check(pg, _checks.describe("REDUCE_SCATTER", output, ReduceOp=op.name))
    stacked = np.stack([np.asarray(t._data).reshape(arr.shape) for t in input_list])
    return _reduce_scatter(pg, output, arr, stacked, op, async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM,
                          group: Any = None, async_op: bool = False) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    arr = _array(output, "output")
    whole = _array(input, "input")
    if whole.size != arr.size * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    _checks.check(pg, _checks.describe("_REDUCE_SCATTER_BASE", input, ReduceOp=op.name))
    return _reduce_scatter(pg, output, arr, whole.reshape((pg.size(),) + arr.shape), op,
                           async_op)


def _reduce_scatter(pg: ProcessGroup, output: Tensor, arr: np.ndarray, stacked: np.ndarray,
                    op: ReduceOp, async_op: bool) -> Work | None:
    send, mpi_op, finish = _reduce.plan(stacked, op, "reduce_scatter", pg.size())
    recv = np.empty(send.shape[1:], send.dtype)
    req = pg.comm.Ireduce_scatter_block(send, recv, op=mpi_op)

    def done() -> None:
        _store(output, finish(np.broadcast_to(recv, send.shape))[0])

    return _run(pg, [req], "reduce_scatter", "all ranks", async_op, done, [output],
                (send, recv))


def _check_root_list(pg: Any, root: int, tensors: list | None, arr: np.ndarray, op: str,
                     role: str) -> bool:
    """gather's and scatter's list: given (with one tensor per rank, each shaped as this rank's)
    on the root alone, as torch requires. True on the root."""
    name = f"{op}_list"
    if pg.rank() == root:
        if not tensors:
            raise ValueError(f"Argument ``{name}`` must be specified on {role} rank.")
        _same_shapes(tensors, arr, op, pg.size())
        return True
    if tensors:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{role} ranks.")
    return False


def gather(tensor: Tensor, gather_list: list | None = None, dst: int | None = None,
           group: Any = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "dst")
    arr = _array(tensor)
    _same_dtype(tensor, gather_list or [])
    _check_root_list(pg, root, gather_list, arr, "gather", "destination")
    _checks.check(pg, _checks.describe("GATHER", tensor, Root=pg.ranks[root]))
    send = _raw(arr)
    recv = np.empty((pg.size(),) + send.shape, send.dtype)
    req = pg.comm.Igather(send, recv, root=root)
    outputs = list(gather_list or [])

    def finish() -> None:
        for i, out in enumerate(outputs):
            _store(out, recv[i].view(arr.dtype))

    return _run(pg, [req], "gather", f"to rank {pg.ranks[root]}", async_op, finish, outputs,
                (send, recv))


def scatter(tensor: Tensor, scatter_list: list | None = None, src: int | None = None,
            group: Any = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    root = _root(pg, src, group_src, "src")
    arr = _array(tensor)
    _same_dtype(tensor, scatter_list or [])
    if _check_root_list(pg, root, scatter_list, arr, "scatter", "source"):
        send = _raw(np.stack([np.asarray(t._data, arr.dtype).reshape(arr.shape)
                              for t in scatter_list or []]))
    else:
        send = np.empty(0, np.uint8)
    _checks.check(pg, _checks.describe("SCATTER", tensor, Root=pg.ranks[root]))
    recv = np.empty_like(_raw(arr))
    req = pg.comm.Iscatter(send if pg.rank() == root else None, recv, root=root)
    return _run(pg, [req], "scatter", f"from rank {pg.ranks[root]}", async_op,
                lambda: _store(tensor, recv.view(arr.dtype)), [tensor], (send, recv))


def all_to_all(output_tensor_list: list, input_tensor_list: list, group: Any = None,
               async_op: bool = False) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    n = pg.size()
    if len(output_tensor_list) != n or len(input_tensor_list) != n:
        raise ValueError(f"all_to_all: expected lists of {n} tensors (one per rank)")
    _same_dtype(output_tensor_list, input_tensor_list)
    ins = [_array(t) for t in input_tensor_list]
    outs = [_array(t) for t in output_tensor_list]
    return _alltoallv(pg, ins, outs, list(output_tensor_list), async_op, "ALLTOALL")


def all_to_all_single(output: Tensor, input: Tensor,
                      output_split_sizes: list[int] | None = None,
                      input_split_sizes: list[int] | None = None, group: Any = None,
                      async_op: bool = False) -> Work | None:
    pg = _member(group)
    if pg is None:
        return None
    n = pg.size()
    src, dst = _array(input, "input"), _array(output, "output")
    _same_dtype(output, input)
    ins = _split(src, input_split_sizes, n, "input")
    outs = _split(dst, output_split_sizes, n, "output")
    return _alltoallv(pg, ins, outs, [output], async_op, "ALLTOALL_BASE", whole=dst)


def _split(arr: np.ndarray, sizes: list[int] | None, n: int, name: str) -> list:
    rows = arr.shape[0] if arr.ndim else 1
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise ValueError(f"Tensor's dim 0 does not divide equally across group size: "
                             f"{name} has {rows} rows for {n} ranks")
        sizes = [rows // n] * n
    if len(sizes) != n or sum(sizes) != rows:
        raise ValueError(f"Split sizes doesn't match total dim 0 size: {name} has {rows} rows, "
                         f"splits {list(sizes)}")
    bounds = np.cumsum([0, *sizes])
    return [arr[bounds[i]:bounds[i + 1]] for i in range(n)]


def _alltoallv(pg: ProcessGroup, ins: list, outs: list, results: list, async_op: bool,
               op: str, whole: np.ndarray | None = None) -> Work | None:
    dtype = ins[0].dtype if ins else outs[0].dtype
    send_bytes = [a.size * a.dtype.itemsize for a in ins]
    recv_bytes = [a.size * a.dtype.itemsize for a in outs]
    _check_alltoall(pg, op, dtype, send_bytes, recv_bytes)
    send = np.concatenate([_raw(a).view(np.uint8).reshape(-1) for a in ins]) if ins else \
        np.empty(0, np.uint8)
    recv = np.empty(sum(recv_bytes), np.uint8)
    sdispl = np.cumsum([0, *send_bytes[:-1]]).tolist()
    rdispl = np.cumsum([0, *recv_bytes[:-1]]).tolist()
    req = pg.comm.Ialltoallv([send, (send_bytes, sdispl)], [recv, (recv_bytes, rdispl)])

    def finish() -> None:
        for arr, start, nbytes in zip(outs, rdispl, recv_bytes):
            np.copyto(arr, recv[start:start + nbytes].view(arr.dtype).reshape(arr.shape))
        for t in results:
            _bump(t)

    return _run(pg, [req], "alltoall", "all ranks", async_op, finish, results, (send, recv))


def _check_alltoall(pg: ProcessGroup, op: str, dtype: np.dtype, send_bytes: list,
                    recv_bytes: list) -> None:
    """Every rank must send rank j as many bytes as rank j expects from it: share the sizes so
    every rank can see a mismatch (a short receive would otherwise truncate or hang)."""
    from retrograd.distributed._core import Work

    _checks.check(pg, _checks.describe(op, None, TensorDtypes=dtype.name))
    if not _checks.enabled() or pg.size() == 1:
        return
    n = pg.size()
    mine = np.array(send_bytes + recv_bytes, np.int64)
    table = np.empty((n, 2 * n), np.int64)
    Work([pg.comm.Iallgather(mine, table)], "fingerprint", "all ranks", collective=True).wait()
    sends, recvs = table[:, :n], table[:, n:]
    bad = np.argwhere(sends != recvs.T)
    if bad.size:
        i, j = (int(v) for v in bad[0])
        raise RuntimeError(f"Detected mismatch between collectives on ranks: in {op}, rank "
                           f"{pg.ranks[i]} sends {sends[i, j]} bytes to rank {pg.ranks[j]}, "
                           f"which expects {recvs[j, i]} bytes from it.")
