"""ZeroRedundancyOptimizer over 2 real ranks (the launcher starts them under mpiexec)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parent / "scripts" / "zero_script.py"
CHECKS = ["trajectory Adam bucket_view=False", "trajectory Adam bucket_view=True",
          "trajectory SGD bucket_view=False", "trajectory SGD bucket_view=True",
          "trajectory AdamW bucket_view=False", "trajectory AdamW bucket_view=True",
          "shard", "state_dict before consolidate", "consolidate", "round trip",
          "add_param_group", "closure and lr", "errors", "overlap_with_ddp", "torch parity"]


def _mpiexec_available() -> bool:
    return (Path(sys.executable).parent / "mpiexec").exists() or bool(shutil.which("mpiexec"))


pytestmark = pytest.mark.skipif(not _mpiexec_available(), reason="no mpiexec")


def test_zero_redundancy_optimizer_two_ranks():
    out = subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node",
                          "2", str(SCRIPT)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    for rank in (0, 1):
        for check in CHECKS:
            assert f"rank {rank} ok {check}" in out.stdout, (check, out.stdout, out.stderr)
