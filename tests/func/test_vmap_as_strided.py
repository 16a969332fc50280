"""as_strided inside vmap, against torch.func.vmap on the same programs: each member's view is
placed from that member's first element (the batch stride goes in front), a view reaching
outside its member raises torch's error, and a forward-mode tangent batched by vmap gets the
same check when its dual is viewed (a detached slice's storage is its base's)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

# (description, input maker, (size, stride, storage_offset))
CASES = [
    ("inner slice, default offset", lambda lib: lib.arange(40.).reshape(4, 10)[:, 2:6],
     ((2,), (2,), None)),
    ("inner slice, offset inside", lambda lib: lib.arange(40.).reshape(4, 10)[:, 2:6],
     ((2,), (1,), 3)),
    ("before the member", lambda lib: lib.arange(40.).reshape(4, 10)[:, 2:6], ((2,), (1,), 1)),
    ("past the member", lambda lib: lib.arange(40.).reshape(4, 10)[:, 2:6], ((3,), (1,), 4)),
    ("batch stride 1", lambda lib: lib.arange(40.).reshape(4, 10).t(), ((2,), (1,), 0)),
    ("2-d view", lambda lib: lib.arange(60.).reshape(3, 20), ((2, 3), (5, 1), 1)),
    ("empty view", lambda lib: lib.arange(8.).reshape(2, 4)[:, :0], ((0,), (1,), 0)),
]


def _run(lib, make, spec):
    size, stride, offset = spec
    try:
        return lib.func.vmap(lambda v: v.as_strided(size, stride, offset))(make(lib)), None
    except RuntimeError as e:
        return None, str(e)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_as_strided_in_vmap_matches_torch(case):
    _, make, spec = case
    ours, our_error = _run(retrograd, make, spec)
    theirs, their_error = _run(torch, make, spec)
    assert our_error == their_error
    if theirs is not None:
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_gradient_through_as_strided_in_vmap():
    x = np.random.default_rng(0).standard_normal((3, 6))

    def per_sample(lib):
        f = lib.func.grad(lambda v: (v.as_strided((2, 2), (3, 1), 1) ** 2).sum())
        return lib.func.vmap(f)(lib.tensor(x)).numpy()

    with pytest.warns(UserWarning, match="performance drop"):  # the gradient's op loops
        ours = per_sample(retrograd)
    np.testing.assert_allclose(ours, per_sample(torch), rtol=1e-12)


@pytest.mark.parametrize("lib", [retrograd, torch], ids=["retrograd", "torch"])
def test_detached_slice_keeps_its_base_storage(lib):
    base = lib.arange(5.)
    p = base[1:4].detach()
    assert p.untyped_storage().nbytes() == 5 * p.element_size()
    assert p.storage_offset() == 1
    assert p[1:].storage_offset() == 2
    assert p.as_strided((5,), (1,), 0).tolist() == [0., 1., 2., 3., 4.]


@pytest.mark.parametrize("lib", [retrograd, torch], ids=["retrograd", "torch"])
def test_batched_tangent_of_a_detached_slice(lib):
    fw = lib.autograd.forward_ad
    primal = lib.randn(5)[:4].detach()
    tangent = lib.randn(10, 4)
    seen = []

    def jvp(t):
        with fw.dual_level():
            dual = fw.make_dual(primal, t)
            seen.append(fw.unpack_dual(dual).tangent is t)  # no copy under vmap
            with pytest.raises(RuntimeError, match="can access memory outside of `tensor`"):
                dual.as_strided((5,), (1,), 0)
        return t

    lib._vmap_internals._vmap(jvp, 0, 0)(tangent)  # torch.func.vmap refuses forward AD
    assert seen == [True]


# nested vmap: (outer in_dims, inner in_dims, as_strided arguments)
NESTED = [
    (0, 0, ((2,), (2,), None)),
    (1, 0, ((2,), (1,), 2)),
    (2, 1, ((2,), (1,), 0)),
    (1, 0, ((3,), (1,), 3)),  # reaches past its member: torch's error
]


@pytest.mark.parametrize("outer,inner,spec", NESTED)
def test_nested_vmap_places_each_member_as_torch(outer, inner, spec):
    size, stride, offset = spec

    def run(lib):
        f = lib.func.vmap(lib.func.vmap(lambda v: v.as_strided(size, stride, offset),
                                        in_dims=inner), in_dims=outer)
        try:
            return f(lib.arange(60.).reshape(3, 4, 5)).numpy().tolist()
        except RuntimeError as e:
            return str(e)

    assert run(retrograd) == run(torch)
