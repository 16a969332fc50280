"""torch.utils.weak: weak references and dictionaries keyed by object identity.

A Tensor cannot key a WeakKeyDictionary by itself: `==` on tensors is elementwise. These key by
identity instead: a WeakIdRef compares equal to another only when both refer to the same live
object, and an entry goes away when its key object dies (the weakref callback removes it before
anything else can be created in its place, so a dead key never matches a new object)."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any

from retrograd._tensor import Tensor

__all__ = ["TensorWeakRef", "WeakIdKeyDictionary", "WeakIdRef", "WeakTensorKeyDictionary"]

WeakRef = weakref.ref


class WeakIdRef(weakref.ref):
    """A weak reference hashed and compared by the identity of its referent."""

    __slots__ = ("_hash",)

    def __init__(self, key: Any, callback: Callable | None = None) -> None:
        # the identity hash is taken while the object lives, so the ref stays findable after
        self._hash = object.__hash__(key)
        super().__init__(key, callback)  # type: ignore[call-arg]

    def __call__(self) -> Any:
        return super().__call__()

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WeakIdRef):
            return NotImplemented
        a, b = self(), other()
        return a is b if a is not None and b is not None else self is other

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq


class WeakIdKeyDictionary(MutableMapping):
    """A dictionary whose keys are held weakly and matched by identity."""

    data: dict[Any, Any]

    def __init__(self, dict: Mapping | None = None,  # noqa: A002 - torch's parameter name
                 ref_type: type = WeakIdRef) -> None:
        self.data = {}
        self.ref_type = ref_type
        owner = weakref.ref(self)

        def remove(k: Any) -> None:
            me = owner()
            if me is not None:
                me.data.pop(k, None)

        self._remove = remove
        if dict is not None:
            self.update(dict)

    def _ref(self, key: Any) -> WeakIdRef:
        return self.ref_type(key, self._remove)

    def __getitem__(self, key: Any) -> Any:
        return self.data[self.ref_type(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.data[self._ref(key)] = value

    def __delitem__(self, key: Any) -> None:
        del self.data[self.ref_type(key)]

    def __contains__(self, key: object) -> bool:
        try:
            ref = self.ref_type(key)
        except TypeError:
            return False
        return ref in self.data

    def __len__(self) -> int:
        return sum(1 for k in list(self.data) if k() is not None)

    def __iter__(self) -> Iterator:
        for ref in list(self.data):
            obj = ref()
            if obj is not None:
                yield obj

    def __repr__(self) -> str:
        return f"<{type(self).__name__} at {len(self)} entries>"

    def copy(self) -> WeakIdKeyDictionary:
        return type(self)({k: v for k, v in self.items()}, ref_type=self.ref_type)

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> WeakIdKeyDictionary:
        from copy import deepcopy

        return type(self)({k: deepcopy(v, memo) for k, v in self.items()},
                          ref_type=self.ref_type)

    def get(self, key: Any, default: Any = None) -> Any:
        return self.data.get(self.ref_type(key), default)

    def keyrefs(self) -> list:
        return list(self.data)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        return self.data.setdefault(self._ref(key), default)


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor: `()` gives the tensor, or None once it is gone."""

    __slots__ = ("ref",)

    def __init__(self, tensor: Tensor) -> None:
        if not isinstance(tensor, Tensor):
            raise AssertionError(f"expected Tensor, got {type(tensor)}")
        self.ref = weakref.ref(tensor)

    def __call__(self) -> Tensor | None:
        return self.ref()
