"""Fractional max pooling against torch: with the same _random_samples the values and indices
are torch's exactly (ties, NaNs; float16, float32, float64), the gradients to rounding;
torch's errors; the modules."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from tests.nn_functional_helpers import raises_like

torch = pytest.importorskip("torch")


def _case(seed: int, nsp: int, dtype: str, batched: bool):
    rng = np.random.default_rng(seed)
    spatial = [int(v) for v in rng.integers(4, 10, size=nsp)]
    kernel = [int(rng.integers(1, 4)) for _ in spatial]
    # the 3-d check is strict (the last window may not reach the end)
    out = [int(rng.integers(1, s - k + 1 - (nsp == 3) + 1)) for s, k in zip(spatial, kernel)]
    shape = ([2] if batched else []) + [3] + spatial
    x = rng.standard_normal(shape).astype(dtype)
    if seed % 3 == 0:
        x = np.round(x)  # ties: the first maximum wins
    if seed % 4 == 0:
        x.flat[rng.integers(0, x.size, 5)] = np.nan  # a NaN wins (the last one in a window)
    samples = rng.random((2 if batched else 1, 3, nsp)).astype(dtype)
    grad = rng.standard_normal([*shape[:-nsp], *out]).astype(dtype)
    return x, kernel, out, samples, grad


def _run(lib, nsp, x, kernel, out, samples, grad):
    xt = lib.from_numpy(x.copy()).requires_grad_()
    pool = getattr(lib.nn.functional, f"fractional_max_pool{nsp}d")
    values, indices = pool(xt, kernel, output_size=out, return_indices=True,
                           _random_samples=lib.from_numpy(samples.copy()))
    values.backward(lib.from_numpy(grad.copy()))
    return values.detach().numpy(), indices.numpy(), xt.grad.numpy(), type(values.grad_fn).__name__


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("nsp", [2, 3])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_exact_parity(seed, nsp, dtype):
    case = _case(seed, nsp, dtype, batched=seed % 2 == 0)
    ours, theirs = _run(retrograd, nsp, *case), _run(torch, nsp, *case)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    # overlapping windows sum their gradients: in another order, so to rounding
    tol = 1e-2 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(ours[2], theirs[2], rtol=tol, atol=tol / 10)
    assert ours[3] == theirs[3]


def test_double_backward_node():
    for lib in (retrograd, torch):
        x = lib.from_numpy(np.random.default_rng(0).standard_normal((1, 2, 6, 6))).requires_grad_()
        out = lib.nn.functional.fractional_max_pool2d(
            x, 2, output_size=3, _random_samples=lib.full((1, 2, 2), 0.3, dtype=lib.float64))
        v = lib.ones_like(out).requires_grad_()
        (g,) = lib.autograd.grad(out, x, v, create_graph=True)
        assert type(g.grad_fn).__name__ == "FractionalMaxPool2DBackwardBackward0"


def test_drawn_samples_shape():
    """Without _random_samples each call draws its own; shapes and dtypes follow torch."""
    for shape, nsp in (((2, 3, 8, 8), 2), ((3, 8, 8), 2), ((2, 3, 6, 6, 6), 3)):
        x = retrograd.randn(*shape)
        pool = getattr(retrograd.nn.functional, f"fractional_max_pool{nsp}d")
        ratio = (0.5,) * nsp
        out, idx = pool(x, 2, output_ratio=ratio, return_indices=True)
        ref = getattr(torch.nn.functional, f"fractional_max_pool{nsp}d")(
            torch.randn(*shape), 2, output_ratio=ratio, return_indices=True)
        assert tuple(out.shape) == tuple(ref[0].shape) and idx.dtype == retrograd.int64


X2 = (2, 3, 7, 8)
X3 = (2, 3, 5, 6, 7)
ERRORS = {
    "too_large_h": (2, X2, 2, {"output_size": (7, 5)}, (2, 3, 2)),
    "too_large_w": (2, X2, 2, {"output_size": (4, 8)}, (2, 3, 2)),
    "samples_size2": (2, X2, 2, {"output_size": (4, 5)}, (2, 3, 3)),
    "samples_batch": (2, X2, 2, {"output_size": (4, 5)}, (1, 3, 2)),
    "samples_channels": (2, X2, 2, {"output_size": (4, 5)}, (2, 2, 2)),
    "samples_dims": (2, X2, 2, {"output_size": (4, 5)}, (6, 2)),
    "input_2d": (2, (7, 8), 2, {"output_size": (4, 5)}, (2, 3, 2)),
    "empty_channels": (2, (2, 0, 7, 8), 2, {"output_size": (4, 5)}, (2, 0, 2)),
    "output_size_len": (2, X2, 2, {"output_size": (4, 5, 1)}, (2, 3, 2)),
    "kernel_len": (2, X2, (2, 2, 2), {"output_size": (4, 5)}, (2, 3, 2)),
    "negative_size": (2, X2, 2, {"output_size": (-1, 5)}, (2, 3, 2)),
    "ratio_float": (2, X2, 2, {"output_ratio": 0.5}, (2, 3, 2)),
    "ratio_len": (2, X2, 2, {"output_ratio": (0.5, 0.5, 0.5)}, (2, 3, 2)),
    "no_size": (2, X2, 2, {}, (2, 3, 2)),
    "3d_too_large_t": (3, X3, 2, {"output_size": (4, 4, 5)}, (2, 3, 3)),
    "3d_strict_t": (3, (1, 1, 3, 4, 4), 2, {"output_size": (2, 2, 2)}, (1, 1, 3)),
    "3d_too_large_w": (3, X3, 2, {"output_size": (3, 4, 6)}, (2, 3, 3)),
    "3d_samples_size2": (3, X3, 2, {"output_size": (3, 4, 5)}, (2, 3, 2)),
    "3d_input_3d": (3, (5, 6, 7), 2, {"output_size": (3, 4, 5)}, (2, 3, 3)),
    "3d_output_size_len": (3, X3, 2, {"output_size": (3, 4, 5, 1)}, (2, 3, 3)),
    "3d_kernel_len": (3, X3, (2, 2), {"output_size": (3, 4, 5)}, (2, 3, 3)),
    "3d_empty_channels": (3, (2, 0, 5, 6, 7), 2, {"output_size": (3, 4, 5)}, (2, 0, 3)),
}


def _error_call(lib, nsp, shape, kernel, kwargs, samples_shape, dtype="float32",
                samples_dtype="float32"):
    x = lib.from_numpy(np.zeros(shape, dtype=dtype))
    samples = lib.from_numpy(np.full(samples_shape, 0.5, dtype=samples_dtype))
    pool = getattr(lib.nn.functional, f"fractional_max_pool{nsp}d")
    return pool(x, kernel, _random_samples=samples, **kwargs)


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    args = ERRORS[case]
    raises_like(lambda: _error_call(retrograd, *args), lambda: _error_call(torch, *args))


@pytest.mark.parametrize("nsp, shape, out", [(2, X2, (4, 5)), (3, X3, (3, 4, 5))])
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("int32", "float32"),
                                    ("int32", "int32")])
def test_dtype_errors(nsp, shape, out, dtypes):
    args = (nsp, shape, 2, {"output_size": out}, (2, 3, nsp), *dtypes)
    raises_like(lambda: _error_call(retrograd, *args), lambda: _error_call(torch, *args))


MODULE_ERRORS = {
    "no_size": lambda lib: lib.nn.FractionalMaxPool2d(2),
    "both": lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
    "ratio_range": lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=(0.5, 1.0)),
    "3d_no_size": lambda lib: lib.nn.FractionalMaxPool3d(2),
    "3d_kernel": lambda lib: lib.nn.FractionalMaxPool3d((2, 0, 2), output_size=2),
    "3d_ratio_range": lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=1.5),
}


@pytest.mark.parametrize("case", sorted(MODULE_ERRORS))
def test_module_errors(case):
    raises_like(lambda: MODULE_ERRORS[case](retrograd), lambda: MODULE_ERRORS[case](torch))


@pytest.mark.parametrize("nsp", [2, 3])
def test_modules(nsp):
    rng = np.random.default_rng(nsp)
    shape = (2, 3) + (7,) * nsp
    x = rng.standard_normal(shape).astype(np.float32)
    samples = rng.random((2, 3, nsp)).astype(np.float32)
    results = []
    for lib in (retrograd, torch):
        cls = getattr(lib.nn, f"FractionalMaxPool{nsp}d")
        m = cls(2, output_ratio=0.5, return_indices=True,
                _random_samples=lib.from_numpy(samples.copy()))
        xt = lib.from_numpy(x.copy()).requires_grad_()
        out, idx = m(xt)
        out.sum().backward()
        results.append((out.detach().numpy(), idx.numpy(), xt.grad.numpy(), repr(m),
                        sorted(m.state_dict()), m.kernel_size, m.output_ratio, m.output_size))
    for a, b in zip(*results):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b
