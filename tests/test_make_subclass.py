"""Tensor._make_subclass, no_dispatch and enable_reentrant_dispatch against torch: an instance
over the data's memory, its ops going to the class's __torch_dispatch__, make_dual showing
that class aten.alias for the primal only, and a graph recorded inside the handler again under
enable_reentrant_dispatch."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def _mode_utils(lib):
    if lib is torch:
        from torch.utils._mode_utils import no_dispatch
    else:
        from retrograd.utils._mode_utils import no_dispatch
    return no_dispatch


def _logging_class(lib, seen: list, grad_fns: list):
    no_dispatch = _mode_utils(lib)

    class Logged(lib.Tensor):
        def __new__(cls, data):
            return lib.Tensor._make_subclass(cls, data)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append(str(func.overloadpacket))
            if func.overloadpacket == lib.ops.aten.alias:
                with lib.overrides.enable_reentrant_dispatch():
                    grad_fns.append(lib.rand(1, requires_grad=True).exp().grad_fn is not None)
                grad_fns.append(lib.rand(1, requires_grad=True).exp().grad_fn is not None)
            with no_dispatch():
                return func(*args, **(kwargs or {}))

    return Logged


@pytest.mark.parametrize("lib", [retrograd, torch], ids=["retrograd", "torch"])
def test_make_dual_dispatches_alias_for_the_primal_only(lib):
    seen: list = []
    grad_fns: list = []
    s = _logging_class(lib, seen, grad_fns)(lib.tensor(1.0))
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        fw.make_dual(s, lib.rand_like(s))
        assert seen.count("aten.alias") == 1
        fw.make_dual(lib.rand_like(s), s)
        assert seen.count("aten.alias") == 1
    assert grad_fns == [True, False]


@pytest.mark.parametrize("lib", [retrograd, torch], ids=["retrograd", "torch"])
def test_instance_shares_memory_and_dispatches(lib):
    seen: list = []
    data = lib.arange(6.0).reshape(2, 3)
    s = _logging_class(lib, seen, [])(data)
    assert type(s).__name__ == "Logged" and not s.requires_grad
    assert tuple(s.shape) == (2, 3)
    out = s * 2
    assert "aten.mul" in seen
    np.testing.assert_array_equal(np.asarray(out.tolist()), np.arange(6.0).reshape(2, 3) * 2)
    data.add_(1)  # the subclass instance sees writes to the data it was made from
    assert (s + 0).tolist() == (np.arange(6.0).reshape(2, 3) + 1).tolist()


@pytest.mark.parametrize("lib", [retrograd, torch], ids=["retrograd", "torch"])
def test_plain_subclass_with_require_grad(lib):
    class Plain(lib.Tensor):
        pass

    p = lib.Tensor._make_subclass(Plain, lib.ones(3), True)
    assert type(p) is Plain and p.requires_grad and p.is_leaf
    (p * p).sum().backward()
    assert p.grad.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("lib", [retrograd, torch], ids=["retrograd", "torch"])
def test_no_dispatch_hides_modes_too(lib):
    if lib is torch:
        from torch.utils._python_dispatch import TorchDispatchMode
    else:
        from retrograd.utils._python_dispatch import TorchDispatchMode
    no_dispatch = _mode_utils(lib)
    seen: list = []

    class Logging(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func.overloadpacket))
            return func(*args, **(kwargs or {}))

    x = lib.ones(3)
    with Logging():
        x.exp()
        with no_dispatch():
            x.sin()
        x.cos()
    assert seen == ["aten.exp", "aten.cos"]
