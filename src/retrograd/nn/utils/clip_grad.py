"""Gradient clipping: clip_grad_norm_ (by total norm) and clip_grad_value_ (elementwise)."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable
from typing import Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor
from retrograd.autograd.grad_mode import no_grad

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]

NONFINITE_NORM = (
    "The total norm of order {} for gradients from `parameters` is non-finite, so it cannot be "
    "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
    "`error_if_nonfinite=False`"
)


def _no_grad(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with no_grad():
            return fn(*args, **kwargs)

    return wrapper


def _as_list(tensors: Tensor | Iterable[Tensor]) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(t: Tensor, norm_type: float) -> Tensor:
    """The norm of all elements of t (as torch.linalg.vector_norm)."""
    return t.reshape(-1).norm(p=norm_type)


@_no_grad
def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The norm of the per-tensor norms (= the norm of all elements together)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return retrograd.tensor(0.0)
    norms = [_vector_norm(t, norm_type) for t in tensors]
    total = _vector_norm(retrograd.stack(norms), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(NONFINITE_NORM.format(norm_type))
    return total


@_no_grad
def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                          total_norm: Tensor, foreach: bool | None = None) -> None:
    """Scale the grads by min(1, max_norm / (total_norm + 1e-6)) in place."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))


@_no_grad
def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Rescale the gradients so that their total norm is at most max_norm; returns the total
    norm (before clipping)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        from_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if from_generator and not parameters:
            _ws.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                     stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float,
                   norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    _ws.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
             "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient element into [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
