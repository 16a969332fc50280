"""torch.autograd.Variable: the legacy wrapper, today an alias-making call that returns a Tensor."""

from __future__ import annotations

import warnings
from typing import Any

from retrograd import _errors as E
from retrograd._tensor import Tensor


class _VariableMeta(type):
    # every Tensor is a Variable, as in torch since 0.4
    def __instancecheck__(cls, other: Any) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False): a new leaf sharing data's memory (never its graph)."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = False,
                volatile: bool = False) -> Tensor:  # type: ignore[misc]
        if volatile:
            warnings.warn(E.VARIABLE_VOLATILE_REMOVED, UserWarning, stacklevel=2)
        if data is None:
            from retrograd import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(E.VARIABLE_DATA_NOT_TENSOR.format(type(data).__name__))
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
