"""Every collective against NumPy, under the launcher (2 and 4 ranks, env:// init) and plain
mpiexec; the exit leaves no MPI warning behind."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).parent / "scripts"
MPIEXEC = Path(sys.executable).parent / "mpiexec"
MPI_NOISE = ("mpool", "pending", "Assertion failed", "Segmentation fault")

pytestmark = pytest.mark.skipif(not (MPIEXEC.exists() or shutil.which("mpiexec")),
                                reason="no mpiexec")


def launch(n: int, script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node",
                           str(n), str(SCRIPTS / script), *args], capture_output=True,
                          text=True, timeout=180, cwd=ROOT)


def assert_quiet(out: subprocess.CompletedProcess) -> None:
    for noise in MPI_NOISE:
        assert noise not in out.stderr, out.stderr


@pytest.mark.parametrize("n,init", [(2, "default"), (4, "env")])
def test_collectives_match_numpy(n, init):
    out = launch(n, "collectives_script.py", init)
    assert out.returncode == 0, out.stdout + out.stderr
    for r in range(n):
        assert f"rank {r} collectives ok" in out.stdout, out.stdout + out.stderr
    assert_quiet(out)


def test_plain_mpiexec_init():
    mpiexec = str(MPIEXEC) if MPIEXEC.exists() else shutil.which("mpiexec")
    out = subprocess.run([mpiexec, "-n", "2", sys.executable,
                          str(SCRIPTS / "collectives_script.py")], capture_output=True, text=True,
                         timeout=180, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "rank 0 collectives ok" in out.stdout and "rank 1 collectives ok" in out.stdout
    assert_quiet(out)


def test_exit_with_unfinished_work_is_quiet():
    out = launch(2, "exit_script.py")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "rank 0 leaves" in out.stdout and "rank 1 leaves" in out.stdout
    assert_quiet(out)
