"""monitored_barrier: a barrier that names the ranks that did not reach it.

Every other rank tells the group's first rank that it arrived and waits for its answer; the
first rank waits for each arrival until `timeout` (the group's when None) and raises naming the
first late rank (or, with wait_all_ranks, all of them), as torch's gloo backend does. Its error
stops the job (retrograd.distributed.run turns an uncaught exception into an abort), and the
ranks waiting for its answer then raise torch's "check rank 0" message. The messages use tags
of their own, above the ones programs use."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from retrograd.distributed._core import _member, _require, irecv, isend, seconds_of

ARRIVED, RELEASED = 32_700, 32_701  # MPI guarantees tags up to 32767


def monitored_barrier(group: Any = None, timeout: Any = None,
                      wait_all_ranks: bool = False) -> None:
    from retrograd import tensor

    pg = _member(group)
    if pg is None:
        return
    me, first = pg.rank(), pg.global_rank(0)
    flag = tensor(np.array([me], np.int64))
    if me != 0:
        try:
            isend(flag, first, tag=ARRIVED).wait()
            irecv(flag, first, tag=RELEASED).wait()
        except RuntimeError as e:
            raise RuntimeError(
                f"Rank {me} successfully reached monitoredBarrier, but received errors while "
                "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank."
                f"\n Original exception: \n{e}") from e
        return
    seconds = _require().timeout if timeout is None else seconds_of(timeout)
    ms = round(seconds * 1000)
    start = time.monotonic()
    late = []
    arrivals = [(r, irecv(tensor(np.zeros(1, np.int64)), pg.global_rank(r), tag=ARRIVED))
                for r in range(1, pg.size())]
    for r, work in arrivals:
        # with wait_all_ranks each rank gets the whole timeout, as torch's
        left = seconds if wait_all_ranks else max(seconds - (time.monotonic() - start), 0.0)
        try:
            work.wait(left)
        except RuntimeError as e:
            if not wait_all_ranks:
                raise RuntimeError(f"[Rank 0]: Rank {r} failed to pass monitoredBarrier in "
                                   f"{ms} ms\n Original exception: \n{e}") from e
            late.append(r)
    if late:
        raise RuntimeError(f"[Rank 0]: Ranks {', '.join(map(str, late))} failed to pass "
                           f"monitoredBarrier in {ms} ms")
    for r in range(1, pg.size()):
        isend(flag, pg.global_rank(r), tag=RELEASED).wait()
