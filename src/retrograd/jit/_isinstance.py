"""jit.isinstance: isinstance that also checks the element types of typing containers
(List[int], Dict[str, Tensor], Tuple[Tensor, int], Optional[...], Union[...])."""

from __future__ import annotations

import builtins
import collections.abc
import types
import typing
from typing import Any, Union, get_args, get_origin

from retrograd import _warning_site as _ws

__all__ = ["isinstance"]

# a container type without its element types is refused, as by torch
_BARE_NAMES: dict[Any, str] = {
    dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict",  # noqa: UP006
    typing.List: "List", typing.Optional: "Optional", typing.Tuple: "Tuple",  # noqa: UP006
}


def _refuse_bare(target_type: Any) -> None:
    try:
        name = _BARE_NAMES.get(target_type)
    except TypeError:  # an unhashable annotation is not one of the bare names
        return
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(f"Attempted to use {name} without contained types. Please add "
                           f"contained type, e.g. {name}[int, int]")
    raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                       f"contained type, e.g. {name}[int]")


def _warn_if_empty(obj: Any) -> None:
    if builtins.isinstance(obj, (list, dict, tuple)) and len(obj) == 0:
        _ws.warn("The inner type of a container is lost when calling torch.jit.isinstance "
                 "in eager mode. For example, List[int] would become list and therefore "
                 "falsely return True for List[float] or List[str].", stacklevel=4)


def _matches(obj: Any, tp: Any) -> bool:
    if tp is Any:
        return True
    if tp is None:
        tp = type(None)
    if get_origin(tp) is not None:
        return _matches_generic(obj, tp)
    _refuse_bare(tp)
    return builtins.isinstance(obj, tp)


def _matches_generic(obj: Any, tp: Any) -> bool:
    _refuse_bare(tp)
    origin, args = get_origin(tp), get_args(tp)
    if origin is list:
        _warn_if_empty(obj)
        return builtins.isinstance(obj, list) and all(_matches(v, args[0]) for v in obj)
    if origin is dict:
        _warn_if_empty(obj)
        return builtins.isinstance(obj, dict) and all(
            _matches(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        _warn_if_empty(obj)
        if not builtins.isinstance(obj, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(v, args[0]) for v in obj)
        return len(obj) == len(args) and all(_matches(v, t) for v, t in zip(obj, args))
    if origin is Union or origin is types.UnionType:  # Optional[X] is Union[X, None]
        return any(_matches(obj, t) for t in args)
    return False  # other generics (Callable, Future, ...) are not checked, as in torch


def isinstance(obj: Any, target_type: Any) -> bool:
    """Whether `obj` is of `target_type`, element types of typing containers included; a
    tuple of types matches if any does."""
    if builtins.isinstance(target_type, collections.abc.Container):
        if not builtins.isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type "
                               "or a tuple of types")
        return any(isinstance(obj, t) for t in target_type)
    return _matches(obj, target_type)
