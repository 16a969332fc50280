"""Failure notices between ranks, on a communicator of their own.

The process group duplicates COMM_WORLD for control messages, so a failure notice never meets a
user message and every tag stays free for the user. The first rank that fails sends a notice to
every other rank (at most once per process); a rank that is waiting notices it and raises
RankFailure naming the rank that failed first.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

NOTICE_TAG = 1
NOTICE_BYTES = 1024


class RankFailure(RuntimeError):
    """Another rank failed; raised on every rank that was waiting for it. `failed_rank` names
    the rank that failed first."""

    __module__ = "retrograd.distributed"

    def __init__(self, message: str, failed_rank: int = -1) -> None:
        super().__init__(message)
        self.failed_rank = failed_rank


class Notices:
    """The control communicator of one process group and its standing receive."""

    def __init__(self, comm: Any) -> None:
        from mpi4py import MPI

        self.ctrl = comm.Dup()
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.buf = np.zeros(NOTICE_BYTES, np.uint8)
        self.req = self.ctrl.Irecv(self.buf, source=MPI.ANY_SOURCE, tag=NOTICE_TAG)
        self.sends: list = []
        self.notified = False
        self.sent_msg: np.ndarray | None = None  # alive while the sends are in flight
        self.failure: RankFailure | None = None

    def notify(self, reason: str, failed_rank: int | None = None) -> bool:
        """Tell every other rank that `failed_rank` (this one by default) failed. Only the first
        notice of a process is sent; returns whether this one was."""
        if self.notified or self.failure is not None:
            return False
        self.notified = True
        failed = self.rank if failed_rank is None else failed_rank
        msg = np.zeros(NOTICE_BYTES, np.uint8)
        msg[:4] = np.array([failed], np.int32).view(np.uint8)
        text = reason.encode()[:NOTICE_BYTES - 4]
        msg[4:4 + len(text)] = np.frombuffer(text, np.uint8)
        self.sent_msg = msg
        self.sends = [self.ctrl.Isend(msg, dest=peer, tag=NOTICE_TAG)
                      for peer in range(self.size) if peer != self.rank]
        return True

    def check(self) -> None:
        """Raise RankFailure if another rank told this one that it failed."""
        if self.failure is not None:
            raise self.failure
        if self.req is not None and self.req.Test():
            self.req = None
            failed = int(self.buf[:4].view(np.int32)[0])
            reason = bytes(self.buf[4:]).rstrip(b"\0").decode(errors="replace")
            self.failure = RankFailure(
                f"rank {failed} failed: {reason} (rank {self.rank} stops)", failed)
            raise self.failure

    def close(self, wait_sends: float = 2.0) -> None:
        """Withdraw the standing receive, let the notices go out, free the communicator, so
        nothing is left pending when MPI finalizes."""
        from mpi4py import MPI

        if self.req is not None:
            if not self.req.Test():
                self.req.Cancel()
                self.req.Wait()
            self.req = None
        if self.sends:
            deadline = time.monotonic() + wait_sends
            while not MPI.Request.Testall(self.sends) and time.monotonic() < deadline:
                time.sleep(1e-3)
            for req in self.sends:
                if req != MPI.REQUEST_NULL:
                    req.Free()  # the peer is gone; the send must not hold MPI at exit
            self.sends = []
        if self.ctrl != MPI.COMM_NULL:
            self.ctrl.Free()

    def exit_barrier(self, seconds: float) -> None:
        """Wait (at most `seconds`) until every rank has reached this point; ranks that fail
        meet here so each can print its message before the job is aborted."""
        req = self.ctrl.Ibarrier()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if req.Test():
                return
            time.sleep(1e-3)

