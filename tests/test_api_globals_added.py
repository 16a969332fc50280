"""Top-level modules, flags and helpers that programs import from torch, against torch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import retrograd
from retrograd.torch_version import TorchVersion

torch = pytest.importorskip("torch")


def same_error(build, exc=Exception):
    with pytest.raises(exc) as t_err:
        build(torch)
    with pytest.raises(exc) as o_err:
        build(retrograd)
    assert type(o_err.value) is type(t_err.value)
    assert str(o_err.value) == str(t_err.value).replace("torch.", "retrograd.")


def test_version_module_has_torchs_names():
    import retrograd.version as v

    for name in torch.version.__all__:
        assert hasattr(v, name), name
    assert v.cuda is None and v.hip is None and v.debug is False
    assert isinstance(v.git_version, str)
    assert retrograd.__version__ == v.__version__
    assert isinstance(retrograd.__version__, TorchVersion)


@pytest.mark.parametrize("a, b", [
    ("2.13.0+cpu", (2, 1)), ("2.13.0+cpu", "2.13"), ("2.13.0+cpu", "2.13.0+cpu"),
    ("2.13.0+cpu", "2.13.1"), ("1.10.0a", "1.10.0a"), ("1.10.0a0", "1.10.0"),
    ("1.10.0", "1.10.0rc1"), ("1.10.0.dev1", "1.10.0a1"), ("1.10.post1", "1.10"),
    ("0.1.0", (0, 1)), ("0.1.0", [0, 1, 0]), ("abc", "abd"), ("1.2", "1.10"),
    ("2.0", "2.0.0"), ("1.0+local.7", "1.0+local.10"),
])
def test_torch_version_compares_as_torchs(a, b):
    ours, theirs = TorchVersion(a), torch.torch_version.TorchVersion(a)
    for op in ("__lt__", "__le__", "__eq__", "__ge__", "__gt__"):
        assert getattr(ours, op)(b) == getattr(theirs, op)(b), (a, op, b)
    assert hash(ours) == hash(a)


def test_vmap_and_gradscaler_aliases():
    assert retrograd.vmap.__doc__.startswith("torch.vmap")
    assert retrograd.GradScaler is retrograd.amp.GradScaler
    x = retrograd.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(retrograd.vmap(lambda r: r.sum())(x).numpy(), [3.0, 12.0])


def test_random_module_seeds_and_restores_state():
    r = retrograd.random
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
                 "fork_rng"):
        assert callable(getattr(r, name)), name
    r.manual_seed(7)
    assert r.initial_seed() == 7
    state = r.get_rng_state()
    a = retrograd.rand(3)
    r.set_rng_state(state)
    np.testing.assert_array_equal(retrograd.rand(3).numpy(), a.numpy())
    before = r.get_rng_state()
    with r.fork_rng():
        retrograd.rand(5)
    np.testing.assert_array_equal(r.get_rng_state().numpy(), before.numpy())
    with r.fork_rng(enabled=False):
        retrograd.rand(5)
    assert not np.array_equal(r.get_rng_state().numpy(), before.numpy())
    s = r.seed()
    assert isinstance(s, int) and r.initial_seed() == s


def test_anomaly_flags_match_torch():
    for lib in (torch, retrograd):
        assert lib.is_anomaly_enabled() is False
        assert lib.is_anomaly_check_nan_enabled() is True
        try:
            lib.set_anomaly_enabled(True, False)
            assert lib.is_anomaly_enabled() is True
            assert lib.is_anomaly_check_nan_enabled() is False
            assert retrograd.autograd.anomaly_mode.is_anomaly_enabled() is (lib is retrograd)
        finally:
            lib.set_anomaly_enabled(False)
        assert lib.is_anomaly_check_nan_enabled() is True


@pytest.mark.parametrize("args", [(1,), ("x",), (True, 1)])
def test_set_anomaly_enabled_refuses_non_bools(args):
    same_error(lambda lib: lib.set_anomaly_enabled(*args), TypeError)
    assert retrograd.is_anomaly_enabled() is False


def test_build_flags_as_torchs_cpu_build():
    for name in ("has_lapack", "has_mkl", "has_openmp", "has_spectral"):
        assert getattr(retrograd, name) == getattr(torch, name), name


def test_set_flush_denormal():
    # NumPy cannot flush denormals: turning it on reports failure, turning it off succeeds
    assert retrograd.set_flush_denormal(True) is False
    assert retrograd.set_flush_denormal(False) is True
    assert torch.set_flush_denormal(False) is True
    for bad in (1, "x", None):
        same_error(lambda lib, bad=bad: lib.set_flush_denormal(bad), RuntimeError)


def test_set_default_tensor_type_warns_and_sets_default_dtype():
    import retrograd._global_api as G

    G._warned_tensor_type = False
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            retrograd.set_default_tensor_type(retrograd.DoubleTensor)
            assert retrograd.get_default_dtype() is retrograd.float64
            assert retrograd.tensor([1.0]).dtype is retrograd.float64
            assert retrograd.Tensor().dtype is retrograd.float64
            retrograd.set_default_tensor_type("torch.FloatTensor")
            assert retrograd.get_default_dtype() is retrograd.float32
            retrograd.set_default_tensor_type("retrograd.DoubleTensor")
            assert retrograd.get_default_dtype() is retrograd.float64
        assert len(w) == 1  # once per process, as torch
        assert str(w[0].message).startswith(
            "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
            "torch.set_default_dtype() and torch.set_default_device() as alternatives.")
        assert w[0].filename == __file__
    finally:
        retrograd.set_default_dtype(retrograd.float32)


@pytest.mark.parametrize("name", ["IntTensor", "LongTensor", "float64", "foo.Bar"])
def test_set_default_tensor_type_errors(name):
    def call(lib):
        arg = name if name == "foo.Bar" else getattr(lib, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.set_default_tensor_type(arg)

    same_error(call)
    assert retrograd.get_default_dtype() is retrograd.float32
    assert torch.get_default_dtype() is torch.float32


def test_is_distributed_and_get_device():
    for lib in (torch, retrograd):
        assert lib.is_distributed(lib.zeros(2)) is False
        assert lib.get_device(lib.zeros(2)) == -1
    same_error(lambda lib: lib.is_distributed(1), TypeError)
    same_error(lambda lib: lib.get_device(1), TypeError)


SYM_CALLS = [
    ("sym_int", (3.7,)), ("sym_int", (-2.7,)), ("sym_int", ("3",)), ("sym_float", (3,)),
    ("sym_float", (True,)), ("sym_max", (2, 3.0)), ("sym_max", (2, 3)), ("sym_max", (True, 1)),
    ("sym_max", (np.int64(4), 2)), ("sym_min", (2, 3)), ("sym_min", (2.5, 3)),
    ("sym_not", (True,)), ("sym_not", (0,)), ("sym_sum", ([1, 2, 3.0],)), ("sym_sum", (1, 2)),
    ("sym_sum", ([],)), ("sym_ite", (True, 1, 2)), ("sym_ite", (False, "a", "b")),
    ("sym_sqrt", (4,)), ("sym_sqrt", (2.0,)),
]


@pytest.mark.parametrize("name, args", SYM_CALLS)
def test_sym_helpers_on_python_numbers(name, args):
    want = getattr(torch, name)(*args)
    got = getattr(retrograd, name)(*args)
    assert type(got) is type(want)
    assert got == want or (isinstance(want, float) and math.isnan(want) and math.isnan(got))


@pytest.mark.parametrize("name, args", [
    ("sym_max", ("a", 1)), ("sym_min", (1, None)), ("sym_ite", (1, 1, 2)),
    ("sym_ite", (True, 1, 2.0)), ("sym_sqrt", (-1,)),
])
def test_sym_helpers_errors(name, args):
    same_error(lambda lib: getattr(lib, name)(*args))
