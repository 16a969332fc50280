"""torch.types: the type aliases annotations use (`Number`, `Device`, `_size`, ...).

retrograd has no dispatch keys or quantization schemes, so `_dispatchkey` is a string and
`_qscheme` is absent."""

from __future__ import annotations

import os
from builtins import bool as _bool
from builtins import bytes as _bytes
from builtins import complex as _complex
from builtins import float as _float
from builtins import int as _int
from builtins import str as _str
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any, TypeAlias, Union

from retrograd._device import device as _device
from retrograd._dtype import dtype as _dtype
from retrograd._global_api import SymBool, SymFloat, SymInt
from retrograd._layout import layout as _layout
from retrograd._tensor import Size, Tensor

if TYPE_CHECKING:
    from retrograd.autograd.graph import GradientEdge

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors: TypeAlias = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors: TypeAlias = Tensor | Sequence[Tensor | None]
_TensorOrTensorsOrGradEdge: TypeAlias = Union[
    Tensor, Sequence[Tensor], "GradientEdge", Sequence["GradientEdge"]]
_size: TypeAlias = Size | list[int] | tuple[int, ...]
# (SymInt and friends are classes made at import, which mypy cannot read as types)
_symsize: TypeAlias = Size | Sequence[int | SymInt]  # type: ignore[valid-type]
_dispatchkey: TypeAlias = str
IntLikeType: TypeAlias = int | SymInt  # type: ignore[valid-type]
FloatLikeType: TypeAlias = float | SymFloat  # type: ignore[valid-type]
BoolLikeType: TypeAlias = bool | SymBool  # type: ignore[valid-type]
py_sym_types = (SymInt, SymFloat, SymBool)
PySymType: TypeAlias = SymInt | SymFloat | SymBool  # type: ignore[valid-type]
Number: TypeAlias = int | float | bool
_Number = (int, float, bool)
FileLike: TypeAlias = str | os.PathLike[str] | IO[bytes]
Device: TypeAlias = _device | str | int | None


class Storage:
    """The storage protocol torch's annotations name (retrograd.UntypedStorage has it)."""

    device: _device
    dtype: _dtype

    def element_size(self) -> int:
        raise NotImplementedError

    def nbytes(self) -> int:
        raise NotImplementedError


_builtins = (_bool, _bytes, _complex, _float, _int, _str, _layout, Any)  # torch's names too
