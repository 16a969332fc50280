"""The batching rules that compute on arrays when nothing observes their values (matmul's
products, addmm's bias, nll_loss) give the op path's values bit for bit: the same programs run
with a pass-through dispatch mode active, which sends the rules down the op path."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F
from retrograd._functorch import batch_rules
from retrograd.func import grad, vmap
from retrograd.utils._python_dispatch import TorchDispatchMode


class _PassThrough(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def _both(fn, *args):
    """(fn(*args) with the array paths, the same under a pass-through mode, the mode's ops)."""
    fast = fn(*args)
    with _PassThrough() as mode:
        slow = fn(*args)
    return fast, slow, mode.seen


def _assert_identical(a, b):
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x.numpy(), y.numpy())


RNG = np.random.default_rng(0)


def _t(*shape, dtype=np.float32):
    return retrograd.tensor(RNG.standard_normal(shape).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes, in_dims", [
    (((5, 3), (3, 4)), (0, None)),          # batched vector times a matrix: one folded mm
    (((5, 2, 3), (3, 4)), (0, None)),       # batched matrix times a matrix
    (((5, 3), (5, 3, 4)), (0, 0)),          # both batched: a batched product
    (((5, 2, 1), (5, 1, 4)), (0, 0)),       # per-example outer products
    (((5, 6), (5, 7)), (0, 0)),             # vectors: the outer products of torch.outer
    (((2, 3), (5, 3)), (None, 0)),          # matrix times batched vector
    (((5, 3), (5, 3)), (0, 0)),             # batched dot
])
def test_matmul_products(shapes, in_dims, dtype, monkeypatch):
    calls: list = []
    for name in ("mm", "batched", "outer"):
        kernel = getattr(batch_rules._ArrayProducts, name)
        monkeypatch.setattr(batch_rules._ArrayProducts, name,
                            staticmethod(lambda *a, _k=kernel, _n=name: calls.append(_n) or
                                         _k(*a)))
    a, b = (_t(*s, dtype=dtype) for s in shapes)
    op = retrograd.outer if shapes == ((5, 6), (5, 7)) else retrograd.matmul
    fast, slow, seen = _both(vmap(op, in_dims=in_dims), a, b)
    _assert_identical(fast, slow)
    # the array path, once (not under the mode); torch.outer is a broadcast multiply
    assert len(calls) == (0 if op is retrograd.outer else 1)
    assert seen  # the mode saw the op path's ops


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_per_sample_gradients_of_a_linear_classifier(reduction):
    w, bias = _t(4, 6), _t(4)
    x = _t(8, 6)
    y = retrograd.tensor(RNG.integers(0, 4, 8))
    y[3] = -100  # ignored

    def loss(w, bias, xi, yi):
        out = F.cross_entropy(F.linear(xi.unsqueeze(0), w, bias), yi.unsqueeze(0),
                              reduction=reduction)
        return out.sum()

    per_sample = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))
    fast, slow, _ = _both(per_sample, w, bias, x, y)
    _assert_identical(fast, slow)


def test_bad_operands_still_raise_torchs_error():
    a, b = _t(5, 3), _t(4, 2)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        vmap(retrograd.matmul, in_dims=(0, None))(a, b)


def test_the_array_path_is_taken_only_when_unobserved():
    a = _t(3, 2)
    assert batch_rules._unobserved(a)
    assert not batch_rules._unobserved(a.requires_grad_())
    with _PassThrough():
        assert not batch_rules._unobserved(_t(3, 2))
