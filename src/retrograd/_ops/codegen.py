"""Code shared by the generated entry points, save and backward functions, and the one place
they are all compiled (compile_function, NOTE [Visible generated code]; it lives in
retrograd._generated, below the Tensor, whose own constructor is generated too).

The generated functions inline what `retrograd._tensor._wrap` does (a fresh Tensor's fields,
NOTE [Field tables]): a Python call costs more than the field stores themselves on the per-op
path. Their namespace provides _nd (ndarray), _asarray and TENSOR_FIELDS.names.
"""

from __future__ import annotations

from retrograd._generated import GENERATED, compile_function
from retrograd._tensor import TENSOR_FIELDS

__all__ = ["GENERATED", "compile_function", "wrap_lines"]


def wrap_lines(arr: str, name: str, indent: str = "    ") -> list:
    """Code that makes `name` a fresh Tensor around the array in `arr` (as _wrap does: the
    fields are TENSOR_FIELDS', NOTE [Field tables])."""
    return [indent + f"if {arr}.__class__ is not _nd:", indent + f"    {arr} = _asarray({arr})",
            indent + f"{name} = _new(_T)", *TENSOR_FIELDS.lines(name, {"data": arr}, indent=indent)]
