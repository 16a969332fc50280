"""The process group's core: initialization, groups, Work and point-to-point messages.

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
import sys
import time
from typing import Any

import numpy as np

from retrograd._tensor import Tensor
from retrograd.distributed._failure import Notices, RankFailure

SPIN_SECONDS = 2e-4
MAX_SLEEP = 1e-3
FAILURE_GRACE = 0.5  # seconds an operation may still finish after a failure notice
DRAIN_PROBES = 20
STUCK_GRACE = 1.0  # seconds destroy_process_group waits for sends that timed out
SIZE_MISMATCH = ("Received data size doesn't match expected size: the message from rank {src} "
                 "(tag {tag}) is larger than the {nbytes}-byte receive buffer. Is there a "
                 "distributed collective mismatch in your code?")
TIMED_OUT = "Timed out waiting {ms}ms for {op} operation to complete ({what})"


class ProcessGroup:
    """A communicator and the global ranks it spans, in group-rank order (torch's
    ProcessGroup: rank() and size() are this process's place in it)."""

    def __init__(self, comm: Any, ranks: list[int]) -> None:
        self.comm = comm
        self.ranks = list(ranks)
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return "mpi"

    def group_rank(self, global_rank: int) -> int:
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"Global rank {global_rank} is not part of group {self}") from None

    def global_rank(self, group_rank: int) -> int:
        if not 0 <= group_rank < self._size:
            raise ValueError(f"Group rank {group_rank} is not part of group {self}")
        return self.ranks[group_rank]

    def __repr__(self) -> str:
        return f"ProcessGroup(ranks={self.ranks})"


class _NonGroupMember:
    def __repr__(self) -> str:
        return "NON_GROUP_MEMBER"


class GroupMember:
    """torch's names for the default group and for "this rank is not in the group"."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER: Any = _NonGroupMember()


class _GroupNames:
    """`dist.group.WORLD`, as torch spells the default group."""

    WORLD: ProcessGroup | None = None


group = _GroupNames


class _Group:
    comm: Any = None
    rank: int = 0
    size: int = 1
    timeout: float = 300.0
    notices: Notices | None = None
    world: ProcessGroup | None = None
    # communicators made by new_group: freed at destroy, before MPI finalizes
    subgroups: list = []
    # collectives not yet known complete: their buffers must live until MPI is done with them
    pending: list = []
    # sends that timed out: MPI cannot withdraw them, they are freed at destroy
    stuck: list = []
    # point-to-point messages sent to / received from each rank: at destroy every rank learns
    # how many messages were sent to it and receives the ones nobody did (_settle_messages)
    sent: Any = None
    received: Any = None


_group = _Group()


def seconds_of(timeout: Any) -> float:
    """A timeout given as a timedelta or as a number of seconds, in seconds."""
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


def is_available() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def is_initialized() -> bool:
    return _group.comm is not None


def init_process_group(backend: str | None = "mpi", init_method: str | None = None,
                       timeout: Any = None, world_size: int = -1, rank: int = -1,
                       store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None, **kwargs: Any) -> None:
    """Join the MPI world started by mpiexec (directly, or through retrograd.distributed.run).

    init_method "env://" (torchrun's default) also reads RANK and WORLD_SIZE from the
    environment, as torch does, and checks that they name this process's place in MPI's world;
    so do explicit `rank` and `world_size` arguments. Processes started without mpiexec are
    each a world of one (MPICH cannot join such singletons), so a larger WORLD_SIZE there is an
    error that says how to start the job.
    """
    if _group.comm is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    if backend not in ("mpi", "gloo", "cpu:gloo", None):
        raise ValueError(f"retrograd.distributed supports the 'mpi' backend, not {backend!r}")
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    mpi_rank, mpi_size = comm.Get_rank(), comm.Get_size()
    if init_method is not None and init_method.startswith("env://"):
        rank = _env_rank("RANK", rank)
        world_size = _env_rank("WORLD_SIZE", world_size)
    if world_size not in (-1, mpi_size):
        raise ValueError(f"world_size={world_size} but MPI started {mpi_size} processes: start "
                         f"the job with `mpiexec -n {world_size}` or retrograd.distributed.run")
    if rank not in (-1, mpi_rank):
        raise ValueError(f"rank={rank} but MPI gave this process rank {mpi_rank}")
    _group.comm = comm
    _group.rank = mpi_rank
    _group.size = mpi_size
    if timeout is not None:
        _group.timeout = seconds_of(timeout)
    _group.notices = Notices(comm)
    _group.stuck = []
    _group.pending = []
    _group.subgroups = []
    _group.sent = np.zeros(mpi_size, np.int64)
    _group.received = np.zeros(mpi_size, np.int64)
    world = ProcessGroup(comm, list(range(mpi_size)))
    _group.world = GroupMember.WORLD = _GroupNames.WORLD = world
    # free the group's requests and communicators before mpi4py finalizes MPI (its exit hook
    # runs after Python's), even when the script never calls destroy_process_group
    atexit.register(destroy_process_group)
    if "RETROGRAD_RUN_DIR" not in os.environ:  # plain mpiexec: no launcher's bootstrap
        _stop_all_on_uncaught_exception()


EXIT_BARRIER_SECONDS = 3.0
OUTPUT_DRAIN_SECONDS = 0.3  # for mpiexec to forward the last lines before the abort


def _stop_all_on_uncaught_exception() -> None:
    """Under plain mpiexec, an exception that ends this rank's script tells the other ranks
    (they raise RankFailure naming this rank wherever they wait) and then aborts the MPI job,
    as retrograd.distributed.run's bootstrap does; without it the others would wait for this
    rank until their timeout."""
    previous = sys.excepthook

    def hook(kind: type, value: BaseException, tb: Any) -> None:
        previous(kind, value, tb)
        notices = _group.notices
        if notices is None:
            return
        from mpi4py import MPI

        if not isinstance(value, RankFailure):
            notices.notify(f"{kind.__name__}: {value}")
        notices.exit_barrier(EXIT_BARRIER_SECONDS)
        sys.stderr.flush()
        time.sleep(OUTPUT_DRAIN_SECONDS)
        MPI.COMM_WORLD.Abort(1)

    sys.excepthook = hook


def _env_rank(name: str, given: int) -> int:
    if given != -1:
        return given
    if name not in os.environ:
        raise ValueError("Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    return int(os.environ[name])


def _require() -> _Group:
    if _group.comm is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _group


def _member(group: Any) -> ProcessGroup | None:
    """The group a collective runs on; None when this rank is not in it (torch's collectives
    then return at once)."""
    g = _require()
    if group is None or group is GroupMember.WORLD:
        assert g.world is not None
        return g.world
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, not {type(group).__name__}")
    return group


def get_rank(group: Any = None) -> int:
    if _group.comm is None:
        return int(os.environ.get("RANK", 0)) if "RANK" in os.environ else -1
    pg = _member(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group: Any = None) -> int:
    if _group.comm is None:
        return int(os.environ.get("WORLD_SIZE", 1)) if "WORLD_SIZE" in os.environ else -1
    pg = _member(group)
    return -1 if pg is None else pg.size()


def new_group(ranks: list[int] | None = None, timeout: Any = None, backend: Any = None,
              pg_options: Any = None, use_local_synchronization: bool = False,
              group_desc: str | None = None, device_id: Any = None) -> Any:
    """A group of some ranks (all ranks by default). Every rank of the world must call it, in
    the same order, as in torch; a rank outside `ranks` gets GroupMember.NON_GROUP_MEMBER."""
    from mpi4py import MPI

    g = _require()
    members = sorted(range(g.size) if ranks is None else set(ranks))
    for r in members:
        if not 0 <= r < g.size:
            raise ValueError(f"Invalid rank {r} for new_group: the world has {g.size} ranks")
    inside = g.rank in members
    comm = g.comm.Split(0 if inside else MPI.UNDEFINED, members.index(g.rank) if inside else 0)
    if not inside:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, members)
    g.subgroups.append(pg)
    return pg


def get_process_group_ranks(group: Any) -> list[int]:
    pg = _member(group)
    if pg is None:
        raise ValueError("this rank is not part of the group")
    return list(pg.ranks)


def get_global_rank(group: Any, group_rank: int) -> int:
    pg = _member(group)
    assert pg is not None
    return pg.global_rank(group_rank)


def get_group_rank(group: Any, global_rank: int) -> int:
    pg = _member(group)
    assert pg is not None
    return pg.group_rank(global_rank)


def get_backend(group: Any = None) -> str:
    _require()
    return "mpi"


def track(work: Work) -> Work:
    """Keep a started collective (and the buffers it holds) alive until it is known done."""
    pending = _group.pending
    if len(pending) > 32:
        pending[:] = [w for w in pending if not w._done]
    pending.append(work)
    return work


def destroy_process_group(group: Any = None) -> None:
    """Free a subgroup, or (no argument) the whole process group. The latter is collective, as
    scripts use it: every rank calls it (the exit does, if the script did not), and the ranks
    settle their unreceived messages before MPI finalizes."""
    g = _group
    if g.comm is None:
        return
    from mpi4py import MPI

    if group is not None and group is not GroupMember.WORLD:
        if isinstance(group, ProcessGroup) and group in g.subgroups:
            g.subgroups.remove(group)
            if not MPI.Is_finalized():
                group.comm.Free()
        return
    atexit.unregister(destroy_process_group)
    if MPI.Is_finalized():
        g.comm = None
        return
    _settle_messages(g)
    _finish_pending(g)
    _drain(g.comm)
    if g.stuck:
        deadline = time.monotonic() + STUCK_GRACE
        while not MPI.Request.Testall(g.stuck) and time.monotonic() < deadline:
            time.sleep(1e-3)
        for req in g.stuck:
            if req != MPI.REQUEST_NULL:
                req.Free()
    g.stuck = []
    for pg in g.subgroups:
        pg.comm.Free()
    g.subgroups = []
    if g.notices is not None:
        g.notices.close()
    g.comm = None
    g.notices = None
    g.world = GroupMember.WORLD = _GroupNames.WORLD = None


def _settle_messages(g: _Group) -> None:
    """Receive every message sent to this rank that nobody received, so every send completes
    before MPI finalizes (a send left open holds its communicator: MPICH reports "Builtin
    communicator ... has pending references" at exit, and a large message half delivered
    cannot be finalized). Receives still posted are withdrawn first; then the ranks exchange
    how many messages each sent to each, and each rank takes the ones it still expects."""
    from mpi4py import MPI

    for w in g.pending:
        if not w._done and w._op == "recv":
            for req in w._requests:
                if req != MPI.REQUEST_NULL:
                    req.Cancel()
            statuses = [MPI.Status() for _ in w._requests]
            MPI.Request.Waitall(w._requests, statuses)
            if not any(st.Is_cancelled() for st in statuses):
                w._statuses = statuses
                w.wait()
    sent_to_me = np.zeros(g.size, np.int64)
    work = Work([g.comm.Ialltoall(g.sent, sent_to_me)], "settle", "all ranks", collective=True)
    if not _poll(work._requests, STUCK_GRACE * 5):
        return  # a rank is not here to settle: the probing drain does what it can
    missing = sent_to_me - g.received
    status = MPI.Status()
    for src in np.flatnonzero(missing > 0):
        for _ in range(int(missing[src])):
            deadline = time.monotonic() + STUCK_GRACE
            while not g.comm.Iprobe(int(src), MPI.ANY_TAG, status):
                if time.monotonic() > deadline:
                    return
                time.sleep(1e-4)
            scratch = np.empty(status.Get_count(MPI.BYTE), np.uint8)
            g.comm.Recv(scratch, int(src), status.Get_tag())


def _poll(requests: list, seconds: float) -> bool:
    from mpi4py import MPI

    deadline = time.monotonic() + seconds
    while not MPI.Request.Testall(requests):
        if time.monotonic() > deadline:
            return False
        time.sleep(1e-4)
    return True


def _finish_pending(g: _Group) -> None:
    """Operations started and never waited for: let them complete (briefly) so no request is
    still open when MPI finalizes (an open request holds a reference to its communicator: MPICH
    reports "Builtin communicator ... has pending references" at exit). A send still open then
    is freed (MPI delivers or drops it); a receive is cancelled; a collective can be neither."""
    from mpi4py import MPI

    works = [w for w in g.pending if not w._done]
    g.pending = []
    requests = [r for w in works for r in w._requests]
    deadline = time.monotonic() + STUCK_GRACE
    while requests and not MPI.Request.Testall(requests) and time.monotonic() < deadline:
        time.sleep(1e-3)
    for w in works:
        if w._collective:
            continue
        for req in w._requests:
            if req == MPI.REQUEST_NULL:
                continue
            if w._op == "recv":
                req.Cancel()
                req.Wait()
            else:
                req.Free()


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
        if work._statuses is not None:
            return MPI.Request.Testall(work._requests, work._statuses)
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
        if work._op == "recv":
            _withdraw_receive(req)
            continue
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


def _withdraw_receive(req: Any) -> None:
    """Cancel a receive; if its message arrived meanwhile, count it as received (the message
    settlement at destroy must not wait for it)."""
    from mpi4py import MPI

    status = MPI.Status()
    try:
        if not req.Test(status):
            req.Cancel()
            req.Wait(status)
    except MPI.Exception:
        return
    source = status.Get_source()
    if not status.Is_cancelled() and 0 <= source < _group.size and _group.received is not None:
        _group.received[source] += 1


class Work:
    """A pending operation: wait() blocks (politely) until it is done. `op` names it as torch's
    messages do (send, recv, barrier, allreduce, broadcast). `result` is what result() and the
    future's value give once done (the output tensors)."""

    def __init__(self, requests: list, op: str, what: str, on_done: Any = None,
                 collective: bool = False, peer: int | None = None, tag: int = 0,
                 nbytes: int = 0, result: list | None = None) -> None:
        self._requests = requests
        self._op = op
        self._what = what
        self._on_done = on_done
        self._done = False
        self._collective = collective
        self._peer = peer
        self._tag = tag
        self._nbytes = nbytes
        self._result = [] if result is None else result
        self._future: Any = None
        self._statuses: list | None = None  # filled when done, for a receive from any rank
        self._keep: Any = None  # buffers MPI reads or writes until the operation completes
        self._source: int | None = peer  # a receive's sender, once done

    def wait(self, timeout: Any = None) -> bool:
        if not self._done:
            _wait_all(self, None if timeout is None else seconds_of(timeout))
            self._done = True
            if self._on_done is not None:
                self._on_done()
                self._on_done = None
            self._requests = []
            self._keep = None
            if self._future is not None and not self._future.done():
                self._future.set_result(self._result)
        return True

    def is_completed(self) -> bool:
        if self._done:
            return True
        if _test(self):
            self.wait()
        return self._done

    def is_success(self) -> bool:
        return self._done

    def exception(self) -> None:
        return None

    def result(self) -> list:
        self.wait()
        return self._result

    def get_future(self) -> Any:
        """A Future completed with result() when this work is (waiting on it waits here)."""
        from retrograd.futures import Future

        if self._future is None:
            fut: Future = Future()
            fut._wait_hook = self.wait
            self._future = fut
            if self._done:
                fut.set_result(self._result)
        return self._future


def _buffer(t: Tensor, writable: bool = False) -> np.ndarray:
    arr = t._data
    if not arr.flags.c_contiguous or (writable and not arr.flags.writeable):
        raise RuntimeError("Tensors must be contiguous")
    if arr.dtype.kind == "V":  # bfloat16 / float8: send the raw bytes
        return arr.view(np.uint8)
    return arr


def _peer(group: Any, rank: int | None, group_rank: int | None, kind: str,
          required: bool) -> int | None:
    """The global rank of a point-to-point peer given as `rank` (global) or `group_rank` (on
    `group`), as torch's _canonicalize_group_rank; None: any source (receives only)."""
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if group_rank is not None:
        pg = _member(group)
        rank = group_rank if pg is None else pg.global_rank(group_rank)
    if rank is None and required:
        raise ValueError("Must specify global_rank or group_rank")
    if rank is not None and rank == _require().rank:
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank "
                         "of the current process.")
    return rank


def isend(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
          group_dst: int | None = None) -> Work:
    g = _require()
    dst = _peer(group, dst, group_dst, "destination", required=True)
    assert dst is not None
    buf = _buffer(tensor)
    req = g.comm.Isend(buf, dest=dst, tag=tag)
    g.sent[dst] += 1
    work = Work([req], "send", f"to rank {dst}, tag {tag}", peer=dst, tag=tag)
    work._keep = buf
    return track(work)


def irecv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
          group_src: int | None = None) -> Work:
    from mpi4py import MPI

    g = _require()
    src = _peer(group, src, group_src, "source", required=False)
    source = MPI.ANY_SOURCE if src is None else src
    buf = _buffer(tensor, writable=True)
    req = g.comm.Irecv(buf, source=source, tag=tag)
    work = Work([req], "recv", f"from rank {'any' if src is None else src}, tag {tag}",
                peer=src, tag=tag, nbytes=buf.nbytes)

    def received() -> None:
        statuses = work._statuses
        work._source = src if statuses is None else statuses[0].Get_source()
        g.received[work._source] += 1
        _bump(tensor)

    work._on_done = received
    if src is None:
        work._statuses = [MPI.Status()]
    return track(work)


def _bump(t: Tensor) -> None:
    if t._version_counter is not None:
        t._version_counter.version += 1


def send(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    isend(tensor, dst, group, tag, group_dst).wait()


def recv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into `tensor`; the sender's rank (the one that sent, for any source)."""
    work = irecv(tensor, src, group, tag, group_src)
    work.wait()
    assert work._source is not None
    return work._source


class P2POp:
    """A point-to-point op for batch_isend_irecv: P2POp(isend, tensor, peer)."""

    def __init__(self, op: Any, tensor: Tensor, peer: int | None = None, group: Any = None,
                 tag: int = 0, group_peer: int | None = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed."
                             "isend`` or ``torch.distributed.irecv``.")
        self.op = op
        self.tensor = tensor
        self.peer = peer
        self.group_peer = group_peer
        self.group = group
        self.tag = tag


def batch_isend_irecv(p2p_op_list: list) -> list:
    if not p2p_op_list:
        raise ValueError("expecting a list of P2POp")
    return [op.op(op.tensor, op.peer, op.group, op.tag, op.group_peer) for op in p2p_op_list]
