"""channel_shuffle: split the channels (dim 1) into `groups` and interleave them, as a copy
(node ChannelShuffleBackward0). Its gradient is the inverse shuffle, which is the shuffle with
channels / groups groups."""

from __future__ import annotations

import numpy as np

from retrograd._ops.layout import label_entry_points
from retrograd._ops.registry import op, register_functional


def _shuffle(a: np.ndarray, groups: int) -> np.ndarray:
    if a.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(a.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = a.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    split = a.reshape(a.shape[:1] + (groups, c // groups) + a.shape[2:])
    return np.ascontiguousarray(split.swapaxes(1, 2)).reshape(a.shape)


channel_shuffle = op(
    "channel_shuffle(Tensor self, SymInt groups) -> Tensor", _shuffle,
    grads={"self": lambda grad, groups: channel_shuffle(grad, grad.shape[1] // groups)},
    method=False)

register_functional("channel_shuffle", channel_shuffle)
label_entry_points([channel_shuffle])


def _native_no_derivative(grad):
    raise RuntimeError("derivative for aten::native_channel_shuffle is not implemented")


def _declare_native() -> None:
    # torch's kernel without an autograd formula (its node is NotImplemented)
    from retrograd._ops.pointwise import _not_implemented_node

    fn = _not_implemented_node(op("native_channel_shuffle(Tensor self, SymInt groups) -> Tensor",
                                  _shuffle, grads={"self": _native_no_derivative},
                                  method=False))
    register_functional("native_channel_shuffle", fn)


_declare_native()
