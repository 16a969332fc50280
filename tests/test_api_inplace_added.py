"""torch's namespace forms of in-place methods (torch.clamp_, ...) against torch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

CALLS = [
    lambda L, x: L.clamp_(x, min=0), lambda L, x: L.clamp_(x, 0, 1),
    lambda L, x: L.clamp_(x, L.zeros(2)), lambda L, x: L.clip_(x, max=0),
    lambda L, x: L.clip_(x, -1, 1), lambda L, x: L.clamp_min_(x, 0),
    lambda L, x: L.clamp_max_(x, 0), lambda L, x: L.round_(x),
    lambda L, x: L.round_(x, decimals=1), lambda L, x: L.square_(x),
    lambda L, x: L.negative_(x),
    lambda L, x: L.addmv_(x, L.ones(2, 3), L.arange(3.0), beta=2, alpha=3),
    lambda L, x: L.as_strided_(x, (1,), (1,), 1),
    lambda L, x: L.resize_as_(x, L.zeros(2, 1)),
    lambda L, x: L.clamp_(x),
]


@pytest.mark.parametrize("call", CALLS)
def test_inplace_function_matches_method(call):
    results = []
    for lib in (retrograd, torch):
        leaf = lib.tensor([1.26, -2.5], requires_grad=True)
        x = leaf.clone()
        try:
            out = call(lib, x)
        except RuntimeError as e:
            results.append(("error", str(e).replace("retrograd.", "torch.")))
            continue
        assert out is x
        grad_fn = out.grad_fn and out.grad_fn.name()
        results.append((tuple(out.shape), grad_fn, out.detach().numpy().round(5).tolist(),
                        x._version))
    assert results[0] == results[1]


def test_detach_and_leaf_checks():
    for lib in (retrograd, torch):
        y = lib.ones(2, requires_grad=True) * 2
        assert lib.detach_(y) is y and y.grad_fn is None and not y.requires_grad
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.square_(lib.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        retrograd.square_(1)


def test_gradient_through_namespace_inplace():
    grads = []
    for lib in (retrograd, torch):
        leaf = lib.tensor([0.5, -2.0, 3.0], requires_grad=True)
        y = lib.clamp_(leaf * 2, -1, 2)
        lib.square_(y)
        y.sum().backward()
        grads.append(leaf.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
