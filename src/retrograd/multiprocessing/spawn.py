"""spawn / start_processes: run fn(i, *args) in nprocs new processes and report the first one
that fails, with the child's traceback (an exception) or its exit code or signal."""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from retrograd import _warning_site as _ws

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "spawn", "SpawnContext", "start_processes"]

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"
_PR_SET_PDEATHSIG = 1


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """Exception raised when a process failed due to an exception raised by the code."""


class ProcessExitedException(ProcessException):
    """Exception raised when a process failed due to signal or exited with a specific code."""

    __slots__ = ["exit_code"]

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _die_with_parent() -> None:
    # Linux only: a non-daemonic child gets SIGINT when its parent dies, so it does not outlive
    # it; elsewhere there is no such call and nothing is done
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGINT)
    except (OSError, AttributeError):
        pass


def _run(fn: Callable, i: int, args: tuple, error_file: str) -> None:
    """A child's entry point: the traceback of an exception goes to error_file for the
    parent to raise, and the child exits with 1."""
    _die_with_parent()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped it (SIGINT)
    except Exception:
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes: list, error_files: list) -> None:
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait (at most timeout seconds) for the processes to end. True once all have ended
        successfully, False while some still run. When one fails, the others get grace_period
        seconds to stop, then SIGTERM, then SIGKILL, and the failure is raised: a
        ProcessRaisedException with the child's traceback, or a ProcessExitedException."""
        if not self.sentinels:
            return True
        failed = None
        for sentinel in multiprocessing.connection.wait(list(self.sentinels), timeout=timeout):
            index = self.sentinels.pop(sentinel)  # type: ignore[call-overload]
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        self._stop_the_rest(grace_period)
        self._raise_failure(failed)
        return False  # not reached: _raise_failure raises

    def _stop_the_rest(self, grace_period: float | None) -> None:
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join()

    def _raise_failure(self, index: int) -> None:
        process = self.processes[index]
        if not os.access(self.error_files[index], os.R_OK):
            # no traceback written: the child exited on its own or was killed
            code = process.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(
                    f"process {index:d} terminated with signal {name}", error_index=index,
                    error_pid=process.pid, exit_code=code, signal_name=name)
            raise ProcessExitedException(
                f"process {index:d} terminated with exit code {code:d}", error_index=index,
                error_pid=process.pid, exit_code=code)
        with open(self.error_files[index], "rb") as fh:
            trace = pickle.load(fh)
        msg = f"\n\n-- Process {index:d} terminated with the following error:\n" + trace
        raise ProcessRaisedException(msg, index, process.pid)


class SpawnContext(ProcessContext):
    def __init__(self, processes: list, error_files: list) -> None:
        _ws.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                 stacklevel=2)
        super().__init__(processes, error_files)


def _error_file() -> str:
    """A fresh path for a child's traceback: it exists only once the child wrote one."""
    fh = tempfile.NamedTemporaryFile(prefix="retrograd-errorfile-", suffix=".pickle",
                                     delete=False)
    fh.close()
    os.unlink(fh.name)
    return fh.name


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn") -> ProcessContext | None:
    ctx: Any = multiprocessing.get_context(start_method)

    def start(i: int) -> tuple:
        error_file = _error_file()
        p = ctx.Process(target=_run, args=(fn, i, args, error_file), daemon=daemon)
        p.start()
        return p, error_file

    # forkserver can start processes from several threads at once, when asked to
    if start_method == "forkserver" and os.environ.get(ENV_VAR_PARALLEL_START, "0") == "1":
        with ThreadPoolExecutor(max_workers=nprocs) as pool:
            started = list(pool.map(start, range(nprocs)))
    else:
        started = [start(i) for i in range(nprocs)]
    context = ProcessContext([p for p, _ in started], [f for _, f in started])
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True,
          daemon: bool = False, start_method: str = "spawn") -> ProcessContext | None:
    """Start nprocs processes running fn(i, *args) with the "spawn" start method; with join,
    wait for them (raising the first failure), else return their ProcessContext."""
    if start_method != "spawn":
        _ws.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
