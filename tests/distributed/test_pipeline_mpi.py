"""Pipeline training across 4 MPI processes, and a failing rank stopping all of them."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "scripts" / "pipeline_script.py"

pytestmark = pytest.mark.skipif(
    not ((Path(sys.executable).parent / "mpiexec").exists() or shutil.which("mpiexec")),
    reason="no mpiexec")


def launch(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node",
                           "4", str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


@pytest.mark.parametrize("schedule,stages_of_rank0", [("gpipe", "[0]"), ("1f1b", "[0]"),
                                                      ("zbh1", "[0]"), ("zbv", "[0, 7]")])
def test_four_ranks_match_single_process_bitwise(schedule, stages_of_rank0):
    out = launch(schedule)
    assert out.returncode == 0, out.stdout + out.stderr
    # ranks print concurrently, so lines may run together: count, don't split
    assert out.stdout.count(f"ok {schedule} stages") == 4
    assert f"rank 0 ok {schedule} stages {stages_of_rank0}" in out.stdout


def test_failing_rank_stops_every_rank_with_its_name_and_action():
    start = time.monotonic()
    out = launch("1f1b", "fail", timeout=120)
    elapsed = time.monotonic() - start
    assert out.returncode != 0
    text = out.stdout
    assert "rank 2 stopped: ActionFailed: rank 2 failed at action 2F3: ValueError: injected " \
           "failure" in text
    for r in (0, 1, 3):
        assert f"rank {r} stopped: RankFailure: rank 2 failed: rank 2 failed at action 2F3" \
            in text, text
    assert elapsed < 60
