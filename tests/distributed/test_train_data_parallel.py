"""`retrograd train --nproc-per-node 2`: the main job data-parallel over MPI reaches the accuracy
of one process and reports each rank's throughput and communication wait."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    not ((Path(sys.executable).parent / "mpiexec").exists() or shutil.which("mpiexec")),
    reason="no mpiexec")


def _train(*extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "retrograd", "train", "--epochs", "3",
                           "--no-progress", *extra], capture_output=True, text=True, timeout=300)


def _accuracy(stdout: str) -> float:
    found = re.findall(r"test accuracy ([0-9.]+)%", stdout)
    assert len(found) == 1, stdout  # rank 0 alone reports
    return float(found[0])


def test_two_ranks_match_one_process_and_report_per_rank():
    single = _train()
    assert single.returncode == 0, single.stderr
    parallel = _train("--nproc-per-node", "2")
    assert parallel.returncode == 0, parallel.stderr
    assert abs(_accuracy(parallel.stdout) - _accuracy(single.stdout)) <= 0.5
    for rank in (0, 1):
        line = re.search(rf"rank {rank}: ([0-9.]+) img/s, waited ([0-9.]+)s on communication",
                         parallel.stdout)
        assert line is not None, parallel.stdout
        assert float(line.group(1)) > 0
    assert "pending" not in parallel.stderr and "mpool" not in parallel.stderr


def test_bad_process_count_is_refused():
    out = _train("--nproc-per-node", "0")
    assert out.returncode == 2
    assert "--nproc-per-node must be at least 1" in out.stderr
