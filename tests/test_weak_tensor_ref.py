"""_C._WeakTensorRef tells whether a tensor is gone; a dual level keeps no tangent alive."""

import retrograd
from retrograd.autograd import forward_ad as fw


def test_expires_with_the_tensor():
    t = retrograd.rand(2)
    ref = retrograd._C._WeakTensorRef(t)
    assert not ref.expired()
    del t
    assert ref.expired()


def test_detach_does_not_keep_its_source_alive():
    t = retrograd.rand(2)
    ref = retrograd._C._WeakTensorRef(t)
    out = t.detach()
    del t
    assert ref.expired() and out.shape == (2,)


def test_dual_keeps_its_tangent_alive_but_the_level_does_not():
    primal = retrograd.rand(2)
    with fw.dual_level():
        tangent = retrograd.rand(2)
        ref = retrograd._C._WeakTensorRef(tangent)
        dual = fw.make_dual(primal, tangent)
        assert fw.unpack_dual(dual).tangent is tangent
        del tangent
        assert not ref.expired()
        del dual
        assert ref.expired()
