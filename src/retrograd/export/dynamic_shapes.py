"""retrograd.export's dynamic dimensions: `Dim` and the hints AUTO, STATIC and DYNAMIC
(NOTE [Exported dynamic dimensions] in retrograd.export._trace)."""

from __future__ import annotations

import math
from enum import Enum
from typing import Any

__all__ = ["Dim", "DimHint", "dims"]


class DimHint(Enum):
    AUTO = "AUTO"
    STATIC = "STATIC"
    DYNAMIC = "DYNAMIC"

    def __repr__(self) -> str:
        return f"DimHint({self.value})"


class Dim:
    """A named dynamic dimension with an inclusive range. Dimensions that share one Dim must
    have the same size in every call."""

    AUTO = DimHint.AUTO
    STATIC = DimHint.STATIC
    DYNAMIC = DimHint.DYNAMIC

    def __init__(self, name: str, *, min: int | None = None,  # noqa: A002 - torch's names
                 max: int | None = None) -> None:  # noqa: A002
        lo = 0 if min is None else int(min)
        hi = math.inf if max is None else int(max)
        if lo > hi:
            raise AssertionError(f"Cannot create Dim with inconsistent min={lo}, max={max}")
        self.__name__ = name
        self.min = lo
        self.max = hi

    def __repr__(self) -> str:
        parts = [repr(self.__name__)]
        if self.min != 2:
            parts.append(f"min={self.min}")
        if self.max != math.inf:
            parts.append(f"max={self.max}")
        return f"Dim({', '.join(parts)})"


def bounds(hint: Dim | DimHint) -> tuple:
    """(min, max) a dynamic dimension may take: a Dim's range, any size for a hint."""
    return (hint.min, hint.max) if isinstance(hint, Dim) else (0, math.inf)


def dims(*names: str, min: int | None = None,  # noqa: A002 - torch's names
         max: int | None = None) -> tuple[Dim, ...]:
    """One Dim per name, all with the same range."""
    return tuple(Dim(n, min=min, max=max) for n in names)


class ValueRange:
    """A dynamic dimension's range as range_constraints shows it."""

    def __init__(self, lower: int, upper: float) -> None:
        self.lower = lower
        self.upper = upper

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ValueRange) and (self.lower, self.upper) == (other.lower,
                                                                              other.upper)

    def __hash__(self) -> int:
        return hash((self.lower, self.upper))

    def __repr__(self) -> str:
        upper = "int_oo" if self.upper == math.inf else self.upper
        return f"VR[{self.lower}, {upper}]"
