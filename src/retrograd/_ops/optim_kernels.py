"""The NumPy arithmetic of the optimizers: in-place array helpers that follow torch's
single-tensor kernels, and the per-parameter Adam and SGD updates. The optimizers
(retrograd.optim) call them directly; the `_foreach_*` and `_fused_*` ops (`foreach.py`) are
made of them, so every path computes the same numbers.

NOTE [Optimizer arithmetic]
Optimizers write their updates straight into the parameters' NumPy arrays (`p._data`): no graph,
so a step costs about what its NumPy arithmetic costs. With foreach=True or fused=True they call
torch's `_foreach_*` / `_fused_*` ops (retrograd._ops.foreach), whose kernels are the helpers
below; the default single-tensor step calls them directly, or, while a dispatch mode is active,
runs torch's single-tensor ops so the mode sees what it would see under torch
(NOTE [Optimizer dispatch]). Each optimizer follows
torch's single-tensor (foreach=False) algorithm op for op, in the same order and association
(e.g. addcdiv is self + (value * t1) / t2). float64 trajectories agree with torch's to rounding;
float32 ones within an ulp or so per step, because torch's x86 kernels fuse the multiply-add of
add(alpha=)/lerp/addcmul (FMA) and its float32 sqrt (MKL) is not correctly rounded, while NumPy
does neither (emulating FMA through float64 would cost ~10x). Python-number hyperparameters are
cast once per step to the parameter's computation type (float64 for float64 params, float32
otherwise, like torch's opmath), because NumPy 2 (NEP 50) would otherwise upcast float32 arrays
to float64. Narrow floats (bfloat16, float16) are computed in float32 and rounded on write, with
torch's quirks (add's alpha is rounded to the narrow dtype first), and where torch materializes
a new tensor in the parameter's dtype `_round` rounds to it: given the same gradients their
trajectories equal torch's bit for bit. Every in-place write bumps the tensor's version counter,
as a torch in-place op would.
"""

from __future__ import annotations

import numpy as np


def _ctype(a: np.ndarray) -> type:
    """The NumPy type updates of `a` are computed in (torch's opmath type): float64 for
    float64, float32 for float32 and the narrower floats."""
    return np.float64 if a.dtype.char == "d" else np.float32


def _round(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`a` as a new tensor of the parameter's dtype would hold it."""
    return a if a.dtype == dtype else a.astype(dtype)


def _scratch(a: np.ndarray, ct: type) -> np.ndarray:
    """A new array for results shaped like `a` (ufuncs return scalars, not arrays, for 0-dim
    inputs unless given an output array)."""
    return np.empty(a.shape, ct)


# The in-place helpers compute in `ct` (dtype=ct) and write back with an unsafe cast, so
# narrow-float parameters get torch's compute-in-float32-then-round behaviour. `tmp` is an
# optional scratch array of type ct and the parameter's shape.

def _as_add_scalar(value, a: np.ndarray, ct: type):
    """torch's add rounds its alpha (and a scalar `other`) to a narrow-float tensor's own dtype
    before computing in float32; the other pointwise ops keep the float32 scalar."""
    return ct(a.dtype.type(value)) if a.itemsize < 4 else value


def _add_(dst: np.ndarray, x: np.ndarray, alpha, ct: type, tmp: np.ndarray | None = None
          ) -> None:
    """dst.add_(x, alpha=alpha): dst + alpha * x."""
    alpha = _as_add_scalar(alpha, dst, ct)
    if alpha == 1:
        np.add(dst, x, out=dst, dtype=ct, casting="unsafe")
        return
    tmp = np.multiply(x, alpha, out=tmp, dtype=ct, casting="unsafe")
    np.add(dst, tmp, out=dst, dtype=ct, casting="unsafe")


def _added(a: np.ndarray, x: np.ndarray, alpha, ct: type) -> np.ndarray:
    """a.add(x, alpha=alpha) as a new array of a's dtype."""
    out = np.multiply(x, _as_add_scalar(alpha, a, ct), out=_scratch(a, ct), dtype=ct)
    np.add(a, out, out=out, dtype=ct, casting="unsafe")
    return _round(out, a.dtype)


def _add_scalar_(dst: np.ndarray, value, ct: type) -> None:
    """dst.add_(value) for a number value."""
    np.add(dst, _as_add_scalar(value, dst, ct), out=dst, dtype=ct, casting="unsafe")


def _plus_scalar(a: np.ndarray, value, ct: type) -> np.ndarray:
    """a.add(value) for a number value, as a new array of a's dtype."""
    out = np.add(a, _as_add_scalar(value, a, ct), out=_scratch(a, ct), dtype=ct)
    return _round(out, a.dtype)


def _mul_(dst: np.ndarray, s, ct: type) -> None:
    np.multiply(dst, s, out=dst, dtype=ct, casting="unsafe")


def _lerp_(dst: np.ndarray, end: np.ndarray, weight, ct: type,
           tmp: np.ndarray | None = None) -> None:
    """dst.lerp_(end, weight), torch's two-sided formula (exact at weight 0 and 1):
    dst + w * (end - dst) for |w| < 0.5, else end + (w - 1) * (end - dst)."""
    diff = np.subtract(end, dst, out=tmp, dtype=ct, casting="unsafe")
    if abs(weight) < 0.5:
        np.multiply(diff, weight, out=diff)
        np.add(dst, diff, out=dst, dtype=ct, casting="unsafe")
    else:
        np.multiply(diff, weight - ct(1), out=diff)
        np.add(end, diff, out=dst, dtype=ct, casting="unsafe")


def _addc(dst: np.ndarray, t1: np.ndarray, t2: np.ndarray, value, ct: type,
          tmp: np.ndarray | None, combine) -> None:
    """dst + (value * t1) <combine> t2 in place: addcmul_ (multiply) and addcdiv_ (divide)."""
    if tmp is None:
        tmp = _scratch(dst, ct)
    if value == 1:
        tmp = combine(t1, t2, out=tmp, dtype=ct, casting="unsafe")
    else:
        tmp = np.multiply(t1, value, out=tmp, dtype=ct, casting="unsafe")
        combine(tmp, t2, out=tmp, dtype=ct, casting="unsafe")
    np.add(dst, tmp, out=dst, dtype=ct, casting="unsafe")


def _addcmul_(dst: np.ndarray, t1: np.ndarray, t2: np.ndarray, value, ct: type,
              tmp: np.ndarray | None = None) -> None:
    """dst.addcmul_(t1, t2, value=value): dst + (value * t1) * t2."""
    _addc(dst, t1, t2, value, ct, tmp, np.multiply)


def _addcdiv_(dst: np.ndarray, t1: np.ndarray, t2: np.ndarray, value, ct: type,
              tmp: np.ndarray | None = None) -> None:
    """dst.addcdiv_(t1, t2, value=value): dst + (value * t1) / t2."""
    _addc(dst, t1, t2, value, ct, tmp, np.divide)


# --- per-parameter updates: the default step and the fused ops share them ---------------------

def adam_moments(d: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, ct: type,
                 one_minus_beta1, beta2, one_minus_beta2, wd, shrink, decay: bool,
                 decoupled: bool, maximize: bool) -> tuple:
    """The part Adam, NAdam and RAdam share: the gradient (negated for maximize, with coupled
    weight decay added, or the parameter shrunk for decoupled decay), then the two moment
    averages updated in place. Returns the gradient used and a scratch array of type ct."""
    if maximize:
        g = np.negative(g, out=np.empty_like(g))
    if decay:
        if decoupled:
            _mul_(d, shrink, ct)
        else:
            g = _added(g, d, wd, ct)
    tmp = _scratch(d, ct)
    _lerp_(m, g, one_minus_beta1, ct, tmp)
    _mul_(v, beta2, ct)
    _addcmul_(v, g, g, one_minus_beta2, ct, tmp)
    return g, tmp


def adam_apply(d: np.ndarray, m: np.ndarray, v: np.ndarray, vmax: np.ndarray | None, ct: type,
               neg_step_size, bias_correction2_sqrt, eps, tmp: np.ndarray) -> None:
    """Adam's parameter update from its moments (AMSGrad: from the running maximum `vmax`)."""
    if vmax is not None:
        np.maximum(vmax, v, out=vmax)
        v = vmax
    # exp_avg_sq.sqrt() / bias_correction2_sqrt + eps: a new tensor of the param's dtype
    denom = _round(np.sqrt(v, out=_scratch(v, ct), dtype=ct), d.dtype)
    np.divide(denom, bias_correction2_sqrt, out=denom, dtype=ct, casting="unsafe")
    _add_scalar_(denom, eps, ct)
    _addcdiv_(d, m, denom, neg_step_size, ct, tmp)
