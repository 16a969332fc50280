"""segment_reduce against torch: values (random and edge inputs: empty segments, initial,
offsets, axis 1 with 2-d lengths, float16/bfloat16/float32/float64), gradients (ties for
max/min, zeros for prod), the refused double backward and forward AD, and the errors."""

import numpy as np
import pytest
import torch

import retrograd

REDUCES = ("sum", "mean", "max", "min", "prod", "amax", "amin")


def _both(fn):
    """fn(lib) on torch and retrograd; results as NumPy (float64)."""
    return [fn(lib) for lib in (torch, retrograd)]


def _np(t):
    return t.detach().to(torch.float64).numpy() if isinstance(t, torch.Tensor) else \
        t.detach().to(retrograd.float64).numpy()


def _grads(data, reduce, weights, **kw):
    out = []
    for lib in (torch, retrograd):
        x = lib.tensor(data, requires_grad=True)
        k = {key: lib.tensor(v) if isinstance(v, np.ndarray) else v for key, v in kw.items()}
        y = lib.segment_reduce(x, reduce, **k)
        y.backward(lib.tensor(weights))
        out.append((_np(y), _np(x.grad), type(y.grad_fn).__name__))
    return out


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("initial", [None, 0.5, -2.0])
def test_lengths_values_and_grads(reduce, initial):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((9, 4))
    lengths = np.array([3, 0, 1, 4, 0, 1])
    weights = rng.standard_normal((6, 4))
    (ty, tg, tn), (ry, rg, rn) = _grads(data, reduce, weights, lengths=lengths, initial=initial)
    np.testing.assert_allclose(ry, ty, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rg, tg, rtol=1e-12, atol=1e-12)
    assert rn == tn == "SegmentReduceBackward0"


@pytest.mark.parametrize("reduce", REDUCES)
def test_ties_zeros_and_nan(reduce):
    data = np.array([5., 5., 3., 3., 2., 7., 0., 2., 0., 0., 4., 0., np.nan, 1.])
    lengths = np.array([2, 0, 3, 1, 2, 4, 2])
    weights = np.arange(1., 8.)
    for initial in (None, 3.0, 5.0, 0.0):
        (ty, tg, _), (ry, rg, _) = _grads(data, reduce, weights, lengths=lengths,
                                          initial=initial)
        np.testing.assert_allclose(ry, ty, equal_nan=True)
        np.testing.assert_allclose(rg, tg, equal_nan=True)


@pytest.mark.parametrize("reduce", REDUCES)
def test_offsets_axis1_and_2d_lengths(reduce):
    rng = np.random.default_rng(1)
    data = rng.standard_normal((2, 7, 3))
    lengths = np.array([[2, 0, 5], [1, 3, 3]])
    offsets = np.concatenate([np.zeros((2, 1), np.int64), np.cumsum(lengths, 1)], 1)
    weights = rng.standard_normal((2, 3, 3))
    other = np.array([[7, 0, 0], [0, 0, 7]])  # with offsets too, offsets give the segments
    for kw in ({"lengths": lengths}, {"offsets": offsets}, {"lengths": other,
                                                            "offsets": offsets}):
        for axis in (1, -2):
            (ty, tg, _), (ry, rg, _) = _grads(data, reduce, weights, axis=axis, **kw)
            np.testing.assert_allclose(ry, ty, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(rg, tg, rtol=1e-12, atol=1e-12)
    # 1-d offsets along axis 0; offsets need not start at 0 nor reach the end
    d1 = rng.standard_normal(8)
    for off in ([0, 2, 2, 8], [1, 3, 6], [0], [0, 4, 4]):
        (ty, tg, _), (ry, rg, _) = _grads(d1, reduce, rng.standard_normal(len(off) - 1),
                                          offsets=np.array(off))
        np.testing.assert_allclose(ry, ty, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rg, tg, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_dtypes(dtype, reduce):
    data = np.random.default_rng(2).uniform(0.5, 1.5, (6, 2))
    outs = []
    for lib in (torch, retrograd):
        x = lib.tensor(data).to(getattr(lib, dtype))
        lengths = lib.tensor([2, 0, 4], dtype=lib.int32)
        y = lib.segment_reduce(x, reduce, lengths=lengths, initial=1.0)
        outs.append((str(y.dtype).split(".")[-1], _np(y), y.shape, y.is_contiguous()))
    assert outs[0][0] == outs[1][0] and outs[0][2] == outs[1][2] and outs[1][3]
    tol = 1e-2 if dtype in ("float16", "bfloat16") else 1e-6
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=tol)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "prod"])
def test_empty_data(reduce):
    for shape, lengths in (((0, 3), [0, 0]), ((4, 0), [1, 3]), ((0,), [0])):
        data = np.zeros(shape)
        weights = np.ones((len(lengths),) + shape[1:])
        (ty, tg, _), (ry, rg, _) = _grads(data, reduce, weights, lengths=np.array(lengths))
        assert ry.shape == ty.shape and rg.shape == tg.shape
        np.testing.assert_array_equal(ry, ty)
        np.testing.assert_array_equal(rg, tg)


def test_unsafe_skips_the_checks():
    data = np.arange(6.0)
    (t,), (r,) = _both(lambda lib: (lib.segment_reduce(
        lib.tensor(data), "sum", lengths=lib.tensor([2, 0, 3]), unsafe=True),))
    np.testing.assert_array_equal(_np(r), _np(t))


def test_no_double_backward_no_forward_ad():
    for lib in (torch, retrograd):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        y = lib.segment_reduce(x, "max", lengths=lib.tensor([3]))
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        assert type(g.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::_segment_reduce_backward "
                                               "is not implemented"):
            lib.autograd.grad(g.sum(), x)
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            dual = fwad.make_dual(x.detach(), lib.ones(3, dtype=lib.float64))
            with pytest.raises(NotImplementedError, match="Trying to use forward AD with "
                                                          "segment_reduce that does not"):
                lib.segment_reduce(dual, "sum", lengths=lib.tensor([3]))


def _error(lib, args: tuple, kw: dict):
    def conv(v):
        return lib.tensor(v) if isinstance(v, np.ndarray) else v

    try:
        lib.segment_reduce(*(conv(a) for a in args), **{k: conv(v) for k, v in kw.items()})
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e)
    return None


D = np.arange(6.0)
ERRORS = [
    ((D, "any"), {"lengths": np.array([6])}),
    ((D, "sum"), {"lengths": np.array([6]), "axis": 2}),
    ((D, "sum"), {"indices": np.array([6])}),
    ((D, "sum"), {}),
    ((D, "sum"), {"lengths": np.array([[2, 4]])}),
    ((D.reshape(2, 3), "sum"), {"lengths": np.array([1, 2]), "axis": 1}),
    ((D.reshape(2, 3), "sum"), {"lengths": np.array([[1, 2], [3, 0]])}),
    ((D, "sum"), {"lengths": np.array([2, -1, 5])}),
    ((D, "sum"), {"lengths": np.array([2, -1, 5]), "unsafe": True}),
    ((D, "sum"), {"lengths": np.array([2, 1])}),
    ((D, "sum"), {"lengths": np.array([], dtype=np.int64)}),
    ((D, "sum"), {"lengths": np.array([6.0])}),
    ((D, "sum"), {"lengths": np.array([6], dtype=np.int16)}),
    ((D, "sum"), {"offsets": np.array([0.0, 6.0])}),
    ((D, "sum"), {"offsets": np.array([0, 3, 2, 6])}),
    ((D.astype(np.int64), "sum"), {"lengths": np.array([6])}),
    ((D.astype(np.int32), "max"), {"offsets": np.array([0, 6])}),
    ((D.astype(np.float32), "sum"), {"lengths": np.array([6]), "initial": 1e300}),
    ((D.astype(np.float16), "sum"), {"lengths": np.array([6]), "initial": 70000.0}),
    ((D, "sum"), {"lengths": np.array([6]), "initial": 1 + 2j}),
]


@pytest.mark.parametrize("args, kw", ERRORS, ids=range(len(ERRORS)))
def test_errors(args, kw):
    expected, got = _error(torch, args, kw), _error(retrograd, args, kw)
    assert expected is not None
    assert got == expected
