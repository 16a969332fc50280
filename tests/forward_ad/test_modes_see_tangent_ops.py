"""Forward AD sits above the dispatch modes, as torch's does (NOTE [Forward AD above modes]): a
mode entered around a dual level, inside one, or around func.jvp sees the primal op and then the
ops that compute its tangent, in torch's order. torch also shows metadata checks (alias,
is_same_size, _has_same_storage_numel) that retrograd does not run as ops; the comparison leaves
those out."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import forward_ad as rfw
from retrograd.utils._python_dispatch import TorchDispatchMode

torch = pytest.importorskip("torch")
from torch.autograd import forward_ad as tfw  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode as TorchMode  # noqa: E402

# torch's bookkeeping ops around tangents, and the views make_dual takes in either library
_METADATA = {"alias", "is_same_size", "_has_same_storage_numel", "view"}


def _logger(base):
    class Log(base):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = str(func).split(".")[1]
            if name not in _METADATA:
                self.seen.append(str(func))
            return func(*args, **(kwargs or {}))

    return Log


def _program(lib, fw, mode_cls, where: str):
    x = lib.tensor(np.linspace(-1.0, 1.0, 4))
    v = lib.tensor(np.linspace(0.5, 2.0, 4))
    log = mode_cls()

    def body(d):
        return fw.unpack_dual((d.sin() * d).exp().tanh()).tangent

    if where == "outside":
        with log, fw.dual_level():
            tangent = body(fw.make_dual(x, v))
    elif where == "inside":
        with fw.dual_level():
            d = fw.make_dual(x, v)
            with log:
                tangent = body(d)
    else:  # around func.jvp
        with log:
            _, tangent = lib.func.jvp(lambda a: (a.sin() * a).exp().tanh(), (x,), (v,))
    return log.seen, tangent


@pytest.mark.parametrize("where", ["outside", "inside", "jvp"])
def test_a_mode_sees_the_tangent_ops_as_torch_does(where):
    ours, our_tangent = _program(retrograd, rfw, _logger(TorchDispatchMode), where)
    theirs, their_tangent = _program(torch, tfw, _logger(TorchMode), where)
    assert ours == theirs
    assert "aten.cos.default" in ours  # sin's tangent
    np.testing.assert_allclose(our_tangent.numpy(), their_tangent.numpy(), rtol=1e-12)


def test_no_dispatch_hides_forward_ad_too():
    from retrograd.utils._mode_utils import no_dispatch

    x, v = retrograd.randn(3), retrograd.randn(3)
    with rfw.dual_level():
        d = rfw.make_dual(x, v)
        with no_dispatch():
            y = d.sin()  # runs as a plain op: no tangent
        assert rfw.unpack_dual(y).tangent is None
        assert rfw.unpack_dual(d.sin()).tangent is not None
