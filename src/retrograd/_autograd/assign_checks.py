"""Checks for assigning `t.grad = g` and `t.data = d` and for deleting Tensor attributes, with
torch's messages."""

from __future__ import annotations

from typing import Any

from retrograd._dtype import CPP_NAMES, SCALAR_NAMES

GRAD_DTYPE = (
    "attempting to assign a gradient with dtype '{}' to a tensor with grad_dtype '{}'. The "
    "gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
    "the tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. Set "
    "grad_dtype with caution. Diverging the dtypes of a tensor and its gradient may break "
    "downstream systems that assume they match."
)
GRAD_SIZE = (
    "attempting to assign a gradient of size '{}' to a tensor of size '{}'. Please ensure that "
    "the gradient and the tensor are the same size"
)
GRAD_SELF = "can't assign Variable as its own grad"
DATA_NOT_FLOAT = (
    "data set to a tensor that requires gradients must be floating point or complex dtype"
)


# attributes torch refuses to delete, with its messages
NO_DELETE = {
    "data": "Deleting tensor data is not allowed. Delete tensor instead!",
    "requires_grad": "requires_grad must be a bool",
    "_backward_hooks": "Deletion of _backwards_hooks not allowed!",
}


def check_grad(t: Any, value: Any) -> None:
    from retrograd._tensor import Tensor

    if not isinstance(value, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                        f"{type(value).__name__}")
    if value is t:
        raise RuntimeError(GRAD_SELF)
    expected = t.grad_dtype if t._grad_fn is None else t.dtype
    if expected is not None and value.dtype is not expected:
        raise RuntimeError(GRAD_DTYPE.format(CPP_NAMES[value.dtype.name],
                                             SCALAR_NAMES[expected.name]))
    if value._data.shape != t._data.shape:
        raise RuntimeError(GRAD_SIZE.format(list(value._data.shape), list(t._data.shape)))


def check_data(t: Any, value: Any) -> None:
    from retrograd._tensor import Tensor

    if not isinstance(value, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
    if t._requires_grad and not value.is_floating_point():
        raise RuntimeError(DATA_NOT_FLOAT)
