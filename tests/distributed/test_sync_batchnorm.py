"""SyncBatchNorm: on 2 and 3 ranks its statistics and gradients are the whole batch's
(tests/distributed/scripts/sync_bn_script.py asserts each); in one process it is BatchNorm,
and convert_sync_batchnorm rebuilds a model as torch's does."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import retrograd

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).parent / "scripts" / "sync_bn_script.py"
HAS_MPI = (Path(sys.executable).parent / "mpiexec").exists() or shutil.which("mpiexec")


@pytest.mark.skipif(not HAS_MPI, reason="no mpiexec")
@pytest.mark.parametrize("n", [2, 3])
def test_statistics_and_gradients_are_the_whole_batchs(n):
    out = subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node",
                          str(n), str(SCRIPT)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    for r in range(n):
        assert f"rank {r} syncbn ok" in out.stdout, out.stdout + out.stderr


def test_one_process_is_batchnorm_and_conversion_matches_torch():
    torch = pytest.importorskip("torch")
    x = np.random.RandomState(0).randn(4, 3, 5)
    results = []
    for lib in (retrograd, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv1d(3, 3, 1), lib.nn.BatchNorm1d(3),
                                  lib.nn.Sequential(lib.nn.BatchNorm1d(3)),
                                  lib.nn.InstanceNorm1d(3))
        conv = model[0]
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(np.eye(3)[:, :, None]))
            conv.bias.zero_()
        bn = model[1]
        converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        names = [type(m).__name__ for m in converted.modules()]
        shared = converted[1].weight is bn.weight and converted[1].running_mean is \
            bn.running_mean
        y = converted(lib.tensor(x, dtype=lib.float32))
        results.append((repr(converted), names, shared, y.detach().numpy(),
                        converted[1].running_var.numpy()))
        with pytest.raises(ValueError) as e:
            lib.nn.SyncBatchNorm(3)(lib.zeros(3))
        results[-1] += (str(e.value),)
    ours, theirs = results
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-5)
    assert ours[5] == theirs[5]
