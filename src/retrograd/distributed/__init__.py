"""retrograd.distributed: a process group over MPI with torch.distributed's names.

Tensors travel as their NumPy buffers (mpi4py's buffer interface, preallocated arrays), never
pickled. A rank waiting for a message spins briefly and then polls with short sleeps, so waiting
ranks do not take the CPU from computing ones when ranks outnumber cores.

Failure: `abort(reason)` tells every other rank (on a reserved tag) that this rank failed; any
rank that is waiting notices it and raises RankFailure naming the failed rank and its reason,
so no rank hangs on a message that will never come.
"""

from __future__ import annotations

import os
import time
from enum import Enum
from typing import Any

import numpy as np

from retrograd._tensor import Tensor

__all__ = ["init_process_group", "destroy_process_group", "is_initialized", "get_rank",
           "get_world_size", "isend", "irecv", "send", "recv", "P2POp", "batch_isend_irecv",
           "barrier", "all_reduce", "broadcast", "ReduceOp", "Work", "RankFailure", "abort",
           "is_available"]

ABORT_TAG = 32000  # reserved for failure notices
ABORT_BYTES = 1024
SPIN_SECONDS = 2e-4
MAX_SLEEP = 1e-3
FAILURE_GRACE = 0.5  # seconds an operation may still finish after a failure notice


class RankFailure(RuntimeError):
    """Another rank failed; raised on every rank that was waiting for it."""


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
    abort_buf: np.ndarray | None = None
    abort_req: Any = None
    failure: str | None = None
    abort_msg: Any = None
    abort_sends: Any = None


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
    _group.failure = None
    # a standing receive for failure notices from any rank
    _group.abort_buf = np.zeros(ABORT_BYTES, np.uint8)
    _group.abort_req = comm.Irecv(_group.abort_buf, source=MPI.ANY_SOURCE, tag=ABORT_TAG)


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

    if g.abort_req is not None and not g.abort_req.Test():
        g.abort_req.Cancel()
        g.abort_req.Wait()
    if g.abort_sends:
        deadline = time.monotonic() + 2.0
        while not MPI.Request.Testall(g.abort_sends) and time.monotonic() < deadline:
            time.sleep(1e-3)
    g.comm = None
    g.abort_req = None
    g.abort_sends = None


def _check_abort() -> None:
    g = _group
    if g.failure is not None:
        raise RankFailure(g.failure)
    if g.abort_req is not None and g.abort_req.Test():
        failed = int(g.abort_buf[:4].view(np.int32)[0])
        reason = bytes(g.abort_buf[4:]).rstrip(b"\0").decode(errors="replace")
        g.failure = f"rank {failed} failed: {reason} (rank {g.rank} stops)"
        raise RankFailure(g.failure)


def abort(reason: str = "error") -> None:
    """Tell every other rank that this one failed (they raise RankFailure when waiting)."""
    g = _require()
    msg = np.zeros(ABORT_BYTES, np.uint8)
    msg[:4] = np.array([g.rank], np.int32).view(np.uint8)
    text = reason.encode()[:ABORT_BYTES - 4]
    msg[4:4 + len(text)] = np.frombuffer(text, np.uint8)
    g.abort_msg = msg  # keep the buffer alive while the sends are in flight
    g.abort_sends = [g.comm.Isend(msg, dest=peer, tag=ABORT_TAG)
                     for peer in range(g.size) if peer != g.rank]


def _wait_all(requests: list, what: str, timeout: float | None = None,
              collective: bool = False) -> None:
    """Wait for MPI requests: spin briefly, then test-and-sleep; notice failures elsewhere."""
    from mpi4py import MPI

    g = _group
    deadline = time.monotonic() + (g.timeout if timeout is None else timeout)
    spin_until = time.perf_counter() + SPIN_SECONDS
    sleep = 1e-5
    while True:
        if MPI.Request.Testall(requests):
            return
        if time.perf_counter() < spin_until:
            continue
        try:
            _check_abort()
            if time.monotonic() > deadline:
                raise RuntimeError(f"rank {g.rank}: timed out waiting for {what}")
        except RuntimeError:
            # a collective the failed rank had already joined may be finishing as the notice
            # arrives, and cannot be cancelled: give it a moment, and report the failure at the
            # next wait instead
            grace = time.monotonic() + (FAILURE_GRACE if collective else 0.0)
            while time.monotonic() < grace:
                if MPI.Request.Testall(requests):
                    return
                time.sleep(1e-3)
            _cancel(requests)
            raise
        time.sleep(sleep)
        sleep = min(sleep * 2, MAX_SLEEP)


def _cancel(requests: list) -> None:
    """Withdraw requests that will never complete (their peer failed). Only point-to-point
    requests can be cancelled; collectives are left to the process's exit."""
    from mpi4py import MPI

    for req in requests:
        if req.Test():
            continue
        try:
            req.Cancel()
            req.Wait()
        except MPI.Exception:
            pass


class Work:
    """A pending operation: wait() blocks (politely) until it is done."""

    def __init__(self, requests: list, what: str, on_done: Any = None,
                 collective: bool = False) -> None:
        self._requests = requests
        self._what = what
        self._on_done = on_done
        self._done = False
        self._collective = collective

    def wait(self, timeout: Any = None) -> bool:
        if not self._done:
            t = timeout.total_seconds() if hasattr(timeout, "total_seconds") else timeout
            _wait_all(self._requests, self._what, t, self._collective)
            self._done = True
            if self._on_done is not None:
                self._on_done()
        return True

    def is_completed(self) -> bool:
        if self._done:
            return True
        from mpi4py import MPI

        if MPI.Request.Testall(self._requests):
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
    return Work([req], f"send to rank {dst} (tag {tag})")


def irecv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0) -> Work:
    from mpi4py import MPI

    g = _require()
    source = MPI.ANY_SOURCE if src is None else src
    req = g.comm.Irecv(_buffer(tensor, writable=True), source=source, tag=tag)
    return Work([req], f"receive from rank {src} (tag {tag})",
                on_done=lambda: _bump(tensor))


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
    work = Work([g.comm.Ibarrier()], "barrier", collective=True)
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

    work = Work([req], "all_reduce", on_done=finish, collective=True)
    if async_op:
        return work
    work.wait()
    return None


def broadcast(tensor: Tensor, src: int, group: Any = None, async_op: bool = False) -> Work | None:
    g = _require()
    req = g.comm.Ibcast(_buffer(tensor, writable=True), root=src)
    work = Work([req], f"broadcast from rank {src}", on_done=lambda: _bump(tensor),
                collective=True)
    if async_op:
        return work
    work.wait()
    return None
