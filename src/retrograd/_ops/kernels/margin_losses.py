"""NumPy kernels of multi_margin_loss and multilabel_margin_loss (forward, torch's checks, and
the multilabel gradient's piecewise-constant coefficients). retrograd._ops.margin_losses
declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.layout import not_implemented, type_name

_NON_EMPTY = "Expected non-empty vector or matrix with optional 0-dim batch size, but got: {}"


def frames(x: np.ndarray) -> tuple:
    """(nframe, dim) of a loss input: a matrix, a vector (one frame) or a scalar."""
    if x.ndim == 2 and x.shape[1] != 0:
        return x.shape
    if x.ndim == 1 and x.shape[0] != 0:
        return 1, x.shape[0]
    if x.ndim == 0:
        return 1, 1
    raise RuntimeError(_NON_EMPTY.format(list(x.shape)))


def _check_long(target: np.ndarray) -> None:
    if target.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {type_name(target.dtype)}")


def _reduce(per_frame: np.ndarray, reduction: int, keep_shape: tuple, dtype) -> np.ndarray:
    if reduction == 0:
        return per_frame.reshape(keep_shape).astype(dtype, copy=False)
    total = per_frame.sum(dtype=dtype)
    if reduction == 1 and per_frame.size:  # an empty batch's mean is 0 in torch
        total = total / per_frame.size
    return np.asarray(total, dtype=dtype)


# --- multi_margin_loss ------------------------------------------------------------------------


def multi_margin_check(x: np.ndarray, target: np.ndarray, weight) -> tuple:
    nframe, dim = frames(x)
    if target.ndim > 1 or target.size != nframe:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{nframe}], but got "
            f"{list(target.shape)}. Input has shape {list(x.shape)}.")
    if weight is not None and (weight.ndim > 1 or weight.size != dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                           f"{list(weight.shape)}")
    if x.dtype.kind not in "fV":
        raise not_implemented("multi_margin_loss_cpu_kernel", x.dtype)
    _check_long(target)
    if weight is not None and weight.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found "
                           f"{type_name(weight.dtype)}")
    y = target.reshape(-1)
    if y.size and (y.min() < 0 or y.max() >= dim):
        raise RuntimeError("target out of range")
    return nframe, dim


def multi_margin_forward(x, target, p, margin, weight, reduction):
    nframe, dim = multi_margin_check(x, target, weight)
    x2 = x.reshape(nframe, dim)
    y = target.reshape(-1)
    rows = np.arange(nframe)
    z = margin - x2[rows, y][:, None] + x2
    z[rows, y] = 0
    h = np.where(z > 0, z if p == 1 else z * z, 0)
    if weight is not None:
        h = h * weight[y][:, None]
    per_frame = h.sum(1) / dim
    shape = (nframe,) if target.ndim > 0 else ()
    return _reduce(per_frame, reduction, shape, x.dtype)


# --- multilabel_margin_loss -------------------------------------------------------------------


def multilabel_margin_check(x: np.ndarray, target: np.ndarray) -> tuple:
    nframe, dim = frames(x)
    if x.ndim <= 1:
        ok = target.ndim <= 1 and target.size == dim
    else:
        ok = target.ndim == 2 and target.shape == (nframe, dim)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(x.shape)}")
    if x.dtype.kind not in "fV":
        raise not_implemented("multilabel_margin_loss_forward_out_frame", x.dtype)
    _check_long(target)
    if target.size and (target.min() < -1 or target.max() >= dim):
        raise RuntimeError("argument #2 'target' is out of range")
    return nframe, dim


def _multilabel_terms(x, target) -> tuple:
    """(z, active, labels): the hinge terms 1 - x[label] + x[j] of every (target slot, class)
    pair, where they count (a slot before the row's first -1, a class that is no target, z > 0),
    and each slot's label."""
    nframe, dim = multilabel_margin_check(x, target)
    x2 = x.reshape(nframe, dim)
    t2 = target.reshape(nframe, dim)
    valid = np.cumprod(t2 != -1, axis=1).astype(bool)
    slots = int(valid.sum(1).max()) if nframe else 0
    valid, labels = valid[:, :slots], np.where(valid, t2, 0)[:, :slots]
    is_target = np.zeros((nframe, dim), bool)
    rows = np.broadcast_to(np.arange(nframe)[:, None], labels.shape)
    is_target[rows[valid], labels[valid]] = True
    z = 1 - np.take_along_axis(x2, labels, 1)[:, :, None] + x2[:, None, :]
    active = valid[:, :, None] & ~is_target[:, None, :] & (z > 0)
    return z, active, labels, (nframe, dim)


def multilabel_margin_forward(x, target, reduction):
    z, active, _, (nframe, dim) = _multilabel_terms(x, target)
    per_frame = np.where(active, z, 0).sum((1, 2)) / dim
    shape = (nframe,) if target.ndim > 1 else ()
    return _reduce(per_frame, reduction, shape, x.dtype)


def multilabel_margin_coefficients(x, target):
    """d loss_n / d x[n, j] (unreduced), shaped as x: +1/dim for every active term of class j,
    -1/dim for every active term of a slot labelled j."""
    _, active, labels, (nframe, dim) = _multilabel_terms(x, target)
    coef = active.sum(1).astype(x.dtype)
    per_slot = active.sum(2).astype(x.dtype)
    rows = np.broadcast_to(np.arange(nframe)[:, None], labels.shape)
    np.subtract.at(coef, (rows, labels), per_slot)
    return (coef / dim).astype(x.dtype).reshape(x.shape)
