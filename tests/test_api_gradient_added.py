"""torch.gradient against torch: uniform and coordinate spacing, dims, both edge orders,
integer inputs and the errors, call by call."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

data = np.random.default_rng(0).standard_normal((4, 5))
coords = np.array([0., 0.5, 1.7, 2.0, 3.5])
CALLS = [
    lambda L, x: L.gradient(x),
    lambda L, x: L.gradient(x, spacing=2.0),
    lambda L, x: L.gradient(x, spacing=2),
    lambda L, x: L.gradient(x, spacing=[1.5, 0.5]),
    lambda L, x: L.gradient(x, dim=1, edge_order=2),
    lambda L, x: L.gradient(x, spacing=0.5, dim=-1, edge_order=2),
    lambda L, x: L.gradient(x, spacing=[2.0, 3.0], dim=(1, 0)),
    lambda L, x: L.gradient(x, spacing=(L.tensor(coords),), dim=1),
    lambda L, x: L.gradient(x, spacing=(L.tensor(coords),), dim=1, edge_order=2),
    lambda L, x: L.gradient(x, spacing=(L.tensor(coords[:4]), L.tensor(coords))),
    lambda L, x: L.gradient(x, spacing=(L.tensor(coords[:4]), L.tensor(coords)), edge_order=2),
    lambda L, x: L.gradient(L.tensor([1, 4, 9, 16]), spacing=2),
    lambda L, x: L.gradient(L.tensor([1, 4, 9, 16]), edge_order=2),
    lambda L, x: L.gradient(L.tensor([1, 4, 9, 16]), spacing=(L.tensor([0, 1, 3, 4]),)),
    lambda L, x: L.gradient(L.tensor(1.0)),
    lambda L, x: L.gradient(x, dim=1, edge_order=3),
    lambda L, x: L.gradient(L.ones(2), edge_order=2),
    lambda L, x: L.gradient(L.ones(1)),
    lambda L, x: L.gradient(x, spacing=[1.0, 2.0, 3.0]),
    lambda L, x: L.gradient(x, spacing=[1.0, 2.0, 3.0], dim=0),
    lambda L, x: L.gradient(x, dim=(0, 0)),
    lambda L, x: L.gradient(x.double()),
]
def run(L, calls):
    out = []
    x = L.tensor(data, dtype=L.float32, requires_grad=True)
    for call in calls:
        try:
            r = call(L, x)
        except RuntimeError as e:
            out.append(("error", str(e)))
            continue
        out.append(type(r).__name__)
        for t in r:
            out.append((tuple(t.shape), str(t.dtype).split(".")[-1],
                        t.grad_fn and t.grad_fn.name(),
                        np.round(t.detach().numpy(), 4).tolist()))
    return out


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_gradient_matches_torch(i):
    assert run(retrograd, CALLS[i:i + 1]) == run(torch, CALLS[i:i + 1])
