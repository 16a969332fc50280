"""Runs in each process started by retrograd.distributed.run: sets RANK, LOCAL_RANK,
WORLD_SIZE from the MPI launcher's environment, then runs the user's script as __main__.

An exception that leaves the script ends the whole job at once, as torchrun does: the rank
prints its traceback (lines prefixed with `[rank<N>]:`), tells the other ranks (they raise
RankFailure naming it at their next wait), leaves a record for the launcher's summary, gives the
others a moment to print their own message and aborts the MPI world. Without this, MPI keeps the
other ranks waiting for the failed one until the process group's timeout.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import time
import traceback

EXIT_BARRIER_SECONDS = 3.0  # how long a failed rank waits for the others to report
# once every rank has printed: a moment for MPI's output forwarding to deliver the lines
# before the abort tears the job down (on a loaded machine they were lost without it)
OUTPUT_DRAIN_SECONDS = 0.3


def _env_int(*names: str, default: int = 0) -> int:
    for n in names:
        if n in os.environ:
            return int(os.environ[n])
    return default


def _record(name: str, content: dict) -> None:
    """Leave a file for the launcher (written whole, then renamed, so it is never half read)."""
    run_dir = os.environ.get("RETROGRAD_RUN_DIR")
    if run_dir is None:
        return
    path = os.path.join(run_dir, name)
    with open(path + ".tmp", "w") as f:
        json.dump(content, f)
    os.replace(path + ".tmp", path)


def _print_failure(rank: int, exc: BaseException) -> None:
    tb = exc.__traceback__
    # start at the user's script: the frames of this module and runpy say nothing to the user
    while tb is not None and tb.tb_next is not None and (
            tb.tb_frame.f_code.co_filename in (__file__, runpy.__file__)
            or tb.tb_frame.f_code.co_filename.startswith("<frozen")):
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(exc), exc, tb))
    lines = text.rstrip("\n").split("\n")
    sys.stderr.write("".join(f"[rank{rank}]: {line}\n" for line in lines))
    sys.stderr.flush()


def _fail(rank: int, exc: BaseException, code: int) -> None:
    """This rank ends with an error: report it, tell the others, abort the job."""
    from retrograd import distributed as dist
    from retrograd.distributed._failure import RankFailure

    sys.stdout.flush()
    _print_failure(rank, exc)
    failed_rank = exc.failed_rank if isinstance(exc, RankFailure) else rank
    _record(f"error-{rank}.json", {
        "rank": rank, "pid": os.getpid(), "time": time.time(), "failed_rank": failed_rank,
        "error": f"{type(exc).__name__}: {exc}"})
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or not mpi.Is_initialized() or mpi.Is_finalized():
        os._exit(code)  # MPI never started here: nothing to abort
    notices = dist._group.notices
    if notices is not None:
        if not isinstance(exc, RankFailure):
            notices.notify(f"{type(exc).__name__}: {exc}")
        notices.exit_barrier(EXIT_BARRIER_SECONDS)
    sys.stderr.flush()
    time.sleep(OUTPUT_DRAIN_SECONDS)
    mpi.COMM_WORLD.Abort(code)


def main() -> None:
    rank = _env_int("PMI_RANK", "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID")
    size = _env_int("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "WORLD_SIZE", default=1)
    local = _env_int("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", default=rank)
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(size))
    _record(f"pid-{rank}.json", {"rank": rank, "pid": os.getpid(), "ppid": os.getppid()})
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code != 0 and _group_alive():
            # leaving while the others may still wait for this rank is a failure
            _fail(rank, RuntimeError(f"exited with code {code}"), code)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except BaseException as e:  # noqa: BLE001 - every way out of the script ends the job
        _fail(rank, e, 1)
    _record(f"exit-{rank}.json", {"rank": rank, "code": code})
    sys.exit(code)


def _group_alive() -> bool:
    from retrograd import distributed as dist

    return dist.is_initialized()


if __name__ == "__main__":
    main()
