"""retrograd.ops: the op namespaces, as torch.ops.

`retrograd.ops.aten.<name>.<overload>` is every op the registry declares, as an OpOverload that
runs through the dispatcher:

>>> import retrograd
>>> retrograd.ops.aten.mul.Tensor(retrograd.tensor([1., 2.]), 3)
tensor([3., 6.])
>>> retrograd.ops.aten.mul.Tensor.__name__
'mul.Tensor'

Other namespaces (user op libraries) are added with register_namespace and then found by
attribute, `retrograd.ops.<ns>`.
"""

from __future__ import annotations

from typing import Any

from retrograd._ops.dispatch import UserNamespace, _OpNamespace, user_namespaces

aten = _OpNamespace()
_namespaces: dict = {}  # namespace name -> object whose attributes are its ops


def register_namespace(name: str, namespace: Any) -> None:
    """Make `namespace` reachable as `retrograd.ops.<name>` (its attributes are its ops)."""
    if name == "aten" or name in _namespaces and _namespaces[name] is not namespace:
        raise RuntimeError(f"retrograd.ops.{name} is already registered")
    _namespaces[name] = namespace


def __getattr__(name: str) -> Any:
    namespace = _namespaces.get(name)
    if namespace is not None:
        return namespace
    if name == "profiler":  # ops.profiler._record_function_enter/_exit (loaded on use)
        from retrograd.autograd.profiler import _record_function_ops

        return _record_function_ops
    if not name.startswith("__"):  # as torch, any name is a namespace, empty until ops are
        # defined in it (retrograd.library); not cached: a scoped library's ops go when it closes
        space = user_namespaces.get(name)
        return space if space is not None else UserNamespace(name)
    raise AttributeError(f"module 'retrograd.ops' has no attribute '{name}'")
