"""Run PyTorch's test files in one process per test, forked from a parent that imported them once.

    python -m tests.conformance.worker --backend retrograd --tests-dir DIR [--only ID ...]

Prints one JSON object per test: {"id", "status", "reason", "seconds"}. Status is one of pass,
fail, error, skip, xfail, xpass, timeout, crash. A fork per test isolates global state (grad mode,
default dtype, hooks a failing test left behind), survives crashes and hangs, and costs
milliseconds, where a fresh interpreter per test would cost a second of imports.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import select
import signal
import sys
import time
import traceback
import unittest

from tests.conformance import binding

TEST_FILE = "test_autograd.py"


def load_tests(tests_dir: str) -> dict:
    """Import the test file; returns {test id: TestCase class}."""
    sys.path.insert(0, tests_dir)
    os.environ.setdefault("RETROGRAD_PYTORCH_TESTS", tests_dir)
    spec = importlib.util.spec_from_file_location("test_autograd", os.path.join(tests_dir,
                                                                             TEST_FILE))
    module = importlib.util.module_from_spec(spec)
    sys.modules["test_autograd"] = module
    spec.loader.exec_module(module)
    binding.importing = False
    loader = unittest.TestLoader()
    tests = {}
    for name, obj in sorted(vars(module).items()):
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase) and obj.__name__ == name:
            for method in loader.getTestCaseNames(obj):
                tests[f"{name}.{method}"] = obj
    return tests


class _Result(unittest.TestResult):
    """Keeps the outcome of the one test a child runs."""

    def __init__(self) -> None:
        super().__init__()
        self.outcome = ("pass", "")

    def addFailure(self, test, err):
        self.outcome = ("fail", describe(err))

    def addError(self, test, err):
        self.outcome = ("error", describe(err))

    def addSkip(self, test, reason):
        self.outcome = ("skip", str(reason)[:200])

    def addExpectedFailure(self, test, err):
        self.outcome = ("xfail", describe(err))

    def addUnexpectedSuccess(self, test):
        self.outcome = ("xpass", "unexpected success")

    def addSubTest(self, test, subtest, err):
        if err is not None:
            kind = "fail" if issubclass(err[0], test.failureException) else "error"
            self.outcome = (kind, describe(err))


def describe(err) -> str:
    """`Type: first line of message (test_autograd.py:LINE)`, the line being the innermost frame
    of the test file the exception passed through."""
    etype, value, tb = err
    if isinstance(value, binding.MissingAPI):
        return str(value)
    message = str(value).strip().splitlines()[0] if str(value).strip() else ""
    line = ""
    for frame in traceback.extract_tb(tb):
        if os.path.basename(frame.filename) in (TEST_FILE, "test_functional.py", "test_complex.py",
                                                "test_logging.py"):
            line = f" ({os.path.basename(frame.filename)}:{frame.lineno})"
    return f"{etype.__name__}: {message[:240]}{line}"


def _child(cls, method: str, write_fd: int, timeout: float) -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(int(timeout) + 1)
    result = _Result()
    try:
        cls(method).run(result)
        status, reason = result.outcome
    except BaseException as e:  # a test that escapes unittest's own handling
        status, reason = "crash", f"{type(e).__name__}: {e}"[:240]
    os.write(write_fd, json.dumps({"status": status, "reason": reason}).encode() + b"\n")
    os._exit(0)


def run_all(tests: dict, ids: list, jobs: int, timeout: float, out) -> None:
    pending = list(ids)
    running: dict = {}  # pid -> (id, read fd, start)
    while pending or running:
        while pending and len(running) < jobs:
            test_id = pending.pop(0)
            cls = tests[test_id]
            r, w = os.pipe()
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                _child(cls, test_id.split(".", 1)[1], w, timeout)
            os.close(w)
            running[pid] = (test_id, r, time.monotonic(), [])
        fds = {info[1]: pid for pid, info in running.items()}
        readable, _, _ = select.select(list(fds), [], [], 0.2)
        for fd in readable:
            chunk = os.read(fd, 65536)
            info = running[fds[fd]]
            info[3].append(chunk)
            if not chunk:
                _finish(fds[fd], running, out, None)
        now = time.monotonic()
        for pid, (_, _, start, _) in list(running.items()):
            if now - start > timeout:
                os.kill(pid, signal.SIGKILL)
                _finish(pid, running, out, ("timeout", f"over {timeout:.0f} s"))


def _finish(pid: int, running: dict, out, forced) -> None:
    test_id, fd, start, chunks = running.pop(pid)
    os.close(fd)
    _, status_code = os.waitpid(pid, 0)
    if forced is not None:
        status, reason = forced
    else:
        try:
            record = json.loads(b"".join(chunks).decode())
            status, reason = record["status"], record["reason"]
        except ValueError:
            sig = os.WTERMSIG(status_code) if os.WIFSIGNALED(status_code) else None
            status, reason = "crash", (f"killed by signal {sig}" if sig
                                       else f"exit code {os.WEXITSTATUS(status_code)}")
    out.write(json.dumps({"id": test_id, "status": status, "reason": reason,
                          "seconds": round(time.monotonic() - start, 3)}) + "\n")
    out.flush()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=("torch", "retrograd"), required=True)
    parser.add_argument("--tests-dir", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    os.environ["RETROGRAD_CONFORMANCE_BACKEND"] = args.backend
    binding.install(args.backend)
    tests = load_tests(args.tests_dir)
    ids = sorted(tests) if args.only is None else [i for i in args.only if i in tests]
    if args.list:
        for test_id in sorted(tests):
            print(test_id)
        return 0
    run_all(tests, ids, args.jobs, args.timeout, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
