"""Proxy: the stand-in value symbolic tracing passes through a program (torch.fx.Proxy).

Every operation on a Proxy records a node instead of computing: `x + 1` a call_function of
operator.add, `x.sum(1)` a call_method, `x.shape` a getattr. A Proxy has no value, so control
flow that depends on one cannot be traced.
"""

from __future__ import annotations

import operator
from typing import Any

from retrograd.fx.node import Node


class TraceError(ValueError):
    pass


class Proxy:
    """A value during symbolic tracing: `node` is the graph node that computes it."""

    def __init__(self, node: Node, tracer: Any = None) -> None:
        self.node = node
        self.tracer = tracer

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, name: str) -> Attribute:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # protocols (copy, NumPy, pickle) see a plain object
        return Attribute(self, name)

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.tracer.create_proxy("call_function", operator.setitem, (self, key, value), {})

    def __iter__(self) -> Any:
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy "
                         "is used in a loop or as a *args or **kwargs function argument. See "
                         "the torch.fx docs on pytorch.org for a more detailed explanation of "
                         "what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def __bool__(self) -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")


class Attribute(Proxy):
    """`proxy.name`: a method call when called, else a getattr node made on first use."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    @node.setter
    def node(self, value: Node) -> None:
        self._node = value

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


def _binary(op: Any) -> Any:
    def forward(self: Proxy, other: Any) -> Proxy:
        return self.tracer.create_proxy("call_function", op, (self, other), {})

    def reflected(self: Proxy, other: Any) -> Proxy:
        return self.tracer.create_proxy("call_function", op, (other, self), {})

    return forward, reflected


def _unary(op: Any) -> Any:
    def method(self: Proxy) -> Proxy:
        return self.tracer.create_proxy("call_function", op, (self,), {})

    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift",
              "rshift", "and", "or", "xor"):
    _op = getattr(operator, _name + ("_" if _name in ("and", "or") else ""))
    _fwd, _rev = _binary(_op)
    setattr(Proxy, f"__{_name}__", _fwd)
    setattr(Proxy, f"__r{_name}__", _rev)
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "getitem"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name))[0])
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(getattr(operator, _name)))
Proxy.__hash__ = object.__hash__  # type: ignore[assignment]  # __eq__ records, identity hashes
