"""NamedConstant: the base of torch's named constants that retrograd keeps as strings
(memory formats, layouts): equal to its name, so code that compares one with its name keeps
working; shown as `retrograd.<name>`; pickled as that global, so it loads as the same object."""

from __future__ import annotations


class NamedConstant(str):
    __slots__ = ()

    def __repr__(self) -> str:
        return "retrograd." + str.__str__(self)

    __str__ = __repr__

    def __reduce__(self) -> str:
        return str.__str__(self)  # the name of a retrograd global: pickle stores a reference
