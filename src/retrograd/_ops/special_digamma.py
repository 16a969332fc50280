"""lgamma, digamma, polygamma, mvlgamma and special_zeta (kernels in kernels/special_gamma.py).

Each derivative is the next function of the family, written as an op so that it differentiates
again: lgamma' = digamma, digamma' = polygamma(1, .), polygamma(n, .)' = polygamma(n + 1, .),
and mvlgamma's is the sum of digamma over its p shifted arguments (torch's mvlgamma_backward).
Integer and bool inputs compute in the default float dtype, as in torch; mvlgamma refuses bool
before that and words its cast errors its own way, so it promotes inside its forward. The Hurwitz
zeta function zeta(x, q) (torch.special.zeta; polygamma is a multiple of it) differentiates in q
only, d/dq zeta(x, q) = -x zeta(x + 1, q); its derivative in x raises torch's error.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.arg_check import type_name
from retrograd._ops.creation import arange
from retrograd._ops.kernels import special_gamma as K
from retrograd._ops.layout import inplace_forward, inplace_of, pointwise, promoting
from retrograd._ops.layout import type_name as dtype_name
from retrograd._ops.out_variant import check_no_grad
from retrograd._ops.overloads import overloaded
from retrograd._ops.registry import op, register, register_method
from retrograd._ops.unique import _no_derivative
from retrograd._tensor import Tensor

NEGATIVE_N = "polygamma(n, x) does not support negative n."
MVLGAMMA_BOOL = "The input tensor may not be a boolean tensor."
MVLGAMMA_P = "p has to be greater than or equal to 1"
# torch names the input's dtype and then the computed one (not the output's)
MVLGAMMA_CAST = "mvlgamma: result type {} can't be cast to the desired output type {}"


def int_arg(fname: str, name: str, position: int, value: object) -> int:
    """An int argument as torch's parser takes it: Python and NumPy integers, not bool."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be int, not "
                        f"{type_name(value)}")
    return int(value)


def _order(fname: str, n: object) -> int:
    n = int_arg(fname, "n", 1, n)
    if n < 0:
        raise RuntimeError(NEGATIVE_N)
    return n


def _computed_dtype(np_dtype) -> D.dtype:
    d = D.from_numpy_dtype(np_dtype)
    return d if d.is_floating_point else D.get_default_dtype()


lgamma = op("lgamma(Tensor self) -> Tensor", K.lgamma_array, promote="float",
            grads={"self": lambda grad, self: grad * digamma(self)})
digamma = op("digamma(Tensor self) -> Tensor", K.digamma_array, promote="float",
             grads={"self": lambda grad, self: grad * polygamma(1, self)})


def _polygamma(n, x: np.ndarray) -> np.ndarray:
    # promoted here rather than by the registry: `self` is not the first argument, and the
    # registry's promotion would also admit a Python number for it
    n = _order("polygamma", n)
    return K.polygamma_array(n, x.astype(_computed_dtype(x.dtype).np, copy=False))


polygamma = op("polygamma(int n, Tensor self) -> Tensor", _polygamma,
               grads={"self": lambda grad, n, self: grad * polygamma(n + 1, self)})


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


# --- mvlgamma ------------------------------------------------------------------------------------


def _mvlgamma_checks(x: np.ndarray, p: object, position: int) -> int:
    """torch's argument checks, in its order: p's type, a bool input, then p's value."""
    p = int_arg("mvlgamma", "p", position, p)
    if x.dtype == np.bool_:
        raise RuntimeError(MVLGAMMA_BOOL)
    if p < 1:
        raise RuntimeError(MVLGAMMA_P)
    return p


def _mvlgamma(x: np.ndarray, p) -> np.ndarray:
    p = _mvlgamma_checks(x, p, 2)
    return K.mvlgamma_array(x.astype(_computed_dtype(x.dtype).np, copy=False), p)


def _mvlgamma_derivative(self: Tensor, p: int) -> Tensor:
    """d/dx mvlgamma(x, p) = sum_i digamma(x - i/2), i < p, as torch forms it."""
    shifts = arange(-p / 2.0 + 0.5, 0.5, 0.5, dtype=self.dtype)
    return digamma(shifts + self.unsqueeze(-1)).sum(-1)


mvlgamma_op = op("mvlgamma(Tensor self, int p) -> Tensor", _mvlgamma,
                 grads={"self": lambda grad, self, p: grad * _mvlgamma_derivative(self, p)},
                 function=False, method=False)


def mvlgamma(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    if out is not None and isinstance(input, Tensor) and isinstance(out, Tensor):
        # torch checks the cast itself, with its own message, before writing
        check_no_grad("mvlgamma", (input,), (out,))
        _mvlgamma_checks(input._data, p, 2)
        computed = _computed_dtype(input._data.dtype)
        if not D.can_cast(computed, out.dtype):
            raise RuntimeError(MVLGAMMA_CAST.format(D.legacy_name(input.dtype),
                                                    D.legacy_name(computed)))
    return mvlgamma_op(input, p, out=out)


def _mvlgamma_method(self: Tensor, p: int) -> Tensor:
    _mvlgamma_checks(self._data, p, 1)
    return mvlgamma_op(self, p)


def _mvlgamma_inplace_check(dst: np.ndarray, p) -> None:
    _mvlgamma_checks(dst, p, 1)
    computed = _computed_dtype(dst.dtype)
    if not D.can_cast(computed, D.from_numpy_dtype(dst.dtype)):
        raise RuntimeError(MVLGAMMA_CAST.format(dtype_name(dst.dtype),
                                                D.legacy_name(computed)))


# --- names, methods and in-place variants ---------------------------------------------------------


def _named(fn: Callable, name: str, doc_from: Callable, method: bool) -> Callable:
    fn.__name__ = name
    fn.__qualname__ = f"Tensor.{name}" if method else name
    fn.__doc__ = doc_from.__doc__
    return fn


register("mvlgamma", _named(mvlgamma, "mvlgamma", mvlgamma_op, False))
register_method("polygamma", _named(_polygamma_method, "polygamma", polygamma, True))
register_method("mvlgamma", _named(_mvlgamma_method, "mvlgamma", mvlgamma_op, True))

lgamma_ = inplace_of(lgamma)
digamma_ = inplace_of(digamma)
mvlgamma_ = inplace_of(mvlgamma_op, check=_mvlgamma_inplace_check)


def _polygamma_inplace(compute: Callable) -> Callable:
    """polygamma_'s forward: n is checked before the cast check (torch's order)."""

    def forward(dst: np.ndarray, n) -> None:
        _order("polygamma_", n)
        compute(dst, n)

    return forward


# torch's schema puts self first here, and numbers this node after polygamma's
polygamma_ = op("polygamma_(Tensor(a!) self, int n) -> Tensor(a!)",
                _polygamma_inplace(inplace_forward(lambda x, n: _polygamma(n, x), "float")),
                grads={"self": lambda grad, self, n: grad * polygamma(n + 1, self)},
                node="PolygammaBackward1", function=False)


# --- special_zeta ----------------------------------------------------------------------------

_zeta_kernel = pointwise(promoting(K.zeta_array, (0, 1), to_float=True))
_zeta_in_q = {"other": lambda grad, self, other: grad * -self * special_zeta(self + 1.0, other)}
special_zeta_t = op("special_zeta(Tensor self, Tensor other) -> Tensor", _zeta_kernel,
                    method=False, grads={"self": _no_derivative("zeta"), **_zeta_in_q})
special_zeta_ss = op("special_zeta.self_scalar(Scalar self, Tensor other) -> Tensor",
                     _zeta_kernel, method=False, grads=_zeta_in_q)
special_zeta_so = op("special_zeta.other_scalar(Tensor self, Scalar other) -> Tensor",
                     _zeta_kernel, method=False, grads={"self": _no_derivative("zeta")})
special_zeta = overloaded("special_zeta")
