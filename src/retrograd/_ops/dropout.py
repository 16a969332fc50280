"""Dropout: dropout, feature (channel-wise) and alpha dropout, dropout1d/2d/3d, native_dropout.

Dropout on CPU is `input * noise` in torch (grad_fn MulBackward0), the noise torch's
bernoulli_(1 - p) draw, so manual_seed reproduces torch's masks; MulBackward0 saves the noise,
so backward uses the same mask.

The NumPy kernels the declarations run are in kernels/dropout.py.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._ops.kernels.dropout import (
    _check_p,
    _feature_dims_warning,
    _native_dropout_grad_array,
)
from retrograd._ops.kernels.torch_sampling import bernoulli_mask
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor, _wrap

# --- dropout ---------------------------------------------------------------------------------


_SELU_ALPHA = 1.7580993408473766  # -selu's negative saturation value, for alpha dropout


def _dropout_noise(shape: tuple, dt: np.dtype, p: float, feature: bool, batched: bool,
                   alpha: bool):
    """The noise dropout multiplies by: Bernoulli(1 - p) / (1 - p) in dtype dt, one draw per
    (sample, channel) for feature dropout; alpha dropout's (noise, shift). One kernel, so a
    compiled graph draws it as one node (random.draw)."""
    from retrograd._ops.random import gen

    lead = 2 if batched else 1
    mask_shape = shape[:lead] + (1,) * (len(shape) - lead) if feature else shape
    # torch's noise: bernoulli_(1 - p) in the input's dtype, then divided by 1 - p there
    keep = bernoulli_mask(gen(None), mask_shape, 1.0 - p).astype(dt)
    if not alpha:
        return keep / dt.type(1.0 - p)
    # alpha dropout keeps the self-normalizing mean/variance: x * keep * scale + shift
    scale = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    shift = ((keep - 1) * (_SELU_ALPHA * scale) + _SELU_ALPHA * scale * p).astype(dt)
    return keep * dt.type(scale), shift


def _dropout_impl(input: Tensor, p: float, train: bool, *, feature: bool = False,
                  alpha: bool = False, inplace: bool = False, batched: bool = True) -> Tensor:
    """torch's _dropout_impl: input * noise (alpha: input * noise + shift), input if no-op."""
    from retrograd._ops.random import draw, per_member

    if p == 0 or not train or input.numel() == 0:
        return input
    a = input._data
    if p == 1:
        zero = _wrap(np.zeros((), a.dtype))
        return input.mul_(zero) if inplace else input * zero

    def draw_noise():  # one per vmap batch member (NOTE [Random draws under vmap])
        drawn = draw(_dropout_noise, a.shape, a.dtype, float(p), feature, batched, alpha)
        return (_wrap(drawn[0]), _wrap(drawn[1])) if alpha else _wrap(drawn)

    if not alpha:
        noise = per_member(draw_noise)
        return input.mul_(noise) if inplace else input * noise
    noise, shift = per_member(draw_noise)
    if inplace:
        return input.mul_(noise).add_(shift)
    return input * noise + shift


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """torch.dropout: input itself when nothing is dropped, else input * noise."""
    return _dropout_impl(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Channel dropout: one noise value per (sample, channel), broadcast over the rest."""
    return _dropout_impl(input, p, train, feature=True)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, feature=True, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, alpha=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, alpha=True, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, feature=True, alpha=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, feature=True, alpha=True, inplace=True)


for _fn in (dropout, dropout_, feature_dropout, feature_dropout_, alpha_dropout, alpha_dropout_,
            feature_alpha_dropout, feature_alpha_dropout_):
    register(_fn.__name__, _fn)


def _functional_dropout(impl, impl_, default_training: bool):
    def f(input: Tensor, p: float = 0.5, training: bool = default_training,
          inplace: bool = False) -> Tensor:
        _check_p(p)
        return (impl_ if inplace else impl)(input, p, training)

    f.__name__ = impl.__name__
    return f


register_functional("dropout", _functional_dropout(dropout, dropout_, True))
register_functional("alpha_dropout", _functional_dropout(alpha_dropout, alpha_dropout_, False))
register_functional("feature_alpha_dropout",
                    _functional_dropout(feature_alpha_dropout, feature_alpha_dropout_, False))


def _feature(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    return (feature_dropout_ if inplace else feature_dropout)(input, p, training)


def _unbatched_feature_dropout(input: Tensor, p: float, training: bool, inplace: bool):
    """feature_dropout on input.unsqueeze(0), squeezed back (torch's no-batch-dim path)."""
    if inplace:  # one draw per channel of the unbatched input, written in place
        return _dropout_impl(input, p, training, feature=True, inplace=True, batched=False)
    return feature_dropout(input.unsqueeze(0), p, training).squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    nd = input.ndim
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    if nd == 2:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature(input, p, training, inplace)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    nd = input.ndim
    if nd not in (3, 4):
        _feature_dims_warning("dropout2d", nd, 2)
    if nd == 3:
        _ws.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    nd = input.ndim
    if nd not in (4, 5):
        _feature_dims_warning("dropout3d", nd, 3)
    if nd != 5:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature(input, p, training, inplace)


register_functional("dropout1d", dropout1d)
register_functional("dropout2d", dropout2d)
register_functional("dropout3d", dropout3d)


def _native_dropout_forward(a, p, train):
    if train is not None and not train:
        return a.copy(), np.ones(a.shape, bool)
    if p >= 1:
        return np.zeros_like(a), np.zeros(a.shape, bool)
    from retrograd._ops.random import gen

    keep = bernoulli_mask(gen(None), a.shape, 1.0 - p)
    return a * keep * a.dtype.type(1.0 / (1.0 - p)), keep


def _native_dropout_grad(grad, result1, p, train):
    scale = 1.0 if train is not None and not train else 0.0 if p >= 1 else 1.0 / (1.0 - p)
    # the mask from tensor ops, so a batched mask (vmap) is read per example
    return grad * (result1.to(grad.dtype) * scale)


native_dropout = op("native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
                    _native_dropout_forward, grads={"input": _native_dropout_grad},
                    array_grads={"input": _native_dropout_grad_array}, method=False)
