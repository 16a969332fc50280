"""Statistics: nanmean, quantile, nanquantile, mode, cov and corrcoef.

All but mode are composites, as in torch: their gradients (and node names) come from the ops
they call. quantile takes torch's steps in torch's order (sort the reduced dim last, view it as
(*kept, n), find each q's rank, gather the neighbours, lerp_ between them, then move the q dim
first with in-place view ops), so values, ties and grad_fn chains match. mode is an op of its
own (ModeBackward0) whose gradient goes to the index it reports; its NumPy kernel
(kernels/statistics.py) says how torch breaks ties.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._dims import wrap_dim
from retrograd._numpy_names import numpy_names
from retrograd._ops import reduction_helpers as H
from retrograd._ops.kernels import statistics as K
from retrograd._ops.overloads import RETURN_TYPES
from retrograd._ops.reduction import _return_type, return_types
from retrograd._ops.registry import op, register, register_method
from retrograd._tensor import Tensor, _is_wrapper

return_types.mode = _return_type("mode")
return_types.mode_out = _return_type("mode_out")
RETURN_TYPES.update(mode=return_types.mode, mode_out=return_types.mode_out)


def _scalar_type(t: Tensor) -> str:
    return D.SCALAR_NAMES[str(t.dtype).rpartition(".")[2]]


def _with_out(name: str, compute, out, args: tuple) -> Tensor:
    """out= as torch's out variants of reductions: no history, the result cast into out."""
    if out is None:
        return compute()
    from retrograd._ops.out_variant import OUT_CAST, _store, check_no_grad
    from retrograd.autograd.grad_mode import no_grad

    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    check_no_grad(name, args, (out,))
    with no_grad():
        result = compute()
    if not D.can_cast(result.dtype, out.dtype):
        raise RuntimeError(OUT_CAST.format(D.legacy_name(result.dtype), D.legacy_name(out.dtype)))
    _store(name, result._data, out)
    return out


def _copied_out(name: str, compute, out, input: Tensor) -> Tensor:
    """out= as torch's quantile_out: out must have input's dtype; the result is copied in (with
    history: a CopyBackwards node), out resized first (with torch's warning) if need be."""
    if out is None:
        return compute()
    if out.dtype != input.dtype:
        raise RuntimeError(f"{name}() out tensor must be same dtype as the input tensor")
    result = compute()
    if tuple(out.shape) != tuple(result.shape):
        from retrograd._ops.out_variant import OUT_RESIZED

        if out.numel():
            _ws.warn(OUT_RESIZED.format(list(out.shape), list(result.shape)), UserWarning,
                     stacklevel=3)
        out.resize_(result.shape)
    return out.copy_(result)


# --- nanmean -------------------------------------------------------------------------------------


@numpy_names
def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None,
            out: Tensor | None = None) -> Tensor:
    """The mean of the non-NaN elements: nansum over their count."""
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_scalar_type(input)}")

    def compute() -> Tensor:
        count = input.isnan().logical_not().sum(dim, keepdim)
        with np.errstate(invalid="ignore"):  # 0 / 0 where nothing is counted: NaN, silently
            return input.nansum(dim, keepdim, dtype=dtype).div(count)

    if out is not None and isinstance(out, Tensor) and not out.is_floating_point():
        # torch sums into out's dtype, which has no NaN to skip
        raise NotImplementedError(f'"nansum_cpu" not implemented for \'{_scalar_type(out)}\'')
    return _with_out("nanmean", compute, out, (input,))


@numpy_names
def _nanmean_method(self: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    return nanmean(self, dim, keepdim, dtype=dtype)


register("nanmean", nanmean)
register_method("nanmean", _nanmean_method)


# --- quantile, nanquantile -----------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")
_MAX_ROW = 1 << 24  # ranks are computed in the input's float dtype: exact up to 2**24


def _checked_q(input: Tensor, q, interpolation: str) -> Tensor:
    """q as a tensor of input's dtype, after torch's checks (in torch's order)."""
    from retrograd._ops.creation import tensor

    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    scalar = not isinstance(q, Tensor)
    if scalar:
        q = float(q)
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if not scalar and q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if scalar:
        return tensor(q, dtype=input.dtype)
    if q.dtype != input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if not _is_wrapper(q) and not bool(((q >= 0) & (q <= 1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    return q


def _quantile(input: Tensor, q, dim, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
    from retrograd._ops.broadcasting import broadcast_tensors
    from retrograd._ops.creation import full_like

    q = _checked_q(input, q, interpolation)
    nd = input.dim()
    d = None if dim is None else wrap_dim(dim, nd)
    # the reduced values, sorted, along the last dim
    if d is None:
        row = input.numel()
        ordered = input.flatten().sort().values
    elif d == nd - 1:
        row = input.shape[d]
        ordered = input.sort().values
    else:
        row = input.shape[d] if nd else 1
        ordered = input.unsqueeze(-1).transpose(d, -1).sort().values
    if row > _MAX_ROW:
        raise RuntimeError("quantile() input tensor is too large")
    if d is not None and nd > 0:
        kept = list(input.shape)
        if keepdim:
            kept[d] = 1
        else:
            del kept[d]
    else:
        kept = [1] * nd if keepdim else []
    ordered = ordered.view(kept + [ordered.shape[-1]])
    # each q's rank among the sorted values: the last one (a NaN) where a row holds NaN, for
    # quantile; among the non-NaN values (0 if there are none) for nanquantile
    if ignore_nan:
        ranks = q * (ordered.isnan().logical_not().sum(-1, True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = ordered.shape[-1] - 1
        scaled, has_nan = broadcast_tensors(q * last, ordered.isnan().any(-1, True))
        ranks = scaled.masked_fill(has_nan, last)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.to(D.int64)
    values = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        values.lerp_(ordered.gather(-1, ranks.ceil().to(D.int64)), weights)
    # q's dim, last so far, goes first (a 0-d q has none); in place, as torch (its nodes)
    if q.dim() == 0:
        return values.squeeze_(-1)
    return values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


@numpy_names
def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
             interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """The q-th quantiles of input (over every element, or along dim)."""
    return _copied_out("quantile",
                       lambda: _quantile(input, q, dim, keepdim, interpolation, False), out, input)


@numpy_names
def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
                interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """quantile of the non-NaN elements (NaN where a row holds nothing else)."""
    return _copied_out("quantile",
                       lambda: _quantile(input, q, dim, keepdim, interpolation, True), out, input)


@numpy_names
def _quantile_method(self: Tensor, q, dim=None, keepdim: bool = False, *,
                     interpolation: str = "linear") -> Tensor:
    return quantile(self, q, dim, keepdim, interpolation=interpolation)


@numpy_names
def _nanquantile_method(self: Tensor, q, dim=None, keepdim: bool = False, *,
                        interpolation: str = "linear") -> Tensor:
    return nanquantile(self, q, dim, keepdim, interpolation=interpolation)


register("quantile", quantile)
register("nanquantile", nanquantile)
register_method("quantile", _quantile_method)
register_method("nanquantile", _nanquantile_method)


# --- mode ----------------------------------------------------------------------------------------


op("mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
   K.mode, grads={"self": lambda grad, dim, indices, self_shape, keepdim:
                  H.select_scatter(grad, dim, indices, self_shape, keepdim)},
   differentiable_outputs=(True, False))


# --- cov, corrcoef -------------------------------------------------------------------------------

DOF_WARNING = ("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
               "number of observations.")


def _check_weights(kind: str, w: Tensor, observations: int) -> None:
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got "
                           f"{kind} with {w.dim()} dimensions")
    integral = kind == "fweights"
    if integral and (w.is_floating_point() or w.is_complex() or w.dtype == D.bool):
        raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights "
                           f"with {_scalar_type(w)} dtype")
    if not integral and not w.is_floating_point():
        raise RuntimeError("cov(): expected aweights to have floating point dtype but got "
                           f"aweights with {_scalar_type(w)} dtype")
    if w.numel() != observations:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {observations}")
    if observations and not _is_wrapper(w) and not bool(w.min().ge(0)):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance of input's rows (variables) over its columns (observations)."""
    from retrograd._ops.creation import tensor

    if input.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    if input.dtype == D.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.dim() < 2 else input
    observations = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations)
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = tensor(observations, dtype=D.int64)
    else:
        w_sum = w.sum()
        if not _is_wrapper(w_sum) and not bool(w_sum.ne(0)):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    with np.errstate(invalid="ignore"):  # no observations: NaN means
        mean = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if not _is_wrapper(norm) and bool(norm.le(0)):
        _ws.warn(DOF_WARNING, UserWarning, stacklevel=2)
        norm.zero_()
    centred = x - mean.unsqueeze(1)
    products = centred.mm((centred if w is None else centred * w).t())
    with np.errstate(invalid="ignore", divide="ignore"):  # no degrees of freedom: NaN, inf
        return products.true_divide(norm).squeeze()


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of input's rows, clipped to [-1, 1]."""
    if input.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.dim()} dimensions")
    c = cov(input)
    with np.errstate(invalid="ignore", divide="ignore"):  # NaN for a variable of no variance
        if c.dim() == 0:
            return c / c  # NaN for a zero, infinite or NaN variance, 1 otherwise
        spread = c.diagonal().sqrt()
        c = c / spread.view(-1, 1)
        c = c / spread.view(1, -1)
    return c.clip(-1, 1)


register("cov", cov, method=True)
register("corrcoef", corrcoef, method=True)
