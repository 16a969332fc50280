"""Convolution and pooling vs torch: error messages, warnings, dtypes, indices, special values and
second derivatives. (Values and first gradients are covered by the generated op tests.)"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = (2, 3, 5, 5)


def _tensors(lib, arrays, requires_grad=False):
    conv = retrograd.from_numpy if lib is retrograd else torch.from_numpy
    ts = [conv(a.copy()) for a in arrays]
    for t in ts:
        if requires_grad and t.is_floating_point():
            t.requires_grad_(True)
    return ts


def _randn(*shapes, dtype="float32"):
    return [RNG.standard_normal(s).astype(dtype) for s in shapes]


def assert_same_error(fn, arrays, requires_grad=True):
    errors = []
    for lib in (torch, retrograd):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:  # noqa: PT011 - compared with torch's below
                fn(lib, *_tensors(lib, arrays, requires_grad))
        errors.append(info.value)
    theirs, ours = errors
    assert type(ours) is type(theirs)
    assert str(ours) == str(theirs)


def _f(name, **kw):
    def call(lib, *args):
        return getattr(lib.nn.functional, name)(*args, **kw)

    call.__name__ = f"{name}{kw}"
    return call


CONV_ERRORS = [
    (_f("conv2d"), [X, (4, 2, 3, 3)]),
    (_f("conv2d"), [X, (4, 3, 3)]),
    (_f("conv2d"), [(5, 5), (4, 3, 3, 3)]),
    (_f("conv2d"), [X, (4, 3, 6, 6)]),
    (_f("conv2d"), [X, (4, 3, 3, 3), (5,)]),
    (_f("conv2d"), [X, (4, 3, 3, 3), (4, 1)]),
    (_f("conv2d", stride=0), [X, (4, 3, 3, 3)]),
    (_f("conv2d", padding=-1), [X, (4, 3, 3, 3)]),
    (_f("conv2d", dilation=0), [X, (4, 3, 3, 3)]),
    (_f("conv2d", groups=2), [X, (4, 3, 3, 3)]),
    (_f("conv2d", groups=2), [(2, 4, 5, 5), (3, 2, 3, 3)]),
    (_f("conv2d", groups=0), [(2, 4, 5, 5), (4, 2, 3, 3)]),
    (_f("conv2d", padding="same", stride=2), [X, (4, 3, 3, 3)]),
    (_f("conv2d", padding="foo"), [X, (4, 3, 3, 3)]),
    (_f("conv2d", stride=(1, 1, 1)), [X, (4, 3, 3, 3)]),
    (_f("conv2d", padding=(1, 1, 1)), [X, (4, 3, 3, 3)]),
    (_f("conv2d"), [(2, 3, 5, 5, 5), (4, 3, 3, 3, 3)]),
    (_f("conv2d"), [X, (0, 3, 3, 3)]),
    (_f("conv1d"), [(2, 3, 5), (4, 3, 3, 3)]),
    (_f("conv_transpose2d", stride=2, output_padding=2), [X, (3, 4, 3, 3)]),
    (_f("conv_transpose2d", output_padding=1), [X, (3, 4, 3, 3)]),
    (_f("conv_transpose2d"), [X, (4, 4, 3, 3)]),
    (_f("conv_transpose2d", groups=3), [X, (3, 2, 3, 3), (2,)]),
    (_f("conv_transpose2d", padding="same"), [X, (3, 4, 3, 3)]),
    (_f("conv_transpose1d", output_padding=1), [(2, 3, 5), (3, 2, 3)]),
    (_f("conv_transpose3d", output_padding=1), [(1, 2, 3, 3, 3), (2, 2, 2, 2, 2)]),
]


@pytest.mark.parametrize("fn, shapes", CONV_ERRORS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_conv_errors(fn, shapes):
    assert_same_error(fn, _randn(*shapes))


@pytest.mark.parametrize("dtypes", [("float32", "float64", None), ("float32", "float32",
                                                                     "float64")])
def test_conv_dtype_errors(dtypes):
    arrays = [RNG.standard_normal(s).astype(d) for s, d in zip([X, (4, 3, 3, 3), (4,)], dtypes)
              if d is not None]
    assert_same_error(_f("conv2d"), arrays)


def test_convolution_single_values_expand():
    x, w = _randn(X, (4, 3, 3, 3))
    outs = [lib.convolution(*_tensors(lib, [x, w]), None, [2], [1], [1], False, [0], 1)
            for lib in (torch, retrograd)]
    np.testing.assert_allclose(outs[1].numpy(), outs[0].numpy(), rtol=1e-5, atol=1e-5)


def test_same_padding_warning():
    x, w = _randn(X, (4, 3, 2, 2))
    with pytest.warns(UserWarning, match="padding='same' with even kernel lengths"):
        out = retrograd.nn.functional.conv2d(*_tensors(retrograd, [x, w]), padding="same")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.nn.functional.conv2d(*_tensors(torch, [x, w]), padding="same")
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_convolution(dtype):
    x = RNG.integers(-3, 4, size=X).astype(dtype)
    w = RNG.integers(-3, 4, size=(4, 3, 3, 3)).astype(dtype)
    outs = [lib.nn.functional.conv2d(*_tensors(lib, [x, w]), padding=1, stride=2)
            for lib in (torch, retrograd)]
    assert outs[1].dtype.name == dtype
    np.testing.assert_array_equal(outs[1].numpy(), outs[0].numpy())


def test_unbatched_conv_is_a_squeezed_view():
    x, w = _randn((3, 5, 5), (4, 3, 3, 3))
    for lib in (torch, retrograd):
        out = lib.nn.functional.conv2d(*_tensors(lib, [x, w], True))
        assert out.grad_fn.name() == "SqueezeBackward1"
        assert out._is_view()


# --- pooling ---------------------------------------------------------------------------------

POOL_ERRORS = [
    (_f("max_pool2d", kernel_size=2, padding=2), [X]),
    (_f("max_pool2d", kernel_size=6), [X]),
    (_f("max_pool2d", kernel_size=2, stride=0), [X]),
    (_f("max_pool2d", kernel_size=0), [X]),
    (_f("max_pool2d", kernel_size=0, stride=1), [X]),
    (_f("max_pool2d", kernel_size=2, stride=-1), [X]),
    (_f("max_pool2d", kernel_size=3, dilation=0), [X]),
    (_f("max_pool2d", kernel_size=3, dilation=-1), [X]),
    (_f("max_pool2d", kernel_size=3, padding=2, dilation=2), [X]),
    (_f("max_pool2d", kernel_size=(2, 2, 2)), [X]),
    (_f("max_pool2d", kernel_size=2, stride=(1, 1, 1)), [X]),
    (_f("max_pool2d", kernel_size=2, padding=(1, 1, 1)), [X]),
    (_f("max_pool2d", kernel_size=3, dilation=(1, 2, 3)), [X]),
    (_f("max_pool2d", kernel_size=2, padding=-1), [X]),
    (_f("max_pool2d", kernel_size=2), [(5, 5)]),
    (_f("max_pool2d", kernel_size=2), [(2, 0, 5, 5)]),
    (_f("max_pool2d", kernel_size=2), [(3, 0, 5)]),
    (_f("max_pool2d", kernel_size=2), [(2, 2, 3, 5, 5)]),
    (_f("avg_pool2d", kernel_size=2, padding=2), [X]),
    (_f("avg_pool2d", kernel_size=6), [X]),
    (_f("avg_pool2d", kernel_size=2, stride=0), [X]),
    (_f("avg_pool2d", kernel_size=2, divisor_override=0), [X]),
    (_f("avg_pool2d", kernel_size=2), [(5, 5)]),
    (_f("avg_pool2d", kernel_size=2), [(2, 2, 3, 5, 5)]),
    (_f("avg_pool2d", kernel_size=(2, 2, 2)), [X]),
    (_f("adaptive_avg_pool2d", output_size=2), [(5, 5)]),
    (_f("adaptive_avg_pool2d", output_size=(2, 2, 2)), [X]),
    (_f("adaptive_avg_pool2d", output_size=-1), [X]),
    (_f("adaptive_avg_pool2d", output_size=2), [(2, 3, 0, 5)]),
    (_f("max_pool1d", kernel_size=2, padding=2), [(2, 3, 5)]),
    (_f("max_pool1d", kernel_size=0), [(2, 3, 5)]),
    (_f("max_pool1d", kernel_size=6), [(2, 3, 5)]),
    (_f("max_pool1d", kernel_size=2), [(5,)]),
    (_f("max_pool1d", kernel_size=(2, 2)), [(2, 3, 5)]),
    (_f("avg_pool1d", kernel_size=2, padding=2), [(2, 3, 5)]),
    (_f("avg_pool1d", kernel_size=6), [(2, 3, 5)]),
    (_f("avg_pool1d", kernel_size=2), [(5,)]),
    (_f("avg_pool1d", kernel_size=(2, 2)), [(2, 3, 5)]),
    (_f("adaptive_avg_pool1d", output_size=2), [(5,)]),
    (_f("adaptive_avg_pool1d", output_size=(2, 2)), [(2, 3, 5)]),
]


@pytest.mark.parametrize("fn, shapes", POOL_ERRORS, ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("requires_grad", [True, False])
def test_pool_errors(fn, shapes, requires_grad):
    assert_same_error(fn, _randn(*shapes), requires_grad)


@pytest.mark.parametrize("fn, dtype", [
    (_f("max_pool2d", kernel_size=2), "bool"),
    (_f("avg_pool2d", kernel_size=2), "int32"),
    (_f("adaptive_avg_pool2d", output_size=2), "int64"),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_pool_dtype_errors(fn, dtype):
    assert_same_error(fn, [RNG.integers(0, 2, size=X).astype(dtype)], requires_grad=False)


@pytest.mark.parametrize("dtype", ["int64", "int32", "float16"])
def test_max_pool_other_dtypes(dtype):
    x = (RNG.integers(-50, 50, size=X) if dtype != "float16" else RNG.standard_normal(X))
    x = x.astype(dtype)
    outs = [lib.nn.functional.max_pool2d(*_tensors(lib, [x]), 3, 2, 1, return_indices=True)
            for lib in (torch, retrograd)]
    for o, t in zip(outs[1], outs[0]):
        assert o.dtype.name == str(t.dtype).replace("torch.", "")
        np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_max_pool_indices_with_infinities():
    x = np.full((1, 1, 4, 4), -np.inf, np.float32)
    x[0, 0, 3, 3] = 1.0
    outs = [lib.nn.functional.max_pool2d(*_tensors(lib, [x]), 3, 2, 1, return_indices=True)
            for lib in (torch, retrograd)]
    np.testing.assert_array_equal(outs[1][0].numpy(), outs[0][0].numpy())
    np.testing.assert_array_equal(outs[1][1].numpy(), outs[0][1].numpy())


def test_max_pool_nan_and_ties_follow_torch():
    x = np.round(RNG.standard_normal((2, 2, 6, 6)), 0).astype(np.float32)  # many ties
    x[0, 0, 1, 1] = x[0, 0, 2, 2] = x[1, 1, 0, 3] = np.nan
    outs = [lib.nn.functional.max_pool2d(*_tensors(lib, [x]), 3, 1, 1, return_indices=True)
            for lib in (torch, retrograd)]
    np.testing.assert_array_equal(outs[1][0].numpy(), outs[0][0].numpy())
    np.testing.assert_array_equal(outs[1][1].numpy(), outs[0][1].numpy())


def test_max_pool_gradient_with_overlapping_windows_and_ties():
    x = np.zeros((1, 1, 4, 4), np.float32)  # every window ties: the first maximum wins
    grads = []
    for lib in (torch, retrograd):
        (t,) = _tensors(lib, [x], True)
        lib.nn.functional.max_pool2d(t, 3, 1).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def test_max_pool1d_without_grad_is_not_a_view():
    (x,) = _randn((2, 3, 6))
    for lib in (torch, retrograd):
        (t,) = _tensors(lib, [x])
        out = lib.nn.functional.max_pool1d(t, 2)
        assert not out._is_view()
        assert lib.max_pool1d_with_indices(t, 2)[0]._is_view()


def test_integer_avg_pool_truncates():
    x = RNG.integers(-9, 10, size=X).astype(np.int64)
    for kw in ({}, {"divisor_override": 3}, {"padding": 1, "count_include_pad": False}):
        outs = [lib.nn.functional.avg_pool2d(*_tensors(lib, [x]), 3, 2, **kw)
                for lib in (torch, retrograd)]
        assert outs[1].dtype == retrograd.int64
        np.testing.assert_array_equal(outs[1].numpy(), outs[0].numpy())


def test_global_adaptive_pool_is_a_mean():
    (x,) = _randn(X)
    for lib in (torch, retrograd):
        (t,) = _tensors(lib, [x], True)
        assert lib.nn.functional.adaptive_avg_pool2d(t, 1).grad_fn.name() == "MeanBackward1"


# --- second derivatives vs torch -------------------------------------------------------------


def _double_backward(lib, fn, arrays):
    ts = _tensors(lib, [a.astype(np.float64) for a in arrays], requires_grad=True)
    out = fn(lib, *ts)
    w = lib.from_numpy(np.cos(np.arange(out.numel(), dtype=np.float64)).reshape(out.shape))
    # squared, so pooling (linear) still has a second derivative
    grads = lib.autograd.grad((out * out * w).sum(), ts, create_graph=True)
    total = sum((g * g * (1.0 + 0.1 * i)).sum() for i, g in enumerate(grads))
    second = lib.autograd.grad(total, ts, allow_unused=True)
    return [np.zeros(t.shape) if g is None else g.numpy() for g, t in zip(second, ts)]


@pytest.mark.parametrize("fn, shapes", [
    (_f("conv2d", padding=1, stride=2), [X, (4, 3, 3, 3), (4,)]),
    (_f("conv2d", groups=3, dilation=2), [X, (6, 1, 2, 2)]),
    (_f("conv2d", groups=2, padding="same"), [(2, 4, 5, 5), (4, 2, 2, 2)]),
    (_f("conv1d", padding=2), [(2, 3, 5), (2, 3, 3)]),
    (_f("conv_transpose2d", stride=2, output_padding=1), [(2, 3, 3, 3), (3, 2, 3, 3), (2,)]),
    (_f("max_pool2d", kernel_size=3, stride=1, padding=1), [X]),
    (_f("avg_pool2d", kernel_size=3, stride=2, padding=1, count_include_pad=False,
        ceil_mode=True), [X]),
    (_f("adaptive_avg_pool2d", output_size=(3, 2)), [X]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_second_derivatives_match_torch(fn, shapes):
    arrays = _randn(*shapes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _double_backward(torch, fn, arrays)
        ours = _double_backward(retrograd, fn, arrays)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-8, atol=1e-10)


def test_conv_double_backward_node_name():
    x, w = _randn(X, (4, 3, 3, 3))
    for lib in (torch, retrograd):
        tx, tw = _tensors(lib, [x, w], True)
        (gx,) = lib.autograd.grad(lib.nn.functional.conv2d(tx, tw).sum(), [tx],
                                  create_graph=True)
        assert gx.grad_fn.name() == "ConvolutionBackwardBackward0"


@pytest.mark.parametrize("n, cin, cout, size, kernel, pad, extra", [
    (2, 3, 4, (5, 6), (3, 3), ((1, 1), (1, 1)), (0, 0)),
    (1, 2, 2, (4, 4), (1, 1), ((0, 0), (0, 0)), (0, 0)),
    (3, 1, 5, (6, 5), (5, 3), ((2, 2), (0, 1)), (0, 0)),
    (2, 2, 3, (4, 4), (2, 2), ((0, 1), (1, 0)), (0, 0)),   # 'same' with an even kernel
    (2, 2, 3, (4, 4), (3, 3), ((1, 1), (1, 1)), (1, 1)),   # a transposed conv's output padding
    (0, 2, 3, (4, 4), (3, 3), ((1, 1), (1, 1)), (0, 0)),   # an empty batch
])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_input_gradient_by_rows_matches_the_scatter(monkeypatch, n, cin, cout, size, kernel, pad,
                                                     extra, dtype):
    # conv_nd_transpose's 2-d stride-1 fast path (shifted contiguous adds on the padded row
    # pitch) against its general scatter over kernel offsets (the adds run in the same order;
    # only the matmul's blocking may round differently)
    from retrograd._ops.kernels import conv as C

    rng = np.random.default_rng(4)
    out_sp = tuple(s + lo + hi - k + 1 for s, (lo, hi), k in zip(size, pad, kernel))
    y = rng.standard_normal((n, cout) + out_sp).astype(dtype)
    w = rng.standard_normal((cout, cin) + kernel).astype(dtype)
    in_sp = tuple(s + e for s, e in zip(size, extra))
    fast = C.conv_nd_transpose(y, w, (1, 1), pad, (1, 1), 1, in_sp)
    monkeypatch.setattr(C, "_conv2d_transpose_rows", lambda *a: None)
    general = C.conv_nd_transpose(y, w, (1, 1), pad, (1, 1), 1, in_sp)
    assert fast.shape == general.shape and fast.dtype == general.dtype
    assert fast.flags.c_contiguous
    tol = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-3}[dtype]
    np.testing.assert_allclose(fast.astype(np.float64), general.astype(np.float64), rtol=tol,
                               atol=tol)
