"""Tensor methods about layouts for a library whose tensors are all dense (strided): the dense
answers (dense_dim, sparse_dim, to_dense, dequantize, is_distributed), module_load, and torch's
errors for the sparse accessors, which a strided tensor has none of; conversions to another
layout say that retrograd has only strided tensors."""

from __future__ import annotations

from typing import Any

from retrograd._layout import (
    NOT_STRIDED,
    _mkldnn,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
)
from retrograd._ops.registry import register_method
from retrograd._tensor import Tensor

REINFORCE_REMOVED = r"""reinforce() was removed.
Use torch.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = torch.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""


def dense_dim(self: Tensor) -> int:
    """All of a strided tensor's dims are dense."""
    return self.ndim


def sparse_dim(self: Tensor) -> int:
    return 0


def to_dense(self: Tensor, dtype: Any = None, *, masked_grad: Any = None) -> Tensor:
    """A strided tensor is dense already: itself (or a copy in `dtype`)."""
    return self if dtype is None else self.to(dtype)


def dequantize(self: Tensor) -> Tensor:
    """A tensor that is not quantized dequantizes to itself."""
    return self


def is_distributed(self: Tensor) -> bool:
    return False


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How load_state_dict turns `other` into the value loaded into `self` when module
    parameters are swapped: `other` detached with assign, else self updated in place."""
    return other.detach() if assign else self.copy_(other).detach()


def reinforce(self: Tensor, *args: Any, **kwargs: Any) -> None:
    raise RuntimeError(REINFORCE_REMOVED)


def _accessor(name: str, kind: str):
    def accessor(self: Tensor) -> Tensor:
        raise RuntimeError(f"{name} expected {kind} tensor layout but got Strided")

    accessor.__name__ = accessor.__qualname__ = name
    return accessor


def _conversion(name: str, layout: Any):
    def conversion(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        raise RuntimeError(NOT_STRIDED.format(layout))

    conversion.__name__ = conversion.__qualname__ = name
    return conversion


for _fn in (dense_dim, sparse_dim, to_dense, dequantize, is_distributed, module_load, reinforce):
    register_method(_fn.__name__, _fn)
for _name, _kind in (("values", "sparse"), ("indices", "sparse coordinate"),
                     ("is_coalesced", "sparse coordinate"), ("coalesce", "sparse coordinate"),
                     ("crow_indices", "sparse row compressed"),
                     ("col_indices", "sparse row compressed"),
                     ("ccol_indices", "sparse column compressed"),
                     ("row_indices", "sparse column compressed")):
    register_method(_name, _accessor(_name, _kind))
for _name, _layout in (("to_sparse", sparse_coo), ("to_sparse_coo", sparse_coo),
                       ("to_sparse_csr", sparse_csr), ("to_sparse_csc", sparse_csc),
                       ("to_sparse_bsr", sparse_bsr), ("to_sparse_bsc", sparse_bsc),
                       ("to_mkldnn", _mkldnn)):
    register_method(_name, _conversion(_name, _layout))
