"""retrograd.special: torch.special's names for retrograd's ops.

As in torch, each is the op under another name (the graph records LgammaBackward0,
SigmoidBackward0 for expit, ...); only a wrong argument type is reported under torch.special's
own name (special_gammaln, ...). ndtr is torch's composite (1 + erf(x / sqrt 2)) / 2.
"""

from __future__ import annotations

from retrograd._numpy_names import numpy_names_entry
from retrograd._ops import pointwise as _pointwise
from retrograd._ops import pointwise_math as _math
from retrograd._ops import reduction as _reduction
from retrograd._ops import special_bessel as _bessel
from retrograd._ops import special_math as _special
from retrograd._ops import trigonometric as _trig
from retrograd._ops.arg_check import not_tensor, type_name
from retrograd._ops.special_digamma import digamma as _digamma
from retrograd._ops.special_digamma import int_arg
from retrograd._ops.special_digamma import lgamma as _lgamma
from retrograd._ops.special_digamma import mvlgamma as _mvlgamma
from retrograd._ops.special_digamma import polygamma as _polygamma
from retrograd._ops.special_digamma import special_zeta as _zeta
from retrograd._ops.special_gamma import igamma as _igamma
from retrograd._ops.special_gamma import igammac as _igammac
from retrograd._ops.special_polynomials import polynomial as _polynomial
from retrograd._tensor import Tensor

__all__ = ["gammaln", "digamma", "psi", "polygamma", "multigammaln", "erf", "erfc", "erfcx",
           "erfinv", "expit", "exp2", "expm1", "log1p", "logit", "logsumexp", "ndtr", "ndtri",
           "log_ndtr", "xlogy", "xlog1py", "sinc", "entr", "i0", "i0e", "i1", "i1e", "softmax",
           "log_softmax", "round", "zeta", "gammainc", "gammaincc",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p", "bessel_j0", "bessel_j1",
           "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai"]


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


def _unary(name: str, fn, doc: str):
    """special.<name>(input, *, out=None): `fn` under torch.special's name."""

    def special_fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        _tensor(f"special_{name}", input)
        return fn(input) if out is None else fn(input, out=out)

    special_fn.__name__ = special_fn.__qualname__ = name
    special_fn.__doc__ = doc
    return special_fn


erf = _unary("erf", _pointwise.erf, "The error function: torch.erf.")
erfc = _unary("erfc", _math.erfc, "The complementary error function 1 - erf: torch.erfc.")
erfcx = _unary("erfcx", _special.special_erfcx, "The scaled complementary error function "
               "exp(x^2) erfc(x).")
erfinv = _unary("erfinv", _math.erfinv, "The inverse of erf: torch.erfinv.")
expit = _unary("expit", _pointwise.sigmoid, "The logistic sigmoid: torch.sigmoid.")
exp2 = _unary("exp2", _pointwise.exp2, "2^x: torch.exp2.")
expm1 = _unary("expm1", _pointwise.expm1, "exp(x) - 1: torch.expm1.")
log1p = _unary("log1p", _pointwise.log1p, "log(1 + x): torch.log1p.")
ndtri = _unary("ndtri", _special.special_ndtri, "The inverse of ndtr (the normal quantile).")
log_ndtr = _unary("log_ndtr", _special.special_log_ndtr, "log(ndtr(x)), accurate in the "
                  "left tail.")
sinc = _unary("sinc", _trig.sinc, "The normalized sinc sin(pi x) / (pi x): torch.sinc.")
entr = _unary("entr", _special.special_entr, "The entropy term -x log(x) (0 at 0, -inf "
              "below).")
i0 = _unary("i0", _special.i0, "The modified Bessel function I0: torch.i0.")
i0e = _unary("i0e", _special.special_i0e, "exp(-|x|) I0(x).")
i1 = _unary("i1", _special.special_i1, "The modified Bessel function I1.")
i1e = _unary("i1e", _special.special_i1e, "exp(-|x|) I1(x).")
bessel_j0 = _unary("bessel_j0", _bessel.OPS["bessel_j0"], "The Bessel function of the first "
                   "kind of order 0, J0.")
bessel_j1 = _unary("bessel_j1", _bessel.OPS["bessel_j1"], "The Bessel function of the first "
                   "kind of order 1, J1.")
bessel_y0 = _unary("bessel_y0", _bessel.OPS["bessel_y0"], "The Bessel function of the second "
                   "kind of order 0, Y0 (-inf at 0, nan below).")
bessel_y1 = _unary("bessel_y1", _bessel.OPS["bessel_y1"], "The Bessel function of the second "
                   "kind of order 1, Y1 (-inf at 0, nan below).")
modified_bessel_i0 = _unary("modified_bessel_i0", _bessel.OPS["modified_bessel_i0"],
                            "The modified Bessel function of the first kind of order 0, I0.")
modified_bessel_i1 = _unary("modified_bessel_i1", _bessel.OPS["modified_bessel_i1"],
                            "The modified Bessel function of the first kind of order 1, I1.")
modified_bessel_k0 = _unary("modified_bessel_k0", _bessel.OPS["modified_bessel_k0"],
                            "The modified Bessel function of the second kind of order 0, K0 "
                            "(inf at 0, nan below).")
modified_bessel_k1 = _unary("modified_bessel_k1", _bessel.OPS["modified_bessel_k1"],
                            "The modified Bessel function of the second kind of order 1, K1 "
                            "(inf at 0, nan below).")


def _unary_x(name: str, doc: str):
    """special.<name>(x, *, out=None): the ops whose schema names their argument x."""
    fn = _bessel.OPS[name]

    def special_fn(x: Tensor, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(x, Tensor):
            raise not_tensor(f"special_{name}", {"x": x})
        return fn(x) if out is None else fn(x, out=out)

    special_fn.__name__ = special_fn.__qualname__ = name
    special_fn.__doc__ = doc
    return special_fn


scaled_modified_bessel_k0 = _unary_x("scaled_modified_bessel_k0", "exp(x) K0(x).")
scaled_modified_bessel_k1 = _unary_x("scaled_modified_bessel_k1", "exp(x) K1(x).")
spherical_bessel_j0 = _unary_x("spherical_bessel_j0", "The spherical Bessel function of the "
                               "first kind of order 0, sin(x) / x.")
airy_ai = _unary_x("airy_ai", "The Airy function Ai.")


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """log(x / (1 - x)), x first clamped to [eps, 1 - eps]: torch.logit."""
    _tensor("special_logit", input)
    return _pointwise.logit(input, eps, out=out)


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF, (1 + erf(x / sqrt 2)) / 2 (torch's composite)."""
    _tensor("special_ndtr", input)
    return (1 + _pointwise.erf(input * _SQRT1_2)) * 0.5


_SQRT1_2 = 0.7071067811865476


def _binary(name: str, fn, doc: str):
    def special_fn(input, other, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise TypeError(f"special_{name}() received an invalid combination of arguments")
        return fn(input, other) if out is None else fn(input, other, out=out)

    special_fn.__name__ = special_fn.__qualname__ = name
    special_fn.__doc__ = doc
    return special_fn


xlogy = _binary("xlogy", _math.xlogy, "x log(y), 0 where x is 0: torch.xlogy.")
gammainc = _binary("gammainc", _igamma, "The regularized lower incomplete gamma function "
                   "P(input, other): torch.igamma.")
gammaincc = _binary("gammaincc", _igammac, "The regularized upper incomplete gamma function "
                    "Q(input, other): torch.igammac.")
chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _polynomial("hermite_polynomial_h")
hermite_polynomial_he = _polynomial("hermite_polynomial_he")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l")
legendre_polynomial_p = _polynomial("legendre_polynomial_p")
xlog1py = _binary("xlog1py", _special.special_xlog1py, "x log1p(y), 0 where x is 0.")


def zeta(input, other, *, out: Tensor | None = None) -> Tensor:
    """The Hurwitz zeta function sum_k (other + k)^-input (an op of torch.special's own: its
    overloads' errors name special_zeta)."""
    return _zeta(input, other) if out is None else _zeta(input, other, out=out)


@numpy_names_entry
def logsumexp(input: Tensor, dim, keepdim: bool = False, *,
              out: Tensor | None = None) -> Tensor:
    """log(sum(exp(x))) over dim, computed stably: torch.logsumexp."""
    _tensor("special_logsumexp", input)
    if out is None:
        return _reduction.logsumexp(input, dim, keepdim)
    return _reduction.logsumexp(input, dim, keepdim, out=out)


@numpy_names_entry
def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """exp(x) normalized along dim: torch.softmax."""
    _tensor("special_softmax", input)
    return _reduction.softmax(input, dim, dtype=dtype)


@numpy_names_entry
def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """log(softmax(x)) along dim, computed stably: torch.log_softmax."""
    _tensor("special_log_softmax", input)
    return _reduction.log_softmax(input, dim, dtype=dtype)


def round(input: Tensor, *, decimals: int = 0,  # noqa: A001 - torch's name
          out: Tensor | None = None) -> Tensor:
    """Round half to even, at `decimals` places: torch.round with decimals always given (the
    graph records RoundBackward1, as torch's)."""
    _tensor("special_round", input)
    if out is None:
        return _pointwise.round(input, decimals=decimals)
    return _pointwise.round(input, decimals=decimals, out=out)
