"""Noticing at once that a DataLoader worker died: a SIGCHLD handler in the main process looks
at the workers of the live iterators and raises when one was killed by a signal or exited with
an error code, so a loader waiting for its batch fails instead of hanging (torch installs the
same handler). The status is read without reaping the child (WNOWAIT), so the Process object
still gets its exit code.
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
from typing import Any

# id(iterator) -> the pids of its workers
_worker_pids: dict[int, tuple[int, ...]] = {}
_SIGCHLD_handler_set = False
# set when the interpreter shuts down: multiprocessing then stops the daemonic workers itself,
# and the queues may be gone
python_exiting = False


def _set_python_exit_flag() -> None:
    global python_exiting
    python_exiting = True


atexit.register(_set_python_exit_flag)


def _set_worker_pids(key: int, pids: tuple[int, ...]) -> None:
    if key in _worker_pids:
        raise RuntimeError("_set_worker_pids should be called only once for each "
                           "_BaseDataLoaderIter.")
    _worker_pids[key] = pids


def _remove_worker_pids(key: int) -> None:
    if _worker_pids.pop(key, None) is None:
        raise RuntimeError("Cannot find worker information for _BaseDataLoaderIter with id "
                           f"{key}")


def _error_if_any_worker_fails() -> None:
    if python_exiting:
        return
    for pids in list(_worker_pids.values()):
        for pid in pids:
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                continue  # reaped already
            if info is None:
                continue  # still running
            if info.si_code == os.CLD_EXITED and info.si_status != 0:
                raise RuntimeError(
                    f"DataLoader worker (pid {pid}) exited unexpectedly with exit code "
                    f"{info.si_status}. Details are lost due to multiprocessing. Rerunning with "
                    "num_workers=0 may give better error trace.")
            if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
                msg = (f"DataLoader worker (pid {pid}) is killed by signal: "
                       f"{signal.strsignal(info.si_status)}. ")
                if info.si_status == signal.SIGBUS:
                    msg += ("It is possible that dataloader's workers are out of shared memory. "
                            "Please try to raise your shared memory limit.")
                raise RuntimeError(msg)


def _set_SIGCHLD_handler() -> None:
    global _SIGCHLD_handler_set
    if _SIGCHLD_handler_set or not hasattr(signal, "SIGCHLD") or not hasattr(os, "waitid"):
        return
    if threading.current_thread() is not threading.main_thread():
        return  # handlers can only be installed from the main thread
    previous = signal.getsignal(signal.SIGCHLD)
    previous_handler = previous if callable(previous) else None

    def handler(signum: int, frame: Any) -> None:
        _error_if_any_worker_fails()
        if previous_handler is not None:
            previous_handler(signum, frame)

    signal.signal(signal.SIGCHLD, handler)
    _SIGCHLD_handler_set = True
