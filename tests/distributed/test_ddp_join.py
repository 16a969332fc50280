"""DDP with uneven inputs inside ddp.join(), on 2 and 3 ranks: the same program
(tests/distributed/scripts/join_script.py) run on torch (gloo, torch's launcher) and on
retrograd (MPI) ends with the same parameters (float64, to 1e-12) and buffers on every rank,
for the default averaging over the whole world, divide_by_initial_world_size=False, without
the forward's buffer broadcast (forward_sync_buffers=False) or any (the deprecated
broadcast_buffers=False, with torch's FutureWarning), with many small buckets and with a
no_sync iteration; and raises torch's errors with throw_on_early_termination."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "scripts" / "join_script.py"

pytestmark = pytest.mark.skipif(
    not ((Path(sys.executable).parent / "mpiexec").exists() or shutil.which("mpiexec")),
    reason="no mpiexec")


def _run(launcher: str, lib: str, n: int, out: Path) -> dict:
    # torch's launcher: --standalone picks a free port (tests run side by side)
    extra = ["--standalone"] if launcher.startswith("torch") else []
    proc = subprocess.run([sys.executable, "-m", launcher, *extra, "--nproc-per-node", str(n),
                           str(SCRIPT), lib, str(out)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    if lib == "retrograd":
        assert proc.returncode == 0, proc.stdout + proc.stderr
    # torch's gloo sometimes aborts the process at exit after the throw_on_early_termination
    # case (a pending all-reduce handle is dropped with the exception): its files are complete
    # by then, which the "done" line shows
    files = [out / f"{lib}_{r}.txt" for r in range(n)]
    assert all(f.exists() for f in files), proc.stdout + proc.stderr
    lines = {r: f.read_text().splitlines() for r, f in enumerate(files)}
    assert all(lines[r] and lines[r][-1] == "done" for r in lines), proc.stdout + proc.stderr
    return lines


def _params(line: str) -> np.ndarray:
    return np.array([float(v) for v in re.findall(r"-?\d\.\d+e[+-]\d+", line)])


@pytest.mark.parametrize("n", [2, 3])
def test_join_matches_torch(n, tmp_path):
    pytest.importorskip("torch")
    ours = _run("retrograd.distributed.run", "retrograd", n, tmp_path)
    theirs = _run("torch.distributed.run", "torch", n, tmp_path)
    for r in range(n):
        assert len(ours[r]) == len(theirs[r]) == 9 and ours[r][-1] == "done", ours[r]
        for a, b in zip(ours[r], theirs[r]):
            if a.startswith("case"):
                assert a.split(":")[0] == b.split(":")[0]
                np.testing.assert_allclose(_params(a), _params(b), rtol=1e-12, atol=1e-13)
                assert a.rsplit("seen", 1)[1] == b.rsplit("seen", 1)[1], (a[-20:], b[-20:])
            else:
                assert a == b
        # every rank ends with the same model
        for a, b in zip(ours[r], ours[0]):
            if a.startswith("case"):
                np.testing.assert_array_equal(_params(a), _params(b))
    cases = {line.split(":")[0]: _params(line) for line in ours[0] if line.startswith("case")}
    # averaging over the ranks still training gives other parameters than over the world
    assert not np.allclose(cases["case default"], cases["case undivided"])
    assert ours[0][6] == "throw: Rank 0 exhausted all inputs."
    assert ours[n - 1][6] == ("throw: Detected at least one rank that exhausted inputs. "
                              "Throwing across all ranks.")
