"""2-D parallelism over 4 MPI processes: 2 pipeline stages x 2 data-parallel replicas, each
stage under DistributedDataParallel over its data-parallel group, against single-process
full-batch gradients."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "scripts" / "two_d_script.py"

pytestmark = pytest.mark.skipif(
    not ((Path(sys.executable).parent / "mpiexec").exists() or shutil.which("mpiexec")),
    reason="no mpiexec")


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_pipeline_stages_data_parallel_match_full_batch(schedule):
    out = subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node",
                          "4", str(SCRIPT), schedule], capture_output=True, text=True,
                         timeout=180, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    # ranks print concurrently, so lines may run together: count, don't split
    assert out.stdout.count(f"two-d ok {schedule}") == 4, out.stdout
    for rank in range(4):
        replica, stage = divmod(rank, 2)
        assert f"rank {rank} two-d ok {schedule} replica {replica} stage {stage}" in out.stdout
