"""column_stack, the trapezoid rules, unravel_index, chain_matmul, frobenius_norm and
nuclear_norm against torch: values, dtypes, node names and errors, call by call."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


CALLS = [
    lambda L, y: L.column_stack([]),
    lambda L, y: L.column_stack([L.ones(2), L.ones(2, 3)]),
    lambda L, y: L.column_stack([L.tensor(1.0), L.tensor(2.0)]),
    lambda L, y: L.trapezoid(y, dx=2, dim=0),
    lambda L, y: L.trapezoid(y, L.arange(4.0) ** 2),
    lambda L, y: L.trapezoid(y, L.arange(3.0) ** 2, dim=0),
    lambda L, y: L.trapezoid(y, L.ones(3, 4).cumsum(1) ** 2),
    lambda L, y: L.trapezoid(L.ones(3, 0)),
    lambda L, y: L.trapezoid(L.ones(3, 0), L.ones(0)),
    lambda L, y: L.trapezoid(L.arange(4)),
    lambda L, y: L.trapezoid(L.tensor([True,False])),
    lambda L, y: L.trapezoid(y, L.arange(5.0)),
    lambda L, y: L.trapezoid(y, 2.0),
    lambda L, y: L.trapezoid(y, L.arange(4), dx=1),
    lambda L, y: L.cumulative_trapezoid(y),
    lambda L, y: L.cumulative_trapezoid(y, dx=0.5, dim=0),
    lambda L, y: L.cumulative_trapezoid(y, L.arange(4.0) ** 2),
    lambda L, y: L.cumulative_trapezoid(L.ones(3, 0)),
    lambda L, y: L.cumulative_trapezoid(L.arange(4)),
    lambda L, y: L.trapz(y),
    lambda L, y: L.trapz(y, L.arange(4.0)),
    lambda L, y: L.trapz(y, dx=3.0),
    lambda L, y: L.unravel_index(L.tensor(1.0), (2,)),
    lambda L, y: L.unravel_index(L.tensor(1), (-2,)),
    lambda L, y: L.unravel_index(L.tensor(1), 2.0),
    lambda L, y: L.unravel_index(L.tensor(1), (2.0,)),
    lambda L, y: L.unravel_index(L.tensor([-1, 7, 22]), (2, 3, 4)),
    lambda L, y: L.unravel_index(L.tensor(5), 3),
    lambda L, y: L.unravel_index(L.tensor([[3]]), L.Size([2, 2])),
    lambda L, y: L.chain_matmul(),
    lambda L, y: L.chain_matmul(L.ones(2)),
    lambda L, y: L.chain_matmul(y),
    lambda L, y: L.chain_matmul(y, y.t()),
    lambda L, y: L.chain_matmul(y, y.t(), y),
    lambda L, y: L.frobenius_norm(y, (0, 1)),
    lambda L, y: L.frobenius_norm(y, 1, True),
    lambda L, y: L.frobenius_norm(y, (0, 1, 1)),
    lambda L, y: L.nuclear_norm(y),
    lambda L, y: L.nuclear_norm(y, True),
    lambda L, y: L.nuclear_norm(y, (0, 1)),
    lambda L, y: L.nuclear_norm(L.ones(2, 2, 2)),
]


def run(L):
    out = []
    y = L.tensor(np.arange(12.0).reshape(3, 4) ** 1.5, dtype=L.float32, requires_grad=True)
    for call in CALLS:
        try:
            r = call(L, y)
        except Exception as e:
            out.append((type(e).__name__, str(e).replace("retrograd.", "torch.")))
            continue
        for t in r if isinstance(r, tuple) else (r,):
            out.append((tuple(t.shape), str(t.dtype).split(".")[-1],
                        t.grad_fn and t.grad_fn.name(),
                        np.round(t.detach().numpy().astype(float), 4).tolist()))
    return out



def test_calls_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = run(retrograd), run(torch)
    assert len(ours) == len(theirs)
    for i, (o, t) in enumerate(zip(ours, theirs)):
        if i in (37, 38):  # frobenius_norm: linalg.vector_norm's node, not at::norm's
            assert o[2] == "LinalgVectorNormBackward0" and t[2] == "NormBackward1"
            o, t = o[:2] + o[3:], t[:2] + t[3:]
        assert o == t, i


def test_deprecation_warnings_once():
    from retrograd import _warn_always

    _warn_always._warned.difference_update({"chain_matmul", "frobenius_norm", "nuclear_norm"})
    a = retrograd.ones(2, 2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(2):
            retrograd.chain_matmul(a, a)
            retrograd.frobenius_norm(a, (0, 1))
            retrograd.nuclear_norm(a)
    msgs = [str(x.message) for x in w]
    assert len(msgs) == 3
    assert msgs[0].startswith("torch.chain_matmul is deprecated")
    assert msgs[1].startswith("at::frobenius_norm is deprecated")
    assert msgs[2].startswith("at::nuclear_norm is deprecated")


def test_out_arguments():
    for lib in (torch, retrograd):
        out = lib.empty(0)
        lib.column_stack([lib.ones(2), lib.zeros(2)], out=out)
        assert tuple(out.shape) == (2, 2)
