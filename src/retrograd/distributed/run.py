"""Launcher: `python -m retrograd.distributed.run --nproc-per-node N script.py [args]`.

Starts N processes with the venv's `mpiexec` and sets RANK, LOCAL_RANK and WORLD_SIZE in each,
as torchrun does. While the job runs, the launcher watches its ranks (each records its pid in a
run directory, see _bootstrap.py):

- when a rank fails, the job is ended if it does not end by itself within a few seconds;
- SIGTERM, SIGHUP or SIGINT to the launcher is forwarded to mpiexec and every rank, and all of
  them are reaped (killed after a grace period) before the launcher exits;
- when the job fails, a summary names the rank that failed first (the root cause).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from retrograd.distributed._watch import JobWatch

POLL = 0.05  # seconds between looks at the ranks
KILL_GRACE = 3.0  # seconds a job may take to end by itself once a rank has failed
SIGNAL_GRACE = 5.0  # seconds ranks have to exit after a forwarded signal before SIGKILL
FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def find_mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec")
    if found is None:
        sys.exit("mpiexec not found: pip install mpi4py mpich")
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m retrograd.distributed.run")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1)
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    run_dir = tempfile.mkdtemp(prefix="retrograd-run-")
    cmd = [find_mpiexec(), "-n", str(args.nproc_per_node),
           sys.executable, "-m", "retrograd.distributed._bootstrap", args.script, *args.args]
    env = dict(os.environ, WORLD_SIZE=str(args.nproc_per_node), RETROGRAD_RUN_DIR=run_dir)
    received: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        received.append(signum)

    previous = {s: signal.signal(s, on_signal) for s in FORWARDED}
    try:
        # its own session: a signal meant for the launcher reaches mpiexec only through it, and
        # mpiexec with its proxies can be killed as one process group
        proc = subprocess.Popen(cmd, env=env, start_new_session=True)
        watch = JobWatch(run_dir, args.nproc_per_node)
        try:
            return _supervise(proc, watch, received, args.script)
        finally:
            watch.close()
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        shutil.rmtree(run_dir, ignore_errors=True)


def _supervise(proc: subprocess.Popen, watch: JobWatch, received: list, script: str) -> int:
    failed_at: float | None = None
    code: int | None = None
    while code is None:
        watch.wait(POLL)
        code = proc.poll()
        if received:
            return _stop(proc, watch, received[0])
        if failed_at is None and watch.failed():
            failed_at = time.monotonic()
        if code is None and failed_at is not None and time.monotonic() - failed_at > KILL_GRACE:
            watch.kill_all(signal.SIGKILL)
            _killpg(proc, signal.SIGKILL)
            code = _wait(proc, SIGNAL_GRACE)
    watch.wait(0)
    watch.kill_all(signal.SIGKILL, proxies=True)  # nothing may outlive its job
    _killpg(proc, signal.SIGKILL)
    if code != 0 or watch.root_cause() is not None:
        sys.stderr.write(watch.summary(script))
        sys.stderr.flush()
    return code if code != 0 or watch.root_cause() is None else 1


def _stop(proc: subprocess.Popen, watch: JobWatch, signum: int) -> int:
    """Forward the signal to mpiexec and every rank; SIGKILL what is left after a grace."""
    _signal(proc, signum)
    watch.kill_all(signum)
    deadline = time.monotonic() + SIGNAL_GRACE
    while time.monotonic() < deadline and (proc.poll() is None or watch.any_alive()):
        time.sleep(POLL)
    watch.kill_all(signal.SIGKILL, proxies=True)
    _killpg(proc, signal.SIGKILL)
    _wait(proc, SIGNAL_GRACE)
    return 128 + signum


def _wait(proc: subprocess.Popen, seconds: float) -> int | None:
    try:
        return proc.wait(seconds)
    except subprocess.TimeoutExpired:
        return None


def _signal(proc: subprocess.Popen, signum: int) -> None:
    try:
        proc.send_signal(signum)
    except ProcessLookupError:
        pass


def _killpg(proc: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    sys.exit(main())
