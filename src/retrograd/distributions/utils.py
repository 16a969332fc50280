"""Helpers shared by the distributions: broadcasting numbers with tensors, probs <-> logits,
lazily derived parameters, and the triangular packing the matrix distributions use."""

from __future__ import annotations

from numbers import Number
from typing import Any

import retrograd
from retrograd._tensor import Tensor

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant

__all__ = [
    "broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
    "tril_matrix_to_vec", "vec_to_tril_matrix",
]


def broadcast_all(*values: Any) -> tuple:
    """The values broadcast together; numbers become tensors of the first tensor's dtype (the
    default dtype when there is none)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        ref = next((v for v in values if isinstance(v, Tensor)), None)
        dtype = ref.dtype if ref is not None else retrograd.get_default_dtype()
        values = tuple(v if isinstance(v, Tensor) else retrograd.tensor(v, dtype=dtype)
                       for v in values)
    return tuple(retrograd.broadcast_tensors(*values))


def set_count_and_param(d: Any, total_count: Any, probs: Any, logits: Any) -> None:
    """Binomial's and NegativeBinomial's parameters: total_count broadcast with probs or
    logits (exactly one given) and of its dtype; `_param` is the one given."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name = "probs" if probs is not None else "logits"
    d.total_count, param = broadcast_all(total_count, probs if probs is not None else logits)
    setattr(d, name, param)
    d.total_count = d.total_count.type_as(param)
    d._param = param


def expand_count_and_param(d: Any, new: Any, batch_shape: Any) -> None:
    """`new`'s set_count_and_param parameters: `d`'s expanded to batch_shape."""
    new.total_count = d.total_count.expand(batch_shape)
    for name in ("probs", "logits"):
        if name in d.__dict__:
            setattr(new, name, getattr(d, name).expand(batch_shape))
            new._param = getattr(new, name)


def _standard_normal(shape: Any, dtype: Any, device: Any = None) -> Tensor:
    return retrograd.empty(tuple(shape), dtype=dtype).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """`value` summed over its `dim` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    return logits.sigmoid() if is_binary else retrograd.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities kept inside (0, 1): clamped to [eps, 1 - eps] of their dtype."""
    eps = retrograd.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    clamped = clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


class lazy_property:
    """Computed on first access (with gradients on, as torch does), then stored in the
    instance, so that repr lists it and validation skips it until then."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with retrograd.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: also a property (for introspection)."""

    def __init__(self, wrapped: Any) -> None:
        property.__init__(self, wrapped)
        lazy_property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (from diagonal `diag`) of the last two dims, row by row."""
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    mask = retrograd.ones(n, n, dtype=retrograd.bool).tril(diag)
    return mat[..., mask]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of tril_matrix_to_vec: a square matrix with zeros above diagonal `diag`."""
    # n solves n * (n + 1) / 2 + n * diag = len(vec) (with diag < 0 shrinking the triangle)
    length = vec.shape[-1]
    n = int((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * length + 4 * abs(diag)
                                * (diag + 1)) ** 0.5) / 2)
    eps = retrograd.finfo(vec.dtype).eps
    if not retrograd.is_grad_enabled() and round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mask = retrograd.ones(n, n, dtype=retrograd.bool).tril(diag)
    mat[..., mask] = vec
    return mat
