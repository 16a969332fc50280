"""Object and tensor point-to-point messages, group ranks, backend names and monitored_barrier
across 2 and 3 ranks under the launcher (scripts/p2p_objects_script.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "scripts" / "p2p_objects_script.py"

pytestmark = pytest.mark.skipif(
    not ((Path(sys.executable).parent / "mpiexec").exists() or shutil.which("mpiexec")),
    reason="no mpiexec")


def launch(n: int, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node",
                           str(n), str(SCRIPT), mode], capture_output=True, text=True,
                          timeout=180, cwd=ROOT)


@pytest.mark.parametrize("n", [2, 3])
def test_point_to_point_objects_and_backend_names(n):
    out = launch(n, "ok")
    assert out.returncode == 0, out.stdout + out.stderr
    for r in range(n):
        assert f"rank {r} p2p ok" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("mode, message", [
    ("late", "[Rank 0]: Rank 2 failed to pass monitoredBarrier in 2000 ms"),
    ("late_all", "[Rank 0]: Ranks 2 failed to pass monitoredBarrier in 2000 ms"),
])
def test_monitored_barrier_names_the_late_rank(mode, message):
    out = launch(3, mode)
    text = out.stdout + out.stderr
    assert out.returncode != 0, text
    assert message in text, text
    assert "rank 0 passed" not in text
