"""Run the conformance suite and keep its tracked list (NOTE [Conformance runner]).

NOTE [Conformance runner]
PyTorch's autograd test files (v2.6.0: test_autograd.py and the three files it imports) run
unmodified with `torch` bound to retrograd (binding.py) and `torch.testing._internal` served by
our stand-in (compat/). Each test runs in its own forked process with a timeout (worker.py).
Real torch 2.13 under the same stand-in is the control: a test counts only where it passes there.
`status.tsv` is the tracked list: every test's status on retrograd, with the reason for each
one that does not pass --
  pass        passes on retrograd (a test listed so that fails is a regression: CI fails)
  todo        applicable and failing: the reason is the failure
  scope       out of scope for a CPU NumPy library (sparse, complex, CUDA, TorchScript, ...)
  deliberate  retrograd differs on purpose (the reason says how, and why it is better)
  uncounted   fails (or skips) on torch 2.13 under the same stand-in: not a measure of retrograd
The categories other than pass/todo/uncounted come from classify.py's rules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conformance import classify

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
STATUS_FILE = HERE / "status.tsv"
HOW_TO_GET = (
    "PyTorch's autograd test files were not found. Set RETROGRAD_PYTORCH_TESTS to a directory "
    "holding PyTorch v2.6.0's test/test_autograd.py with its test/autograd/ and test/expect/ "
    "folders (from PyTorch's v2.6.0 source release, e.g. pytorch_2.6.0.orig.tar.xz), or place "
    "them in ../shared/pytorch-tests beside the repository.")


def tests_dir() -> Path | None:
    """Where PyTorch's test files are, or None."""
    given = os.environ.get("RETROGRAD_PYTORCH_TESTS")
    candidates = [Path(given)] if given else [REPO.parent / "shared" / "pytorch-tests"]
    for path in candidates:
        if (path / "test_autograd.py").is_file():
            return path
    return None


def run_backend(backend: str, directory: Path, only: list | None = None, jobs: int = 2,
                timeout: float = 60.0) -> dict:
    """{test id: {"status", "reason", "seconds"}} for one backend, run in a fresh interpreter."""
    cmd = [sys.executable, "-m", "tests.conformance.worker", "--backend", backend,
           "--tests-dir", str(directory), "--jobs", str(jobs), "--timeout", str(timeout)]
    if only is not None:
        cmd += ["--only", *only]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"conformance worker failed ({backend}):\n{done.stderr[-4000:]}")
    results = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            results[record.pop("id")] = record
    return results


def read_status(path: Path = STATUS_FILE) -> dict:
    """{test id: (status, reason)} from the tracked list."""
    out = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        status, test_id, reason = (line.split("\t") + [""])[:3]
        out[test_id] = (status, reason)
    return out


def write_status(entries: dict, path: Path = STATUS_FILE) -> None:
    counts = score(entries)
    lines = [
        "# PyTorch v2.6.0 autograd tests on retrograd, against torch 2.13 under the same runner.",
        "# Written by `python -m tests.conformance --update`; see NOTE [Conformance runner].",
        f"# counted {counts['counted']}: pass {counts['pass']}, todo {counts['todo']}, "
        f"scope {counts['scope']}, deliberate {counts['deliberate']}; "
        f"uncounted {counts['uncounted']}",
        "# status\ttest\treason",
    ]
    for test_id in sorted(entries):
        status, reason = entries[test_id]
        lines.append(f"{status}\t{test_id}\t{reason}".rstrip())
    path.write_text("\n".join(lines) + "\n")


def score(entries: dict) -> dict:
    counts = dict.fromkeys(("pass", "todo", "scope", "deliberate", "uncounted"), 0)
    for status, _ in entries.values():
        counts[status] += 1
    counts["counted"] = sum(v for k, v in counts.items() if k != "uncounted")
    return counts


def control_from(tracked: dict) -> dict:
    """The control run as the tracked list recorded it: every counted test passed on torch."""
    control = {}
    for test_id, (status, reason) in tracked.items():
        if status == "uncounted":
            why = reason.removeprefix("on torch 2.13: ")
            kind, _, detail = why.partition(": ")
            control[test_id] = {"status": kind if kind != "not collected" else "crash",
                                "reason": detail}
        else:
            control[test_id] = {"status": "pass", "reason": ""}
    return control


def classify_all(control: dict, ours: dict) -> dict:
    """The tracked list from a control run and a retrograd run."""
    entries = {}
    for test_id in sorted(set(control) | set(ours)):
        theirs = control.get(test_id)
        mine = ours.get(test_id, {"status": "crash", "reason": "not collected"})
        if theirs is None or theirs["status"] not in ("pass", "xfail"):
            why = "not collected" if theirs is None else f"{theirs['status']}: {theirs['reason']}"
            entries[test_id] = ("uncounted", f"on torch 2.13: {why}")
        elif mine["status"] == theirs["status"]:
            entries[test_id] = ("pass", "")
        else:
            entries[test_id] = classify.classify(test_id, f"{mine['status']}: {mine['reason']}")
    return entries


def regressions(tracked: dict, ours: dict) -> list:
    """Tests the tracked list says pass that now do not."""
    bad = []
    for test_id, (status, _) in tracked.items():
        if status != "pass":
            continue
        mine = ours.get(test_id)
        if mine is None or mine["status"] not in ("pass", "xfail"):
            why = "not collected" if mine is None else f"{mine['status']}: {mine['reason']}"
            bad.append(f"{test_id}: {why}")
    return bad


def newly_passing(tracked: dict, ours: dict) -> list:
    return sorted(t for t, (status, _) in tracked.items()
                  if status not in ("pass", "uncounted")
                  and ours.get(t, {}).get("status") in ("pass", "xfail"))
