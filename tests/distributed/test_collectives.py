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


def test_env_init_outside_mpi_says_how_to_start_the_job():
    code = ("import retrograd as torch\n"
            "try:\n"
            "    torch.distributed.init_process_group('mpi', init_method='env://')\n"
            "except ValueError as e:\n"
            "    print(e)\n")
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("RANK", "WORLD_SIZE", "PMI_RANK", "PMI_SIZE")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert "Error initializing torch.distributed using env:// rendezvous: environment " \
           "variable RANK expected, but not set" in out.stdout, out.stdout + out.stderr
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=dict(env, RANK="1", WORLD_SIZE="2"))
    assert "world_size=2 but MPI started 1 processes: start the job with `mpiexec -n 2` or " \
           "retrograd.distributed.run" in out.stdout, out.stdout + out.stderr
