"""torch's TypeError for a non-Tensor where an op takes a Tensor (`exp(object())`), instead of
whatever NumPy would say about it.

The generated entry points call `check_tensor_arg` only for an argument whose class is not one
of PLAIN (numbers and arrays, which retrograd's own code and torch's scalar overloads pass), so
the check costs nothing for tensors and scalars.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from retrograd._tensor import Tensor

# classes passed where a Tensor goes without needing the check; an op's only tensor argument
# takes no Python number (torch: `exp(1.0)` is a TypeError, `add(x, 1.0)` is not)
PLAIN = frozenset({int, float, bool, complex, np.ndarray})
PLAIN_ONLY = frozenset({np.ndarray})


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement


def type_name(value: object) -> str:
    """The type's name as CPython's tp_name gives it (torch's wording): a class defined in
    Python by its name, a C type by its dotted name unless it is a builtin."""
    t = type(value)
    if t.__flags__ & _HEAP_TYPE or t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__}.{t.__qualname__}"


def not_tensor(fname: str, args: dict) -> TypeError:
    """torch's TypeError for the first of a hand-written function's arguments (name -> value,
    in order) that is not a Tensor."""
    for position, (name, value) in enumerate(args.items(), 1):
        if not isinstance(value, Tensor):
            return TypeError(f"{fname}(): argument '{name}' (position {position}) must be "
                             f"Tensor, not {type_name(value)}")
    return TypeError(f"{fname}(): invalid arguments")


def check_tensor_arg(op, i: int, value: object, method: bool = False) -> None:
    """Raise torch's TypeError unless `value` can stand for op's tensor argument i."""
    if isinstance(value, (Tensor, np.ndarray)):
        return
    if isinstance(value, (numbers.Number, np.generic)) and len(op.tensor_idx) > 1:
        return
    arg = op.schema.args[i]
    if value is None and arg.type.endswith("?"):
        return
    name = "input" if arg.name == "self" else arg.name
    position = i if method else i + 1
    where = f" (position {position})" if position else ""
    raise TypeError(f"{op.schema.name}(): argument '{name}'{where} must be Tensor, not "
                    f"{type_name(value)}")


def check_tensor_list(fname: str, value: object, arg=None, position: int = 1) -> None:
    """torch's TypeErrors for a `Tensor[]` argument that is not a tuple or list of tensors
    (a single tensor would otherwise be iterated as its rows: `cat(x)` is an error in torch).
    Arrays pass, as they do for a single tensor argument (retrograd's own calls), and None in
    a `Tensor?[]`. `arg` is the schema's argument, or its name for a hand-written function."""
    name = arg if arg is None or isinstance(arg, str) else arg.name
    optional = arg is not None and not isinstance(arg, str) and arg.type.endswith("?[]")
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{fname}(): argument '{name or 'tensors'}' (position {position}) must "
                        f"be tuple of Tensors, not {type_name(value)}")
    for i, t in enumerate(value):
        if not (isinstance(t, (Tensor, np.ndarray)) or t is None and optional):
            raise TypeError(f"expected Tensor as element {i} in argument {position - 1}, but "
                            f"got {type_name(t)}")


def int_list_function(fname: str, method: Callable, arg: str) -> Callable:
    """The function form of a method that takes its sizes as varargs (`x.flip(0, 1)`): torch's
    function takes them as one list (`torch.flip(x, [0, 1])`), and its parser refuses a bare
    int, a missing list and extra positional arguments with these TypeErrors."""
    missing = object()

    def function(input: Tensor, *rest: Sequence[int], **kw: Any) -> Tensor:
        value = kw.pop(arg, missing)
        if rest:
            if value is not missing or len(rest) > 1:
                raise TypeError(f"{fname}() takes 2 positional arguments but {len(rest) + 1} "
                                "were given")
            value, where = rest[0], " (position 2)"
        else:
            where = ""
        if value is missing:
            raise TypeError(f'{fname}() missing 1 required positional arguments: "{arg}"')
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{fname}(): argument '{arg}'{where} must be tuple of ints, not "
                            f"{type_name(value)}")
        return method(input, value, **kw)

    function.__name__ = function.__qualname__ = fname
    return function
