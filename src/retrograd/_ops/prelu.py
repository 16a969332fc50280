"""prelu: leaky relu with a learned slope, one for all channels or one per channel (dim 1).

As in torch, `prelu` checks the weight and views it to broadcast over dim 1, then runs
_prelu_kernel (node PreluKernelBackward0); the weight's gradient is summed back over the
broadcast dims by the engine, then flows through the view.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops import comparison as C
from retrograd._ops import pointwise as P
from retrograd._ops.kernels.activation import _float_only
from retrograd._ops.layout import label_entry_points, type_name
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor


def _prelu_kernel_forward(a, w):
    return np.where(a > 0, a, a * w)


def _self_grad(grad, self, weight):
    return P.where(C.gt(self, 0), grad, weight * grad)


def _weight_grad(grad, self):
    return P.where(C.gt(self, 0), 0.0, self * grad)


_prelu_kernel = op("_prelu_kernel(Tensor self, Tensor weight) -> Tensor",
                   _float_only("prelu_cpu", _prelu_kernel_forward),
                   grads={"self": _self_grad, "weight": _weight_grad},
                   function=False, method=False)


def _check_weight(input: Tensor, weight: Tensor) -> None:
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{type_name(input._data.dtype)} and {type_name(weight._data.dtype)}")
    n = weight.numel()
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() > 1 else 1
        if channels != n:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
    if weight.dim() > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    _check_weight(input, weight)
    if input.dim() != weight.dim():
        shape = [1] * input.dim()
        if input.dim() > 1:
            shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return _prelu_kernel(input, weight)


register_functional("prelu", prelu)
label_entry_points([_prelu_kernel])
register("prelu", prelu, method=True)
