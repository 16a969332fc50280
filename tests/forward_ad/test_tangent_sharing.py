"""Which tensor a tangent is, against torch: a view that is all of its base shares the base's
tangent after an in-place write; a tangent laid out unlike its primal is copied (also under
vmap); torch._vmap_internals._vmap passes None outputs through when asked."""

from __future__ import annotations

import numpy as np
import pytest

from tests.func._parity import LIBS


def _inplace_on_full_view(lib, batched: bool):
    fwAD = lib.autograd.forward_ad
    x0 = lib.zeros([2, 2])
    base = lib.zeros([2, 2])
    view = base.view_as(base)

    def run(tangent):
        with fwAD.dual_level():
            x = fwAD.make_dual(x0, tangent)
            view.copy_(x * 2)
            vt, bt = fwAD.unpack_dual(view)[1], fwAD.unpack_dual(view._base)[1]
            return vt, bt, vt is bt, vt._is_view()

    if batched:
        shared = []

        def keep(t):
            vt, bt, same, is_view = run(t)
            shared.append((same, is_view))
            return vt, bt

        vt, bt = lib._vmap_internals._vmap(keep, 0, 0)(lib.ones([3, 2, 2]))
        return vt.numpy(), bt.numpy(), shared[0]
    vt, bt, same, is_view = run(lib.ones([2, 2]))
    return vt.numpy(), bt.numpy(), (same, is_view)


@pytest.mark.parametrize("batched", [False, True])
def test_a_full_view_shares_its_base_tangent(batched):
    ours, theirs = (_inplace_on_full_view(lib, batched) for lib in LIBS)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[2] == theirs[2] == (True, False)


def _tangent_identity(lib, transposed: bool):
    fwAD = lib.autograd.forward_ad
    primal = lib.zeros([2, 2])
    if transposed:
        primal = primal.transpose(0, 1)
    tangent = lib.zeros([2, 2, 2])

    def run(t):
        with fwAD.dual_level():
            return fwAD.unpack_dual(fwAD.make_dual(primal, t))[1]

    return lib._vmap_internals._vmap(run, 0, 0)(tangent) is tangent


@pytest.mark.parametrize("transposed", [False, True])
def test_a_batched_tangent_is_copied_only_when_laid_out_unlike_its_primal(transposed):
    ours, theirs = (_tangent_identity(lib, transposed) for lib in LIBS)
    assert ours == theirs == (not transposed)


def test_legacy_vmap_passes_none_through():
    for lib in LIBS:
        f = lib._vmap_internals._vmap(lambda x: (x * 2, None), 0, 0,
                                      allow_none_pass_through=True)
        doubled, nothing = f(lib.ones(3, 2))
        assert nothing is None
        np.testing.assert_array_equal(doubled.numpy(), np.full((3, 2), 2.0))


def test_a_tangent_laid_out_unlike_its_primal_is_copied_in_the_primal_layout_and_dtype():
    def run(lib):
        fwAD = lib.autograd.forward_ad
        tangent = lib.ones(2, dtype=lib.float64)
        with fwAD.dual_level():
            t = fwAD.unpack_dual(fwAD.make_dual(lib.zeros(6)[1:3], tangent)).tangent
            return (str(t.dtype).split(".")[-1], t.storage_offset(), t.stride(), t.tolist(),
                    t is tangent)

    ours, theirs = (run(lib) for lib in LIBS)
    assert ours == theirs == ("float32", 1, (1,), [1.0, 1.0], False)
