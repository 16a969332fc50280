"""rrelu: leaky relu whose negative slope is drawn uniformly from [lower, upper] per element in
training, and is (lower + upper) / 2 in evaluation.

torch runs both modes through rrelu_with_noise (nodes RreluWithNoiseBackward0, and ...1 for
rrelu_): training multiplies by the drawn noise (1 where the input is positive), which the node
saves, so backward scales by the same draw. The noise is torch's draw (one uniform per element
that is not positive), so manual_seed reproduces torch's.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops import comparison as C
from retrograd._ops import pointwise as P
from retrograd._ops.kernels.activation import _float_only, _leaky_relu
from retrograd._ops.layout import inplace_forward, label_entry_points, not_implemented
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor, _wrap

_LOWER, _UPPER = 1.0 / 8.0, 1.0 / 3.0
_BOUNDS = "Lower bound should be less than or equal to the upper bound"
_leaky_relu_cpu = _float_only("leaky_relu_cpu", _leaky_relu)


def _rrelu_forward(a, noise, lower, upper, training):
    if training:
        if a.dtype.kind not in "fV" or (a.dtype.kind == "f" and a.dtype.itemsize == 2):
            raise not_implemented("rrelu_with_noise_out_cpu", a.dtype)
        return a * noise
    return _leaky_relu_cpu(a, (lower + upper) / 2)


def _uses_noise(lower, upper, training) -> bool:
    """torch's backward scales by the noise only where a range was drawn from."""
    return training and upper - lower > 1e-6


def _grad(grad, self, noise, lower, upper, training):
    if _uses_noise(lower, upper, training):
        return grad * noise
    return P.where(C.gt(self, 0), grad, grad * ((lower + upper) / 2))


def _grad_from_result(grad, result, noise, lower, upper, training):
    # the slope is positive, so the result has the input's sign
    return _grad(grad, result, noise, lower, upper, training)


_SCHEMA_ARGS = ("Tensor noise, Scalar lower=0.125, Scalar upper=0.3333333333333333, "
                "bool training=False")
rrelu_with_noise = op(f"rrelu_with_noise(Tensor self, {_SCHEMA_ARGS}) -> Tensor",
                      _rrelu_forward, grads={"self": _grad}, function=False, method=False)
rrelu_with_noise_ = op(f"rrelu_with_noise_(Tensor(a!) self, {_SCHEMA_ARGS}) -> Tensor(a!)",
                       inplace_forward(_rrelu_forward), node="RreluWithNoiseBackward1",
                       grads={"self": _grad_from_result}, function=False, method=False)


def _uniform_slopes(generator, negative: np.ndarray, dt: np.dtype, lower: float,
                    upper: float) -> np.ndarray:
    """torch's slopes: a uniform(lower, upper) double for each element that is not positive
    (in order; the others draw nothing), 1 elsewhere."""
    from retrograd._ops.kernels import torch_sampling as TS
    from retrograd._ops.random import gen

    mask = np.ascontiguousarray(negative, dtype=bool)
    slopes = np.ones(mask.shape, dt)
    if dt != np.float64:  # the bounds are held in the input's float type first
        lower, upper = float(np.float32(lower)), float(np.float32(upper))
    # (torch's rrelu kernel is built without fused multiply-adds, unlike uniform_'s)
    u = TS.unit(gen(generator), int(mask.sum()), True)
    slopes[mask] = u * (upper - lower) + lower
    return slopes


def _noise(input: Tensor, lower: float, upper: float, training: bool, generator) -> Tensor:
    """The per-element slope in training (1 where the input is positive); unused otherwise."""
    from retrograd._ops.random import draw, per_member

    a = input._data
    if not training or a.dtype.kind not in "fV":
        return _wrap(np.zeros((0,), a.dtype))

    negative = input.detach().le(0)

    def draw_noise():  # one per vmap batch member (NOTE [Random draws under vmap])
        return _wrap(draw(_uniform_slopes, generator, negative, a.dtype, float(lower),
                          float(upper)))

    return per_member(draw_noise)


def _check_bounds(lower, upper) -> None:
    if lower > upper:
        raise RuntimeError(_BOUNDS)


def rrelu(input: Tensor, lower: float = _LOWER, upper: float = _UPPER, training: bool = False,
          generator=None) -> Tensor:
    _check_bounds(lower, upper)
    noise = _noise(input, lower, upper, training, generator)
    return rrelu_with_noise(input, noise, lower, upper, training)


def rrelu_(input: Tensor, lower: float = _LOWER, upper: float = _UPPER, training: bool = False,
           generator=None) -> Tensor:
    _check_bounds(lower, upper)
    noise = _noise(input, lower, upper, training, generator)
    return rrelu_with_noise_(input, noise, lower, upper, training)


def _f_rrelu(input: Tensor, lower: float = _LOWER, upper: float = _UPPER,
             training: bool = False, inplace: bool = False) -> Tensor:
    return (rrelu_ if inplace else rrelu)(input, lower, upper, training)


def _f_rrelu_(input: Tensor, lower: float = _LOWER, upper: float = _UPPER,
              training: bool = False) -> Tensor:
    return rrelu_(input, lower, upper, training)


register("rrelu", rrelu)
register("rrelu_", rrelu_)
register_functional("rrelu", _f_rrelu)
register_functional("rrelu_", _f_rrelu_)
label_entry_points([rrelu_with_noise, rrelu_with_noise_])
