"""In-place view ops (t_, transpose_, squeeze_, unsqueeze_, as_strided_) under forward AD and
vmap, against torch: the tangent takes the same new geometry as its primal, and a batched value
takes it for every member (NOTE [In-place view ops])."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

PROGRAMS = {
    "unsqueeze_transpose": lambda t: t.unsqueeze_(0).transpose_(0, -1) * 2,
    "squeeze_": lambda t: t.unsqueeze_(1).squeeze_(1).exp(),
    "t_": lambda t: t.t_().sin(),
    "swapdims_then_view": lambda t: t.swapdims_(0, 1).reshape(-1),
}


def _run(lib, name: str, how: str):
    rng = np.random.default_rng(0)
    x, v = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    f = PROGRAMS[name]
    if how == "jvp":
        return lib.func.jvp(lambda a: f(a.clone()), (lib.tensor(x),), (lib.tensor(v),))
    if how == "dual":
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            y = f(fw.make_dual(lib.tensor(x), lib.tensor(v)) * 1)
            p, t = fw.unpack_dual(y)
            return p, t
    batch = np.stack([x, v, x * v])
    return (lib.func.vmap(lambda a: f(a.clone()))(lib.tensor(batch)),)


@pytest.mark.parametrize("how", ["jvp", "dual", "vmap"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_inplace_view_ops_under_transforms_match_torch(name, how):
    ours, theirs = _run(retrograd, name, how), _run(torch, name, how)
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
