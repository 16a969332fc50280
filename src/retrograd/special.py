"""retrograd.special: torch.special's names for the gamma-function ops retrograd has.

As in torch, each is the op under another name (the graph records LgammaBackward0, ...); only
a wrong argument type is reported under torch.special's own name (special_gammaln, ...).
"""

from __future__ import annotations

from retrograd._ops.arg_check import not_tensor, type_name
from retrograd._ops.special_digamma import digamma as _digamma
from retrograd._ops.special_digamma import int_arg
from retrograd._ops.special_digamma import lgamma as _lgamma
from retrograd._ops.special_digamma import mvlgamma as _mvlgamma
from retrograd._ops.special_digamma import polygamma as _polygamma
from retrograd._tensor import Tensor

__all__ = ["gammaln", "digamma", "psi", "polygamma", "multigammaln"]


def _tensor(fname: str, input: object) -> None:
    if not isinstance(input, Tensor):
        raise not_tensor(fname, {"input": input})


def gammaln(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """log|Gamma(input)|: torch.lgamma."""
    _tensor("special_gammaln", input)
    return _lgamma(input, out=out)


def digamma(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The logarithmic derivative of Gamma: torch.digamma."""
    _tensor("special_digamma", input)
    return _digamma(input, out=out)


def psi(input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """digamma under its other name."""
    _tensor("special_psi", input)
    return _digamma(input, out=out)


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The n-th derivative of digamma: torch.polygamma."""
    int_arg("special_polygamma", "n", 1, n)
    if not isinstance(input, Tensor):
        raise TypeError("special_polygamma(): argument 'input' (position 2) must be Tensor, not "
                        f"{type_name(input)}")
    return _polygamma(n, input, out=out)


def multigammaln(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The multivariate log-gamma function of dimension p: torch.mvlgamma."""
    _tensor("special_multigammaln", input)
    int_arg("special_multigammaln", "p", 2, p)
    return _mvlgamma(input, p, out=out)
