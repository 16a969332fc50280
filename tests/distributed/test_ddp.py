"""DistributedDataParallel under the launcher (2 and 4 ranks): gradients equal the
single-process full-batch gradients (float64, 1e-10) for several bucket sizes, with and without
bucket views; no_sync, unused parameters, static_graph, comm hooks, buffer broadcast and the
model-mismatch error (tests/distributed/scripts/ddp_script.py asserts each)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "scripts" / "ddp_script.py"

pytestmark = pytest.mark.skipif(
    not ((Path(sys.executable).parent / "mpiexec").exists() or shutil.which("mpiexec")),
    reason="no mpiexec")


@pytest.mark.parametrize("n", [2, 4])
def test_ddp_matches_single_process(n):
    out = subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node",
                          str(n), str(SCRIPT)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    for r in range(n):
        assert f"rank {r} ddp ok" in out.stdout, out.stdout + out.stderr
    for noise in ("mpool", "pending"):
        assert noise not in out.stderr, out.stderr


def test_ddp_example_trains_and_keeps_replicas_equal():
    out = subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node",
                          "2", str(ROOT / "examples" / "ddp_train.py")], capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "epoch 2: mean loss" in out.stdout and "replicas equal: True" in out.stdout, out.stdout
