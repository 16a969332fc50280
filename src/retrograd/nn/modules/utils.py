"""Argument helpers shared by the layers: int-or-tuple expansion."""

from __future__ import annotations

import collections.abc
from itertools import repeat
from typing import Any


def _ntuple(n: int, name: str = "parse") -> Any:
    def parse(x: Any) -> tuple:
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: tuple, n: int) -> tuple:
    """(a, b) -> (b, b, a, a) for n=2: the layout F.pad wants (last dim first)."""
    return tuple(x for x in reversed(t) for _ in range(n))
