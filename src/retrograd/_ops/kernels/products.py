"""NumPy kernel of addr (beta * self + alpha * outer(vec1, vec2)) with torch's checks."""

from __future__ import annotations

import numpy as np

from retrograd._ops.kernels.shape import _expand_forward

NOT_VECTOR = "addr: Expected 1-D argument {}, but got {}-D"
INTEGRAL_SCALAR = ("For integral input tensors, argument {} must not be a floating point "
                   "number.")
BOOL_SCALAR = "Boolean {} only supported for Boolean results."
INPLACE_RANK = "2D tensor expected, got {}D tensor for input"
INPLACE_SIZE = "size mismatch, input: {}, v1: {}, v2: {}"


def _check_scalar(value, name: str, result_kind: str) -> None:
    if result_kind in "biu" and isinstance(value, (float, complex)):
        raise RuntimeError(INTEGRAL_SCALAR.format(name))
    if result_kind != "b" and isinstance(value, bool):
        raise RuntimeError(BOOL_SCALAR.format(name))


def addr(s: np.ndarray, v1: np.ndarray, v2: np.ndarray, beta, alpha) -> np.ndarray:
    if v1.ndim != 1:
        raise RuntimeError(NOT_VECTOR.format("vec1", v1.ndim))
    if v2.ndim != 1:
        raise RuntimeError(NOT_VECTOR.format("vec2", v2.ndim))
    kind = s.dtype.kind
    _check_scalar(beta, "beta", kind)
    _check_scalar(alpha, "alpha", kind)
    base = _expand_forward(s, (v1.shape[0], v2.shape[0]))
    if kind == "b":
        out = np.logical_and.outer(v1, v2) if alpha else np.zeros(base.shape, bool)
        return out | base if beta else out
    out = np.multiply.outer(v1, v2)
    if alpha != 1:
        out = np.multiply(out, alpha, out=out if np.result_type(out, alpha) == out.dtype
                          else None)
    if beta == 0:  # self is ignored, nan and inf included
        return out.astype(s.dtype, copy=False)
    return np.add(out, base if beta == 1 else base * beta).astype(s.dtype, copy=False)


def check_addr_inplace(s: np.ndarray, v1: np.ndarray, v2: np.ndarray, beta, alpha) -> None:
    """addr_'s own checks: self is the (len(vec1), len(vec2)) result itself."""
    if s.ndim != 2:
        raise RuntimeError(INPLACE_RANK.format(s.ndim))
    if v1.ndim == 1 and v2.ndim == 1 and s.shape != (v1.shape[0], v2.shape[0]):
        raise RuntimeError(INPLACE_SIZE.format(list(s.shape), list(v1.shape), list(v2.shape)))
