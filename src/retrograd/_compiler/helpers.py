"""Graph targets that are not declared ops: the pieces functionalization and multi-output ops
need. Each has the name it prints with and a NumPy kernel the generated code calls."""

from __future__ import annotations

import numpy as np


class Helper:
    __slots__ = ("graph_name", "kernel", "code_name")

    def __init__(self, graph_name: str, kernel, code_name: str) -> None:
        self.graph_name = graph_name
        self.kernel = kernel
        self.code_name = code_name

    def __repr__(self) -> str:
        return self.graph_name


def _as_strided(base: np.ndarray, size: tuple, stride: tuple, offset: int) -> np.ndarray:
    """A view of `base` (read as C-contiguous memory) with element strides and offset."""
    base = np.ascontiguousarray(base)
    item = base.itemsize
    return np.ndarray(size, base.dtype, buffer=base, offset=offset * item,
                      strides=tuple(s * item for s in stride))


def _as_strided_scatter(base: np.ndarray, src: np.ndarray, size: tuple, stride: tuple,
                        offset: int) -> np.ndarray:
    """A copy of `base` with `src` written where the view (size, stride, offset) looks."""
    out = np.array(base, order="C", copy=True)
    view = _as_strided(out, size, stride, offset)
    view[...] = src
    return out


def _getitem(value, index: int):
    return value[index]


AS_STRIDED = Helper("aten.as_strided.default", _as_strided, "_as_strided")
AS_STRIDED_SCATTER = Helper("aten.as_strided_scatter.default", _as_strided_scatter,
                            "_as_strided_scatter")
GETITEM = Helper("operator.getitem", _getitem, "_getitem")
HELPERS = (AS_STRIDED, AS_STRIDED_SCATTER, GETITEM)
