"""retrograd.distributed: a process group over MPI with torch.distributed's names.

Tensors travel as their NumPy buffers (mpi4py's buffer interface, preallocated arrays), never
pickled. A rank waiting for a message spins briefly and then polls with short sleeps, so waiting
ranks do not take the CPU from computing ones when ranks outnumber cores.

Failure: `abort(reason)` tells every other rank (on a communicator of its own, see _failure.py)
that this rank failed; any rank that is waiting notices it and raises RankFailure naming the
failed rank and its reason, so no rank hangs on a message that will never come. Under
retrograd.distributed.run an uncaught exception does this by itself (see _bootstrap.py).
"""

from __future__ import annotations

import atexit
import os
import time
from enum import Enum
from typing import Any

import numpy as np

from retrograd._tensor import Tensor
from retrograd.distributed._failure import Notices, RankFailure

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "get_rank",
           "get_world_size", "isend", "irecv", "send", "recv", "P2POp", "batch_isend_irecv",
           "barrier", "all_reduce", "broadcast", "ReduceOp", "Work", "RankFailure", "abort",
           "is_available"]

SPIN_SECONDS = 2e-4
MAX_SLEEP = 1e-3
FAILURE_GRACE = 0.5  # seconds an operation may still finish after a failure notice
DRAIN_PROBES = 20
STUCK_GRACE = 1.0  # seconds destroy_process_group waits for sends that timed out
SIZE_MISMATCH = ("Received data size doesn't match expected size: the message from rank {src} "
                 "(tag {tag}) is larger than the {nbytes}-byte receive buffer. Is there a "
                 "distributed collective mismatch in your code?")
TIMED_OUT = "Timed out waiting {ms}ms for {op} operation to complete ({what})"


class ReduceOp(Enum):
    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"


class _Group:
    comm: Any = None
    rank: int = 0
    size: int = 1
    timeout: float = 300.0
    notices: Notices | None = None
    # sends that timed out: MPI cannot withdraw them, they are freed at destroy
    stuck: list = []


_group = _Group()


def is_available() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_initialized() -> bool:
    return _group.comm is not None


def init_process_group(backend: str = "mpi", init_method: str | None = None,
                       timeout: Any = None, world_size: int = -1, rank: int = -1,
                       **kwargs: Any) -> None:
    """Join the MPI world started by mpiexec (or retrograd.distributed.run)."""
    if _group.comm is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    if backend not in ("mpi", "gloo", None):
        raise ValueError(f"retrograd.distributed supports the 'mpi' backend, not {backend!r}")
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    _group.comm = comm
    _group.rank = comm.Get_rank()
    _group.size = comm.Get_size()
    if world_size not in (-1, _group.size):
        raise ValueError(f"world_size={world_size} but MPI started {_group.size} processes")
    if timeout is not None:
        _group.timeout = timeout.total_seconds() if hasattr(timeout, "total_seconds") \
            else float(timeout)
    _group.notices = Notices(comm)
    _group.stuck = []
    # free the group's requests and communicator before mpi4py finalizes MPI (its exit hook
    # runs after Python's), even when the script never calls destroy_process_group
    atexit.register(destroy_process_group)


def _require() -> _Group:
    if _group.comm is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _group


def get_rank(group: Any = None) -> int:
    if _group.comm is None:
        return int(os.environ.get("RANK", 0)) if "RANK" in os.environ else -1
    return _group.rank


def get_world_size(group: Any = None) -> int:
    if _group.comm is None:
        return int(os.environ.get("WORLD_SIZE", 1)) if "WORLD_SIZE" in os.environ else -1
    return _group.size


def destroy_process_group(group: Any = None) -> None:
    g = _group
    if g.comm is None:
        return
    from mpi4py import MPI

    atexit.unregister(destroy_process_group)
    if MPI.Is_finalized():
        g.comm = None
        return
    _drain(g.comm)
    if g.stuck:
        deadline = time.monotonic() + STUCK_GRACE
        while not MPI.Request.Testall(g.stuck) and time.monotonic() < deadline:
            time.sleep(1e-3)
        for req in g.stuck:
            if req != MPI.REQUEST_NULL:
                req.Free()
    g.stuck = []
    if g.notices is not None:
        g.notices.close()
    g.comm = None
    g.notices = None


def _drain(comm: Any) -> None:
    """Receive and drop the messages that arrived here and that nobody received: MPI cannot
    finalize with a large message still half delivered."""
    from mpi4py import MPI

    status = MPI.Status()
    misses = 0
    while misses < DRAIN_PROBES:  # a message may need a few rounds of progress to show up
        if comm.Iprobe(MPI.ANY_SOURCE, MPI.ANY_TAG, status):
            scratch = np.empty(status.Get_count(MPI.BYTE), np.uint8)
            comm.Recv(scratch, status.Get_source(), status.Get_tag())
            misses = 0
        else:
            misses += 1


def _check_abort() -> None:
    if _group.notices is not None:
        _group.notices.check()


def abort(reason: str = "error", failed_rank: int | None = None) -> None:
    """Tell every other rank that this one (or `failed_rank`) failed: they raise RankFailure
    when waiting. Only the first notice of a process is sent."""
    g = _require()
    assert g.notices is not None
    g.notices.notify(reason, failed_rank)


def _wait_all(work: Work, timeout: float | None = None) -> None:
    """Wait for a Work's MPI requests: spin briefly, then test-and-sleep; notice failures
    elsewhere."""
    from mpi4py import MPI

    g = _group
    requests = work._requests
    seconds = g.timeout if timeout is None else timeout
    deadline = time.monotonic() + seconds
    spin_until = time.perf_counter() + SPIN_SECONDS
    sleep = 1e-5
    while True:
        if _test(work):
            return
        if time.perf_counter() < spin_until:
            continue
        try:
            _check_abort()
            if time.monotonic() > deadline:
                raise RuntimeError("[rank " + str(g.rank) + "] " + TIMED_OUT.format(
                    ms=round(seconds * 1000), op=work._op, what=work._what))
        except RuntimeError:
            # a collective the failed rank had already joined may be finishing as the notice
            # arrives, and cannot be cancelled: give it a moment, and report the failure at the
            # next wait instead
            grace = time.monotonic() + (FAILURE_GRACE if work._collective else 0.0)
            while time.monotonic() < grace:
                if MPI.Request.Testall(requests):
                    return
                time.sleep(1e-3)
            _withdraw(work)
            raise
        time.sleep(sleep)
        sleep = min(sleep * 2, MAX_SLEEP)


def _test(work: Work) -> bool:
    """Whether the requests are done; a message larger than its receive buffer is torch's size
    mismatch error, not MPI's."""
    from mpi4py import MPI

    try:
        return MPI.Request.Testall(work._requests)
    except MPI.Exception as e:
        if e.Get_error_class() not in (MPI.ERR_TRUNCATE, MPI.ERR_IN_STATUS):
            raise
        raise RuntimeError(SIZE_MISMATCH.format(src=work._peer, tag=work._tag,
                                                nbytes=work._nbytes)) from None


def _withdraw(work: Work) -> None:
    """Give up on requests that will not complete (their peer failed or is late). Receives
    are cancelled. Sends are not: cancelling a send is deprecated in MPI and crashes some
    transports (a large send in flight); it is freed at destroy_process_group. Collectives
    cannot be withdrawn and are left to the process's exit."""
    from mpi4py import MPI

    for req in work._requests:
        if req.Test():
            continue
        if work._op == "send":
            _group.stuck.append(req)
            continue
        if work._collective:
            continue
        try:
            req.Cancel()
            req.Wait()
        except MPI.Exception:
            pass


class Work:
    """A pending operation: wait() blocks (politely) until it is done. `op` names it as torch's
    messages do (send, recv, barrier, allreduce, broadcast)."""

    def __init__(self, requests: list, op: str, what: str, on_done: Any = None,
                 collective: bool = False, peer: int | None = None, tag: int = 0,
                 nbytes: int = 0) -> None:
        self._requests = requests
        self._op = op
        self._what = what
        self._on_done = on_done
        self._done = False
        self._collective = collective
        self._peer = peer
        self._tag = tag
        self._nbytes = nbytes

    def wait(self, timeout: Any = None) -> bool:
        if not self._done:
            t = timeout.total_seconds() if hasattr(timeout, "total_seconds") else timeout
            _wait_all(self, t)
            self._done = True
            if self._on_done is not None:
                self._on_done()
        return True

    def is_completed(self) -> bool:
        if self._done:
            return True
        if _test(self):
            self.wait()
        return self._done


def _buffer(t: Tensor, writable: bool = False) -> np.ndarray:
    arr = t._data
    if not arr.flags.c_contiguous or (writable and not arr.flags.writeable):
        raise RuntimeError("Tensors must be contiguous")
    if arr.dtype.kind == "V":  # bfloat16 / float8: send the raw bytes
        return arr.view(np.uint8)
    return arr


def isend(tensor: Tensor, dst: int, group: Any = None, tag: int = 0) -> Work:
    g = _require()
    req = g.comm.Isend(_buffer(tensor), dest=dst, tag=tag)
    return Work([req], "send", f"to rank {dst}, tag {tag}", peer=dst, tag=tag)


def irecv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0) -> Work:
    from mpi4py import MPI

    g = _require()
    source = MPI.ANY_SOURCE if src is None else src
    buf = _buffer(tensor, writable=True)
    req = g.comm.Irecv(buf, source=source, tag=tag)
    return Work([req], "recv", f"from rank {'any' if src is None else src}, tag {tag}",
                on_done=lambda: _bump(tensor), peer=src, tag=tag, nbytes=buf.nbytes)


def _bump(t: Tensor) -> None:
    if t._version_counter is not None:
        t._version_counter.version += 1


def send(tensor: Tensor, dst: int, group: Any = None, tag: int = 0) -> None:
    isend(tensor, dst, group, tag).wait()


def recv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0) -> int:
    irecv(tensor, src, group, tag).wait()
    return src if src is not None else -1


class P2POp:
    """A point-to-point op for batch_isend_irecv: P2POp(isend, tensor, peer)."""

    def __init__(self, op: Any, tensor: Tensor, peer: int | None = None, group: Any = None,
                 tag: int = 0, group_peer: int | None = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed."
                             "isend`` or ``torch.distributed.irecv``.")
        self.op = op
        self.tensor = tensor
        self.peer = peer if peer is not None else group_peer
        self.group = group
        self.tag = tag


def batch_isend_irecv(p2p_op_list: list) -> list:
    if not p2p_op_list:
        raise ValueError("expecting a list of P2POp")
    return [op.op(op.tensor, op.peer, op.group, op.tag) for op in p2p_op_list]


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> Work | None:
    g = _require()
    work = Work([g.comm.Ibarrier()], "barrier", "all ranks", collective=True)
    if async_op:
        return work
    work.wait()
    return None


_MPI_OPS = {ReduceOp.SUM: "SUM", ReduceOp.PRODUCT: "PROD", ReduceOp.MIN: "MIN",
            ReduceOp.MAX: "MAX", ReduceOp.AVG: "SUM"}


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    from mpi4py import MPI

    g = _require()
    buf = _buffer(tensor, writable=True)
    if buf.dtype == np.uint8 and tensor._data.dtype.kind == "V":
        raise RuntimeError("all_reduce of bfloat16/float8 tensors is not supported")
    result = np.empty_like(buf)
    req = g.comm.Iallreduce(buf, result, op=getattr(MPI, _MPI_OPS[op]))

    def finish() -> None:
        if op is ReduceOp.AVG:
            np.divide(result, g.size, out=result, casting="unsafe")
        np.copyto(buf, result)
        _bump(tensor)

    work = Work([req], "allreduce", "all ranks", on_done=finish, collective=True)
    if async_op:
        return work
    work.wait()
    return None


def broadcast(tensor: Tensor, src: int, group: Any = None, async_op: bool = False) -> Work | None:
    g = _require()
    req = g.comm.Ibcast(_buffer(tensor, writable=True), root=src)
    work = Work([req], "broadcast", f"from rank {src}", on_done=lambda: _bump(tensor),
                collective=True)
    if async_op:
        return work
    work.wait()
    return None
