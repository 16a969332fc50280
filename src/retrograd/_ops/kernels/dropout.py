"""NumPy kernels of dropout: the probability check, the dims warning of dropout1d/2d/3d and
native_dropout's gradient array. retrograd._ops.dropout declares the ops. No Tensor here: plain
arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd import _warning_site as _ws

DROPOUT_P = "dropout probability has to be between 0 and 1, but got {}"


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(DROPOUT_P.format(p))


def _feature_dims_warning(name: str, nd: int, spatial: int) -> None:
    _ws.warn(
        f"{name}: Received a {nd}-D input to {name}, which is deprecated and will result in an "
        f"error in a future release. To retain the behavior and silence this warning, please use "
        f"dropout instead. Note that {name} exists to provide channel-wise dropout on inputs "
        f"with {spatial} spatial dimensions, a channel dimension, and an optional batch "
        f"dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).", stacklevel=3)


def _native_dropout_grad_array(grad, result1, p, train):
    """_native_dropout_grad on arrays (NOTE [Array formulas])."""
    scale = 1.0 if train is not None and not train else 0.0 if p >= 1 else 1.0 / (1.0 - p)
    return np.multiply(grad, result1.astype(grad.dtype) * grad.dtype.type(scale))
