"""torch's module paths under nn.modules (`from torch.nn.modules.batchnorm import _BatchNorm`,
`from torch.nn.modules.loss import CTCLoss`, ...) name the same classes in retrograd, and the
legacy nn.CrossMapLRN2d computes torch's numbers."""

import importlib
import pkgutil

import numpy as np
import pytest

import retrograd
from tests.parity.harness import error_of, torch_or_skip

# torch.nn.modules files that are quantization or C++ internals, not layers
SKIP = {"_functions"}
PRIVATE_BASES = {
    "batchnorm": ["_BatchNorm", "_NormBase", "_LazyNormBase"],
    "instancenorm": ["_InstanceNorm"],
    "conv": ["_ConvNd"],
    "loss": ["_Loss", "_WeightedLoss"],
    "pooling": ["_MaxPoolNd", "_AvgPoolNd", "_AdaptiveAvgPoolNd", "_AdaptiveMaxPoolNd",
                "_MaxUnpoolNd", "_LPPoolNd"],
    "dropout": ["_DropoutNd"],
    "utils": ["_pair", "_single", "_triple", "_ntuple", "_reverse_repeat_tuple"],
}


def _torch_modules():
    torch = pytest.importorskip("torch")
    return [m.name for m in pkgutil.iter_modules(torch.nn.modules.__path__)
            if m.name not in SKIP]


@pytest.mark.parametrize("name", _torch_modules())
def test_every_name_of_torchs_module_is_there(name):
    torch = torch_or_skip()
    theirs = importlib.import_module(f"torch.nn.modules.{name}")
    ours = importlib.import_module(f"retrograd.nn.modules.{name}")
    public = getattr(theirs, "__all__", None) or [
        n for n in dir(theirs) if not n.startswith("_")
        and getattr(getattr(theirs, n), "__module__", "") == theirs.__name__]
    for n in public + PRIVATE_BASES.get(name, []):
        obj = getattr(ours, n)  # AttributeError names what is missing
        if hasattr(torch.nn, n) and n[0] != "_":
            assert obj is getattr(retrograd.nn, n), n
    if hasattr(theirs, "__all__"):
        assert set(theirs.__all__) <= set(ours.__all__)
    namespace: dict = {}
    exec(f"from retrograd.nn.modules.{name} import *", namespace)


def test_private_bases_are_the_classes_modules_derive_from():
    from retrograd.nn.modules.batchnorm import _BatchNorm
    from retrograd.nn.modules.instancenorm import _InstanceNorm
    from retrograd.nn.modules.pooling import _LPPoolNd, _MaxUnpoolNd

    assert isinstance(retrograd.nn.BatchNorm2d(3), _BatchNorm)
    assert isinstance(retrograd.nn.SyncBatchNorm(3), _BatchNorm)
    assert isinstance(retrograd.nn.InstanceNorm1d(3), _InstanceNorm)
    assert isinstance(retrograd.nn.LPPool2d(2, 2), _LPPoolNd)
    assert isinstance(retrograd.nn.MaxUnpool2d(2), _MaxUnpoolNd)
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        importlib.import_module("retrograd.nn.modules.loss").Nope  # noqa: B018


def test_consume_prefix_in_state_dict_if_present_like_torch():
    torch = torch_or_skip()
    out = []
    for lib in (retrograd, torch):
        from_ddp = lib.nn.Sequential(lib.nn.Linear(2, 2))
        wrapped = lib.nn.Sequential()
        wrapped.add_module("module", from_ddp)
        sd = wrapped.state_dict()
        mod = importlib.import_module(f"{lib.__name__}.nn.modules.utils")
        mod.consume_prefix_in_state_dict_if_present(sd, "module.")
        out.append((list(sd.keys()), sorted(sd._metadata.keys())))
        lib.nn.Sequential(lib.nn.Linear(2, 2)).load_state_dict(sd)
    assert out[0] == out[1]


@pytest.mark.parametrize("size, channels", [(3, 6), (5, 4), (2, 7), (1, 3), (4, 2)])
def test_cross_map_lrn2d_matches_torch(size, channels):
    torch = torch_or_skip()
    rng = np.random.default_rng(size * 10 + channels)
    x = rng.standard_normal((2, channels, 3, 4))
    g = rng.standard_normal((2, channels, 3, 4))
    res = []
    for lib in (retrograd, torch):
        t = lib.tensor(x, requires_grad=True)
        m = lib.nn.CrossMapLRN2d(size, alpha=0.05, beta=0.75, k=1.5)
        y = m(t)
        failed = error_of(y.backward, lib.tensor(g))
        if failed[0] == "raised":
            res.append(failed)
            continue
        res.append((y.detach().numpy(), t.grad.numpy(), repr(m),
                    type(y.grad_fn).__name__.replace("Backward", "")))
    if size == 1:  # torch's legacy backward cannot place a window of one channel
        assert res[0] == res[1]
        return
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10, atol=1e-12)
    assert res[0][2] == res[1][2]
    for lib in (retrograd, torch):
        m = lib.nn.CrossMapLRN2d(3)
        assert error_of(m, lib.ones(2, 3, 4))[1:] == ("ValueError", "CrossMapLRN2d: Expected "
                                                      "input to be 4D, got 3D instead.")
