"""softmax along a short last axis skips the max shift where the input's range allows it
(NOTE [Softmax without the shift]): the values stay torch's within float tolerance, at least
as accurate against a float64 reference, and every input outside the range takes the shifted
kernel, whose results are checked against torch here too."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd._ops import reduction

torch = pytest.importorskip("torch")


def _ulps(values: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return np.abs(values.astype(np.longdouble) - ref) / np.spacing(
        np.abs(ref).astype(values.dtype)).astype(np.longdouble)


def _reference(x: np.ndarray, axis: int = -1) -> np.ndarray:
    w = x.astype(np.longdouble)  # more precise than float64 on x86, float64's own elsewhere
    e = np.exp(w - w.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _taken(monkeypatch) -> list:
    """Records whether each softmax call took the unshifted path (a result) or not (None)."""
    seen: list = []
    plain = reduction._softmax_unshifted

    def spy(a):
        out = plain(a)
        seen.append(out is not None)
        return out

    monkeypatch.setattr(reduction, "_softmax_unshifted", spy)
    return seen


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(8, 4, 64, 64), (3, 1000), (2, 5, 2), (4, 128)])
def test_in_range_inputs_skip_the_shift_and_stay_accurate(monkeypatch, dtype, shape):
    x = (np.random.default_rng(0).standard_normal(shape) * 4).astype(dtype)
    seen = _taken(monkeypatch)
    ours = retrograd.softmax(retrograd.tensor(x), -1).numpy()
    assert seen == [True]
    theirs = torch.softmax(torch.from_numpy(x), -1).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5 if dtype == np.float32 else 1e-12)
    ref = _reference(x)
    # never less accurate than torch's shifted kernel, and within a few ulp of the exact value
    assert _ulps(ours, ref).max() <= max(_ulps(theirs, ref).max(), 8.0)
    np.testing.assert_allclose(ours.sum(-1), 1.0, rtol=1e-5 if dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("case", ["masked", "nan", "large", "very negative",
                                  "transposed", "other dim", "float16"])
def test_inputs_outside_the_range_take_the_shifted_kernel(monkeypatch, case):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 16)).astype(np.float32)
    dim, expect = -1, [False]
    if case == "masked":
        x[np.triu_indices(6, 1, 16)] = -np.inf
    elif case == "nan":
        x[2, 3] = np.nan
    elif case == "large":
        x[4, 0] = 79.0  # above 80 - log(16)
    elif case == "very negative":
        x[1] -= 200.0  # a row far below: exp of it would leave the normal range
    elif case == "transposed":
        x, expect = np.ascontiguousarray(x.T).T, []
    elif case == "other dim":
        dim, expect = 0, []
    else:
        x, expect = x.astype(np.float16), []
    seen = _taken(monkeypatch)
    ours = retrograd.softmax(retrograd.tensor(x), dim).numpy()
    assert seen == expect
    theirs = torch.softmax(torch.from_numpy(x), dim).numpy()
    tol = 1e-3 if x.dtype == np.float16 else 1e-6
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=1e-7)
    assert np.isnan(ours).sum() == np.isnan(theirs).sum()


def test_gradients_through_the_unshifted_path():
    x = retrograd.tensor(np.random.default_rng(2).standard_normal((4, 7)), requires_grad=True)
    assert retrograd.autograd.gradcheck(lambda a: retrograd.softmax(a, -1), (x,))
    assert retrograd.autograd.gradgradcheck(lambda a: retrograd.softmax(a, -1), (x,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_over_short_rows_matches_torch(dtype):
    rng = np.random.default_rng(3)
    x, g = (rng.standard_normal((2, 3, 16, 16)).astype(dtype) for _ in range(2))
    ours = retrograd.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    retrograd.softmax(ours, -1).backward(retrograd.tensor(g))
    torch.softmax(theirs, -1).backward(torch.tensor(g))
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(),
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-7)
