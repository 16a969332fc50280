"""Layouts: retrograd.strided and torch's other layout names.

Every retrograd tensor is strided (dense, NumPy-backed); the sparse, mkldnn and jagged layouts
exist as names so code that compares or passes them runs, and a factory asked for one of them
says that retrograd has only strided tensors instead of quietly making a dense one.

A layout is a NamedConstant, as a memory format is.
"""

from __future__ import annotations

from retrograd._named_constant import NamedConstant


class layout(NamedConstant):
    __slots__ = ()
    __module__ = "retrograd"  # shown as retrograd.layout, like torch.layout


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")
jagged = layout("jagged")

NOT_STRIDED = ("retrograd has strided (dense) tensors only; layout {} is not available "
               "(sparse, mkldnn and jagged tensors are out of its scope)")


def check_layout(value: object) -> None:
    """A factory's `layout` argument: None or strided pass, another layout is refused, and
    anything else is the wrong type (as torch's argument parser says)."""
    if value is None or value is strided:
        return
    if value.__class__ is layout:
        raise RuntimeError(NOT_STRIDED.format(value))
    if value == "strided":  # the name, as retrograd accepted before the layout objects
        return
    raise TypeError(f"argument 'layout' must be retrograd.layout, not {type(value).__name__}")
