"""prelu, celu, rrelu, the shrinks, softsign, softmin, adaptive max / 3-d / power-average pools
and their modules beyond the op samples: torch's errors, dtypes, randomness, module reprs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F
from tests.nn.nn_harness import module_parity, randn
from tests.nn_functional_helpers import pair, raises_like

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _both(fn, *arrays, **kwargs):
    """fn(lib, *tensors) on both libraries: retrograd's and torch's results."""
    ours = [retrograd.from_numpy(np.array(a, copy=True)) for a in arrays]
    theirs = [torch.from_numpy(np.array(a, copy=True)) for a in arrays]
    return fn(retrograd, *ours, **kwargs), fn(torch, *theirs, **kwargs)


# --- errors --------------------------------------------------------------------------------


X = randn(2, 3, 4)
X5 = randn(2, 3, 4, 5, 6)
LONG = np.arange(-3, 3).reshape(2, 3)

ERROR_CASES = {
    "prelu_channels": lambda lib, x: lib.nn.functional.prelu(x, lib.ones(2)),
    "prelu_weight_2d": lambda lib, x: lib.nn.functional.prelu(x, lib.ones(3, 1)),
    "prelu_dtype": lambda lib, x: lib.nn.functional.prelu(x, lib.ones(3, dtype=lib.float64)),
    "prelu_zero_dim": lambda lib, x: lib.nn.functional.prelu(x[0, 0, 0], lib.ones(2)),
    "prelu_not_tensor": lambda lib, x: lib.nn.functional.prelu(x, 0.25),
    "celu_zero_alpha": lambda lib, x: lib.nn.functional.celu(x, alpha=0.0),
    "softshrink_negative": lambda lib, x: lib.nn.functional.softshrink(x, -1),
    "softshrink_double": lambda lib, x: lib.nn.functional.softshrink(x.double(), -0.5),
    "rrelu_bounds": lambda lib, x: lib.nn.functional.rrelu(x, 0.5, 0.1),
    "max_pool3d_rank": lambda lib, x: lib.nn.functional.max_pool3d(x, 2),
    "avg_pool3d_rank": lambda lib, x: lib.nn.functional.avg_pool3d(x, 2),
    "adaptive_avg_pool3d_rank": lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, 2),
    "adaptive_max_pool2d_size": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x,
                                                                                     (2, 2, 2)),
    "adaptive_max_pool2d_rank": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x[0, 0], 2),
    "adaptive_max_pool1d_size": lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, (2, 2)),
    "adaptive_max_pool1d_rank": lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x[0, 0], 2),
    "adaptive_max_pool2d_empty": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(
        x[:, :0], 2),
}

ERROR_CASES_5D = {
    "max_pool3d_pad": lambda lib, x: lib.nn.functional.max_pool3d(x, 2, padding=2),
    "max_pool3d_too_small": lambda lib, x: lib.nn.functional.max_pool3d(x, 7),
    "max_pool3d_kernel_tuple": lambda lib, x: lib.nn.functional.max_pool3d(x, (2, 2)),
    "max_pool3d_stride_tuple": lambda lib, x: lib.nn.functional.max_pool3d(x, 2, (1, 2)),
    "max_pool3d_stride_zero": lambda lib, x: lib.nn.functional.max_pool3d(x, 2, 0),
    "max_pool3d_empty_channel": lambda lib, x: lib.nn.functional.max_pool3d(x[:, :0], 1),
    "avg_pool3d_kernel_big": lambda lib, x: lib.nn.functional.avg_pool3d(x, 7),
    "avg_pool3d_kernel_tuple": lambda lib, x: lib.nn.functional.avg_pool3d(x, (2, 2)),
    "avg_pool3d_padding_tuple": lambda lib, x: lib.nn.functional.avg_pool3d(x, 2, 1, (1, 2)),
    "avg_pool3d_divisor": lambda lib, x: lib.nn.functional.avg_pool3d(x, 2,
                                                                       divisor_override=0),
    "adaptive_avg_pool3d_size": lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, (2, 2)),
    "adaptive_avg_pool3d_empty": lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(
        x[:, :0], 2),
    "adaptive_max_pool3d_size": lambda lib, x: lib.nn.functional.adaptive_max_pool3d(x, (2, 2)),
}

LONG_CASES = {
    "celu": lambda lib, x: lib.nn.functional.celu(x),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x),
    "rrelu_eval": lambda lib, x: lib.nn.functional.rrelu(x),
    "rrelu_training": lambda lib, x: lib.nn.functional.rrelu(x, training=True),
    "prelu": lambda lib, x: lib.nn.functional.prelu(x, lib.ones(1, dtype=lib.int64)),
    "adaptive_max_pool2d": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x[None], 1),
    "adaptive_avg_pool3d": lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x[None, None],
                                                                                1),
    "max_pool3d_bool": lambda lib, x: lib.nn.functional.max_pool3d(x[None, None].bool(), 1),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_torch(name):
    fn = ERROR_CASES[name]
    r, t = pair(X)
    raises_like(lambda: fn(retrograd, r), lambda: fn(torch, t))


@pytest.mark.parametrize("name", sorted(ERROR_CASES_5D))
def test_3d_errors_match_torch(name):
    fn = ERROR_CASES_5D[name]
    r, t = pair(X5)
    raises_like(lambda: fn(retrograd, r), lambda: fn(torch, t))


@pytest.mark.parametrize("name", sorted(LONG_CASES))
def test_integer_inputs_raise_like_torch(name):
    fn = LONG_CASES[name]
    r, t = pair(LONG)
    raises_like(lambda: fn(retrograd, r), lambda: fn(torch, t))


def test_rrelu_half_training_is_not_implemented_but_eval_is():
    r, t = pair(X.astype(np.float16))
    raises_like(lambda: F.rrelu(r, training=True), lambda: TF.rrelu(t, training=True))
    np.testing.assert_allclose(F.rrelu(r).numpy(), TF.rrelu(t).numpy(), rtol=1e-3)


def test_failed_inplace_leaves_input_unchanged():
    r = retrograd.from_numpy(LONG.copy())
    with pytest.raises(NotImplementedError):
        F.celu(r, inplace=True)
    np.testing.assert_array_equal(r.numpy(), LONG)


# --- values and dtypes ---------------------------------------------------------------------


def test_shrinks_at_band_edges_and_nan():
    a = np.array([0.5, -0.5, 1.0, -2.0, 0.2, -0.2, np.nan], dtype=np.float32)
    for name in ("hardshrink", "softshrink"):
        ours, theirs = _both(lambda lib, x, n=name: getattr(lib.nn.functional, n)(x, 0.5), a)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert np.array_equal(np.signbit(ours.numpy()), np.signbit(theirs.numpy()))


def test_shrink_gradients_at_band_edges():
    a = np.array([0.5, -0.5, 0.7, -0.7, 0.0])
    for name in ("hardshrink", "softshrink"):
        r, t = pair(a, requires_grad=True)
        getattr(F, name)(r).sum().backward()
        getattr(TF, name)(t).sum().backward()
        np.testing.assert_array_equal(r.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_dtypes_follow_input(dtype):
    a = X.astype(dtype)
    for fn in (lambda lib, x: lib.nn.functional.celu(x, 0.7),
               lambda lib, x: lib.nn.functional.hardshrink(x),
               lambda lib, x: lib.nn.functional.softshrink(x, 0.3),
               lambda lib, x: lib.nn.functional.softsign(x),
               lambda lib, x: lib.nn.functional.tanhshrink(x),
               lambda lib, x: lib.nn.functional.prelu(x, lib.full((3,), 0.2, dtype=x.dtype))):
        ours, theirs = _both(fn, a)
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-3, atol=1e-3)


def test_softmin_dtype_and_implicit_dim_warning():
    ours, theirs = _both(lambda lib, x: lib.nn.functional.softmin(x, 1, dtype=lib.float64), X)
    assert ours.dtype == retrograd.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        F.softmin(retrograd.from_numpy(X))


def test_prelu_shapes_match_torch():
    for shape, wshape in (((5,), (1,)), ((), (1,)), ((4, 3), ()), ((2, 3, 2, 2), (3,))):
        a = randn(*shape)
        w = np.full(wshape, 0.3, np.float32)
        ours, theirs = _both(lambda lib, x, w: lib.prelu(x, w), a, w)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_prelu_weight_gradient_per_channel():
    x, w = randn(2, 3, 4), np.array([0.1, 0.2, 0.3], np.float32)
    rx, tx = pair(x, True)
    rw, tw = pair(w, True)
    F.prelu(rx, rw).pow(2).sum().backward()
    TF.prelu(tx, tw).pow(2).sum().backward()
    np.testing.assert_allclose(rw.grad.numpy(), tw.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), rtol=1e-5)


def test_celu_inplace_forms():
    r = retrograd.from_numpy(X.copy())
    out = F.celu_(r, 0.5)
    assert out is r
    np.testing.assert_allclose(r.numpy(), TF.celu(torch.from_numpy(X), 0.5).numpy(), rtol=1e-6)
    r2 = retrograd.from_numpy(X.copy())
    assert retrograd.celu_(r2) is r2


# --- rrelu ---------------------------------------------------------------------------------


def test_rrelu_training_is_reproducible_and_in_range():
    x = retrograd.from_numpy(randn(50, 40)).double().requires_grad_()
    retrograd.manual_seed(7)
    a = F.rrelu(x, 0.1, 0.4, training=True)
    retrograd.manual_seed(7)
    b = F.rrelu(x, 0.1, 0.4, training=True)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    xa = x.detach().numpy()
    slope = a.detach().numpy()[xa < 0] / xa[xa < 0]
    assert slope.min() >= 0.1 and slope.max() <= 0.4 and slope.std() > 0.01
    np.testing.assert_array_equal(a.detach().numpy()[xa > 0], xa[xa > 0])
    # backward uses the same slopes
    a.sum().backward()
    g = x.grad.numpy()
    np.testing.assert_allclose(g[xa < 0], slope)
    np.testing.assert_array_equal(g[xa > 0], 1.0)


def test_rrelu_generator_argument():
    g = retrograd.Generator().manual_seed(3)
    x = retrograd.from_numpy(-np.ones(20, np.float32))
    a = retrograd.rrelu(x, training=True, generator=g)
    g.manual_seed(3)
    b = retrograd.rrelu(x, training=True, generator=g)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_rrelu_eval_is_leaky_relu_with_mean_slope():
    ours, theirs = _both(lambda lib, x: lib.nn.functional.rrelu(x, 0.1, 0.3), X)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())
    r = retrograd.from_numpy(X.copy())
    assert F.rrelu(r, inplace=True) is r
    assert F.rrelu(retrograd.from_numpy(X), training=True).grad_fn is None


def test_rrelu_module_train_and_eval():
    m = retrograd.nn.RReLU(0.1, 0.2)
    x = retrograd.from_numpy(-np.ones((4, 5), np.float32))
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), -0.15, rtol=1e-6)
    m.train()
    y = m(x).numpy()
    assert (y <= -0.1 + 1e-7).all() and (y >= -0.2 - 1e-7).all() and y.std() > 0


# --- pools ---------------------------------------------------------------------------------


def test_adaptive_max_pool_indices_ties_and_nan():
    a = np.array([[[1.0, 3.0, 3.0, 2.0, np.nan, 0.0, np.nan, 1.0]]], np.float32)
    for size in (1, 2, 3):
        (ov, oi), (tv, ti) = _both(lambda lib, x, s=size: lib.nn.functional.adaptive_max_pool1d(
            x, s, return_indices=True), a)
        np.testing.assert_array_equal(ov.numpy(), tv.numpy())
        np.testing.assert_array_equal(oi.numpy(), ti.numpy())


def test_pool_gradients_match_torch_with_overlapping_windows():
    a = randn(2, 2, 7, 5).astype(np.float64)
    for fn in (lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, (4, 3)),
               lambda lib, x: lib.nn.functional.max_pool3d(x[None], 2, 1),
               lambda lib, x: lib.nn.functional.avg_pool3d(x[None], (2, 3, 2), 1, 1),
               lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x[None], (3, 4, 2)),
               lambda lib, x: lib.nn.functional.lp_pool2d(x.abs(), 2.5, 2, 1)):
        r, t = pair(a, True)
        w = np.random.default_rng(0).standard_normal(fn(torch, t).shape)
        (fn(retrograd, r) * retrograd.from_numpy(w)).sum().backward()
        (fn(torch, t) * torch.from_numpy(w)).sum().backward()
        np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-12)


def test_integer_avg_pool3d_truncates_like_torch():
    a = np.arange(-60, 60).reshape(1, 2, 3, 4, 5)
    ours, theirs = _both(lambda lib, x: lib.nn.functional.avg_pool3d(x, 2, padding=1), a)
    assert ours.dtype == retrograd.int64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_empty_batch_pools():
    a = np.zeros((0, 2, 4, 4, 4), np.float32)
    for fn in (lambda lib, x: lib.nn.functional.max_pool3d(x, 2),
               lambda lib, x: lib.nn.functional.avg_pool3d(x, 2)):
        ours, theirs = _both(fn, a)
        assert tuple(ours.shape) == tuple(theirs.shape)


def test_lp_pool_negative_infinity_and_zero_windows():
    a = np.zeros((1, 2, 4, 4), np.float32)
    a[0, 0, :2, :2] = randn(2, 2)
    r, t = pair(a, True)
    F.lp_pool2d(r, 2, 2).sum().backward()
    TF.lp_pool2d(t, 2, 2).sum().backward()
    np.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=1e-5)
    ours, theirs = _both(lambda lib, x: lib.nn.functional.lp_pool1d(x, float("-inf"), 2), X)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


# --- modules -------------------------------------------------------------------------------

MODULES = {
    "RReLU": (lambda nn: nn.RReLU(0.1, 0.3, inplace=True), "RReLU(lower=0.1, upper=0.3, "
                                                           "inplace=True)"),
    "PReLU": (lambda nn: nn.PReLU(3, init=0.1), "PReLU(num_parameters=3)"),
    "CELU": (lambda nn: nn.CELU(0.5), "CELU(alpha=0.5)"),
    "Softshrink": (lambda nn: nn.Softshrink(0.3), "Softshrink(0.3)"),
    "Hardshrink": (lambda nn: nn.Hardshrink(), "Hardshrink(0.5)"),
    "Tanhshrink": (lambda nn: nn.Tanhshrink(), "Tanhshrink()"),
    "Softsign": (lambda nn: nn.Softsign(), "Softsign()"),
    "Softmin": (lambda nn: nn.Softmin(1), "Softmin(dim=1)"),
    "MaxPool3d": (lambda nn: nn.MaxPool3d(2, 1, 1), None),
    "AvgPool3d": (lambda nn: nn.AvgPool3d((1, 2, 2), divisor_override=2), None),
    "AdaptiveAvgPool3d": (lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)), None),
    "AdaptiveMaxPool3d": (lambda nn: nn.AdaptiveMaxPool3d(2, return_indices=True), None),
    "AdaptiveMaxPool2d": (lambda nn: nn.AdaptiveMaxPool2d((3, 2)), None),
    "AdaptiveMaxPool1d": (lambda nn: nn.AdaptiveMaxPool1d(3), None),
    "LPPool1d": (lambda nn: nn.LPPool1d(2, 3, 1), None),
    "LPPool2d": (lambda nn: nn.LPPool2d(1.5, 2, ceil_mode=True), None),
    "LPPool3d": (lambda nn: nn.LPPool3d(2, (1, 2, 2)), None),
}
INPUT_RANK = {"AdaptiveMaxPool2d": 4, "AdaptiveMaxPool1d": 3, "LPPool1d": 3, "LPPool2d": 4}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_parity_and_repr(name):
    make, text = MODULES[name]
    assert repr(make(retrograd.nn)) == repr(make(torch.nn))
    if text is not None:
        assert repr(make(retrograd.nn)) == text
    rank = INPUT_RANK.get(name, 5)
    x = np.abs(randn(*(2, 3, 4, 5, 6)[:rank])) + 0.1
    module_parity(lambda lib: make(lib.nn), [x], train=False, input_grad=name != "RReLU")


def test_prelu_module_parameters():
    ours, theirs = retrograd.nn.PReLU(4, 0.1), torch.nn.PReLU(4, 0.1)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    np.testing.assert_array_equal(ours.weight.detach().numpy(), theirs.weight.detach().numpy())


def test_no_warning_from_explicit_softmin_module():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        retrograd.nn.Softmin(dim=0)(retrograd.ones(3))


# --- LazyLinear ----------------------------------------------------------------------------


def test_lazy_linear_sizes_itself_on_first_call():
    ours, theirs = retrograd.nn.LazyLinear(3), torch.nn.LazyLinear(3)
    assert repr(ours) == repr(theirs)
    assert repr(retrograd.nn.LazyLinear(2, bias=False)) == repr(torch.nn.LazyLinear(2, False))
    weight = ours.weight
    opt = retrograd.optim.SGD(ours.parameters(), lr=0.1)
    out = ours(retrograd.from_numpy(randn(4, 5)))
    theirs(torch.from_numpy(randn(4, 5)))
    assert type(ours) is retrograd.nn.Linear and repr(ours) == repr(theirs)
    assert ours.weight is weight and tuple(ours.weight.shape) == (3, 5)
    bound = 1 / np.sqrt(5)
    assert np.abs(ours.weight.detach().numpy()).max() <= bound
    out.sum().backward()
    before = ours.weight.detach().numpy().copy()
    opt.step()
    assert not np.array_equal(before, ours.weight.detach().numpy())
