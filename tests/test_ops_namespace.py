"""retrograd.ops: the aten namespace of OpOverloadPackets and OpOverloads, against torch.ops,
and namespaces registered by libraries."""

from __future__ import annotations

import pytest
import torch

import retrograd
from retrograd import ops


@pytest.mark.parametrize("lib", [retrograd, torch])
def test_overload_surface(lib):
    aten = lib.ops.aten
    assert repr(aten.mul) == "<OpOverloadPacket(op='aten.mul')>"
    assert repr(aten.mul.Tensor) == "<OpOverload(op='aten.mul', overload='Tensor')>"
    assert str(aten.mul.Tensor) == "aten.mul.Tensor"
    assert aten.mul.Tensor.__name__ == "mul.Tensor" and aten.mul.__name__ == "mul"
    assert aten.mul.Tensor.overloadpacket is aten.mul
    assert str(aten.sum.default._schema) == \
        "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor"
    assert aten.add.Tensor(lib.ones(2), lib.ones(2), alpha=2).tolist() == [3., 3.]
    assert aten.sum.default(lib.ones(2)).item() == 2.


@pytest.mark.parametrize("lib", [retrograd, torch])
def test_overload_errors(lib):
    aten = lib.ops.aten
    with pytest.raises(AttributeError, match="The underlying op of 'aten.mul' has no overload "
                                             "name 'foo'"):
        _ = aten.mul.foo
    with pytest.raises(AttributeError, match="'_OpNamespace' 'aten' object has no attribute "
                                             "'nosuchop'"):
        _ = aten.nosuchop
    with pytest.raises(RuntimeError, match=r"aten::mul\(\) is missing value for argument "
                                           r"'other'. Declaration: aten::mul.Tensor\(Tensor "
                                           r"self, Tensor other\) -> Tensor"):
        aten.mul.Tensor(lib.ones(2))


def test_dispatch_modes_receive_the_namespace_objects():
    from retrograd.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Record():
        retrograd.ones(2) * 3
    assert seen == [retrograd.ops.aten.mul.Tensor]


def test_registered_namespace():
    class MyOps:
        @staticmethod
        def double(x):
            return x * 2

    namespace = MyOps()
    ops.register_namespace("fx_test_ns", namespace)
    try:
        assert retrograd.ops.fx_test_ns is namespace
        assert retrograd.ops.fx_test_ns.double(retrograd.ones(1)).tolist() == [2.]
        with pytest.raises(RuntimeError, match="already registered"):
            ops.register_namespace("fx_test_ns", MyOps())
        with pytest.raises(RuntimeError, match="already registered"):
            ops.register_namespace("aten", MyOps())
    finally:
        ops._namespaces.pop("fx_test_ns")
    # as in torch, any other name is a namespace, empty until ops are defined in it
    assert retrograd.ops.fx_test_ns is not namespace
    with pytest.raises(AttributeError, match="'fx_test_ns' object has no attribute 'double'"):
        _ = retrograd.ops.fx_test_ns.double
    assert retrograd.ops.profiler._record_function_enter_new is not None
