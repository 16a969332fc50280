"""ZeroRedundancyOptimizer under the launcher (2 ranks): see scripts/zero_script.py."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "scripts" / "zero_script.py"

pytestmark = pytest.mark.skipif(
    not ((Path(sys.executable).parent / "mpiexec").exists() or shutil.which("mpiexec")),
    reason="no mpiexec")


def test_zero_follows_plain_adam_with_sharded_state():
    out = subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node",
                          "2", str(SCRIPT)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "rank 0 zero ok" in out.stdout and "rank 1 zero ok" in out.stdout, out.stdout
    assert "pending" not in out.stderr and "mpool" not in out.stderr, out.stderr
