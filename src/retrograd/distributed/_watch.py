"""The launcher's view of its ranks, from the records they leave in the run directory.

Each rank writes `pid-<rank>.json` when it starts, `exit-<rank>.json` when its script ends, and
`error-<rank>.json` when it fails (see _bootstrap.py). A rank whose process ends with neither
record died without a word (SIGKILL, a crash). MPICH then kills the other ranks within moments,
so the watch waits on a pidfd per rank (Linux): it wakes as the first rank dies, before the
others are taken down with it, and can name it.
"""

from __future__ import annotations

import json
import os
import select
import time

_HAS_PIDFD = hasattr(os, "pidfd_open") and hasattr(select, "poll")


class JobWatch:
    def __init__(self, run_dir: str, nranks: int) -> None:
        self.run_dir = run_dir
        self.nranks = nranks
        self.pids: dict[int, int] = {}
        self.proxies: set[int] = set()  # the MPI proxies that started the ranks
        self.fds: dict[int, int] = {}  # pidfd -> rank
        self.poller = select.poll() if _HAS_PIDFD else None
        self.ended: set[int] = set()
        self.died: dict[int, dict] = {}  # ranks gone without a record (the first to go)
        self.bad_exit: dict[int, dict] = {}  # ranks whose script ended with a nonzero code

    def _read(self, name: str) -> dict | None:
        try:
            with open(os.path.join(self.run_dir, name)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def errors(self) -> list[dict]:
        found = [self._read(f"error-{r}.json") for r in range(self.nranks)]
        return [e for e in found if e is not None]

    def wait(self, seconds: float) -> None:
        """Sleep up to `seconds`, waking as soon as a rank ends; take note of the ranks that
        ended."""
        self._find_new()
        if self.poller is None:
            time.sleep(seconds)
            self._ended([r for r, pid in self.pids.items()
                         if r not in self.ended and not _alive(pid)])
            return
        ready = self.poller.poll(seconds * 1000)
        self._ended([self.fds[fd] for fd, _ in ready])

    def _find_new(self) -> None:
        gone = []
        for r in range(self.nranks):
            if r in self.pids:
                continue
            rec = self._read(f"pid-{r}.json")
            if rec is None:
                continue
            pid = self.pids[r] = int(rec["pid"])
            self.proxies.add(int(rec.get("ppid", 0)))
            if self.poller is None:
                continue
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                gone.append(r)
                continue
            self.fds[fd] = r
            self.poller.register(fd, select.POLLIN)
        self._ended(gone)

    def _ended(self, ranks: list[int]) -> None:
        """Ranks that ended together: those without a record died, unless another rank's error
        explains why the job was taken down."""
        silent = []
        for r in sorted(set(ranks) - self.ended):
            self.ended.add(r)
            for fd, rank in list(self.fds.items()):
                if rank == r:
                    self.poller.unregister(fd)
                    os.close(fd)
                    del self.fds[fd]
            rec = self._read(f"exit-{r}.json")
            if rec is not None:
                if rec["code"] != 0:
                    self.bad_exit[r] = {"rank": r, "pid": self.pids[r], "time": time.time(),
                                        "error": f"exited with code {rec['code']}"}
            elif self._read(f"error-{r}.json") is None:
                silent.append(r)
        if silent and not self.died and not self.errors():
            for r in silent:
                self.died[r] = {"rank": r, "pid": self.pids[r], "time": time.time(),
                                "error": f"process {self.pids[r]} died without an error "
                                         "(killed by a signal?)"}

    def failed(self) -> bool:
        return bool(self.died or self.bad_exit or self.errors())

    def root_cause(self) -> dict | None:
        """The first failure: a rank's own error before one it only heard of."""
        errors = self.errors()
        own = [e for e in errors if e["failed_rank"] == e["rank"]]
        candidates = own + list(self.died.values()) + list(self.bad_exit.values())
        if candidates:
            return min(candidates, key=lambda e: (e["time"], e["rank"]))
        if errors:
            first = min(errors, key=lambda e: e["time"])
            return {"rank": first["failed_rank"], "pid": "?", "error": first["error"]}
        return None

    def summary(self, script: str) -> str:
        line = "=" * 60
        out = [line, f"{script} FAILED", "-" * 60]
        root = self.root_cause()
        if root is None:
            out.append("no rank reported an error (see the output above)")
        else:
            out += ["Root Cause (first observed failure):",
                    f"  rank      : {root['rank']}",
                    f"  pid       : {root['pid']}",
                    f"  error     : {root['error']}"]
        return "\n".join(out + [line]) + "\n"

    def any_alive(self) -> bool:
        self._find_new()
        return any(_alive(pid) for pid in self.pids.values())

    def kill_all(self, signum: int, proxies: bool = False) -> None:
        """Send `signum` to every rank still running, and to their MPI proxies if asked (only
        processes that still are what they were: a pid may have been reused)."""
        self._find_new()
        targets = [(pid, b"retrograd.distributed._bootstrap") for pid in self.pids.values()]
        if proxies:
            targets += [(pid, b"hydra_pmi_proxy") for pid in self.proxies if pid > 1]
        for pid, marker in targets:
            if _alive(pid) and _runs(pid, marker):
                try:
                    os.kill(pid, signum)
                except ProcessLookupError:
                    pass

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc here
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True
    return state not in ("Z", "X")  # a zombie has ended; its proxy reaps it soon


def _runs(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return marker in f.read()
    except FileNotFoundError:
        return False
    except OSError:
        return True
