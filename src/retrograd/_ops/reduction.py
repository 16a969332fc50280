"""Reductions: sum, mean, prod, max/min, var/std, norms, logsumexp, cumulative ops, softmax.

Forwards are one or two NumPy calls writing row-major results (torch allocates reduction outputs
contiguous whatever the input's layout). Backward formulas follow torch's derivatives.yaml and
are written with retrograd ops (plus the private helpers of reduction_helpers), so they
differentiate again; where torch branches on the data (prod and cumprod with zeros) so do we.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._autograd.state import state
from retrograd._dims import wrap_dim
from retrograd._numpy_names import numpy_names
from retrograd._ops import reduction_helpers as H
from retrograd._ops.kernels import reduction as K
from retrograd._ops.kernels.reduction import count as _count
from retrograd._ops.kernels.reduction import cumulative as _cumulative
from retrograd._ops.kernels.reduction import dims as _dims
from retrograd._ops.kernels.reduction import float_acc as _float_acc
from retrograd._ops.kernels.reduction import float_sum as _float_sum
from retrograd._ops.kernels.reduction import out_shape as _out_shape
from retrograd._ops.kernels.reduction import reduce as _reduce
from retrograd._ops.kernels.reduction import reduced_axes as _axes
from retrograd._ops.kernels.reduction import scalar_name as _scalar_name
from retrograd._ops.kernels.reduction import upcast16 as _upcast16
from retrograd._ops.overloads import RETURN_TYPES, composite, expose_as, overloaded
from retrograd._ops.registry import op, register, register_functional, register_method
from retrograd._tensor import Tensor, _is_wrapper, _wrap

# messages, worded as torch words them
NO_DIM_EMPTY = ("{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                "reduction dim with the 'dim' argument.")
ARG_NO_DIM_EMPTY = "{}(): Expected reduction dim to be specified for input.numel() == 0."
EMPTY_DIM = "{}(): Expected reduction dim {} to have non-zero size."
ARG_BOOL = "{}(): does not support bool input"
MEAN_DTYPE = ("mean(): could not infer output dtype. {} dtype must be either a floating point or "
              "complex dtype. Got: {}")
NOT_IMPLEMENTED_KERNEL = '"{}" not implemented for \'{}\''
IMPLICIT_DIM = ("Implicit dimension choice for {} has been deprecated. Change the call to include "
                "dim=X as an argument.")
AMINMAX_EMPTY = ("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                 "no identity.")


# --- dims ------------------------------------------------------------------------------------


def _numel_over(shape: tuple, dim) -> int:
    return _count(shape, _axes(dim, len(shape)))


def expand_reduced(grad, shape: tuple, dim, keepdim: bool):
    """Broadcast a reduction's gradient back over the reduced dims."""
    return unsqueeze_reduced(grad, len(shape), dim, keepdim).expand(shape)


def _unsqueezed_shape(gshape: tuple, ndim: int, dim, keepdim: bool) -> list | None:
    """A reduction's gradient shape with size-1 dims where the reduction removed them (so it
    broadcasts against the input); None where it broadcasts as it is (keepdim, a full
    reduction's 0-dim gradient)."""
    if keepdim or ndim == 0:
        return None
    axes = _axes(dim, ndim)
    if axes is None:
        return None
    shape = list(gshape)
    for d in sorted(axes):
        shape.insert(d, 1)
    return shape


def unsqueeze_reduced(grad, ndim: int, dim, keepdim: bool):
    shape = _unsqueezed_shape(grad._data.shape, ndim, dim, keepdim)
    return grad if shape is None else grad.reshape(shape)


def _expand_reduced_array(grad, shape: tuple, dim, keepdim: bool):
    """expand_reduced on an array (NOTE [Array formulas]); a read-only broadcast view, as the
    Tensor formula's expand is."""
    kept = _unsqueezed_shape(grad.shape, len(shape), dim, keepdim)
    return np.broadcast_to(grad if kept is None else grad.reshape(kept), shape)


def _check_nonempty(name: str, a, axes) -> None:
    if a.size:
        return
    if axes is None:
        raise RuntimeError(NO_DIM_EMPTY.format(name))
    for d in axes:
        if a.shape[d] == 0:
            raise IndexError(EMPTY_DIM.format(name, d))


# --- sum, nansum, mean -----------------------------------------------------------------------


def _acc_dtype(a, dtype) -> np.dtype:
    if dtype is not None:
        return dtype.np
    if a.dtype.kind in "biu":
        return _INT64
    return a.dtype


_INT64 = np.dtype(np.int64)


def _sum_np(fn, a, dim, keepdim, dtype):
    out_dt = _acc_dtype(a, dtype)
    if dtype is not None and a.dtype != out_dt:
        a = a.astype(out_dt)
    axes = _axes(dim, a.ndim)
    acc = _float_acc(out_dt)
    if acc is not None:
        return _reduce(fn, a.astype(acc), axes, keepdim).astype(out_dt)
    return _reduce(fn, a, axes, keepdim, out_dt, dtype=out_dt)


def _own_float(a, dtype) -> bool:
    """A float32/float64 array reduced in its own dtype (no accumulation dtype to pick)."""
    return dtype is None and a.dtype.kind == "f" and a.dtype.itemsize >= 4


def _sum_forward(a, dim, keepdim, dtype):
    if _own_float(a, dtype):
        return _float_sum(a, _axes(dim, a.ndim), keepdim)
    return _sum_np(np.sum, a, dim, keepdim, dtype)


_sum_all = op("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
              lambda a, dtype: _sum_forward(a, None, False, dtype),
              grads={"self": lambda grad, self_shape: grad.expand(self_shape)},
              array_grads={"self": lambda grad, self_shape: np.broadcast_to(grad, self_shape)})

# sum(x) is sum(); a dim, even None, selects sum.dim_IntList, as in torch
_sum_dim = op("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, "
              "ScalarType? dtype=None) -> Tensor", _sum_forward,
              grads={"self": lambda grad, self_shape, dim, keepdim:
                     expand_reduced(grad, self_shape, dim, keepdim)},
              array_grads={"self": lambda grad, self_shape, dim, keepdim:
                           _expand_reduced_array(grad, self_shape, dim, keepdim)})
sum = overloaded("sum")  # noqa: A001 - torch's name


def _nansum_forward(a, dim, keepdim, dtype):
    fn = np.nansum if a.dtype.kind in "fV" or (dtype is not None and dtype.is_floating_point) \
        else np.sum
    return _sum_np(fn, a, dim, keepdim, dtype)


nansum = op("nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, "
            "ScalarType? dtype=None) -> Tensor", _nansum_forward,
            grads={"self": lambda grad, self, dim, keepdim:
                   unsqueeze_reduced(grad, self.dim(), dim, keepdim)
                   * H.mask(self, "notnan")})


def _mean_forward(a, dim, keepdim, dtype):
    if a.size and _own_float(a, dtype):
        axes = _axes(dim, a.ndim)
        total = _float_sum(a, axes, keepdim)
        return np.true_divide(total, _count(a.shape, axes), out=total)
    if dtype is None and a.dtype.kind in "biu":
        raise RuntimeError(MEAN_DTYPE.format("Input", _scalar_name(a.dtype)))
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(MEAN_DTYPE.format("Optional", _scalar_name(dtype.np)))
    out_dt = _acc_dtype(a, dtype)
    axes = _axes(dim, a.ndim)
    if dim is not None and a.ndim == 0:
        return a.astype(out_dt)
    acc = _float_acc(out_dt)
    if acc is not None:
        return _mean_forward(a.astype(acc), dim, keepdim, None).astype(out_dt)
    s = _sum_np(np.sum, a, dim, keepdim, dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.true_divide(s, _count(a.shape, axes), out=s if s.ndim else None),
                          dtype=out_dt)


_mean_all = op("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor",
               lambda a, dtype: _mean_forward(a, None, False, dtype),
               grads={"self": lambda grad, self_shape:
                      grad.expand(self_shape) / builtins.max(_numel_over(self_shape, None), 1)},
               array_grads={"self": lambda grad, self_shape: np.broadcast_to(
                   np.true_divide(grad, builtins.max(_numel_over(self_shape, None), 1)),
                   self_shape)})

_mean_dim = op("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, "
               "ScalarType? dtype=None) -> Tensor", _mean_forward,
               grads={"self": lambda grad, self_shape, dim, keepdim:
                      expand_reduced(grad, self_shape, dim, keepdim)
                      / _numel_over(self_shape, dim)},
               array_grads={"self": lambda grad, self_shape, dim, keepdim:
                            _expand_reduced_array(
                                np.true_divide(grad, _numel_over(self_shape, dim)),
                                self_shape, dim, keepdim)})
mean = overloaded("mean")


# --- prod ------------------------------------------------------------------------------------


def _prod_forward(a, dim, keepdim, dtype):
    out_dt = _acc_dtype(a, dtype)
    if dtype is not None and a.dtype != out_dt:
        a = a.astype(out_dt)
    axes = None if dim is None else (wrap_dim(dim, a.ndim),)
    acc = _float_acc(out_dt)
    if acc is not None:
        with np.errstate(over="ignore"):  # past the 16-bit range is inf, silently
            return _reduce(np.prod, a.astype(acc), axes, keepdim).astype(out_dt)
    return _reduce(np.prod, a, axes, keepdim, out_dt, dtype=out_dt)


def _has_zero(t: Tensor) -> bool:
    """Whether t holds a zero. A batched value (vmap) answers yes without looking: its
    examples differ, and the path for zeros is exact for every value, as torch takes it for
    tensor subclasses."""
    return _is_wrapper(t) or not t._data.all()


def _exclusive_cumprod(x, dim: int, reverse: bool):
    """Product of the elements before (after, if reverse) each position along dim."""
    if reverse:
        return H.flip(_exclusive_cumprod(H.flip(x, dim), dim, False), dim)
    return H.shift(x, dim, 1, 1.0).cumprod(dim)


def _prod_of_others(x, dim: int):
    """prod over dim of every element but the one at each position, exact with zeros."""
    return _exclusive_cumprod(x, dim, False) * _exclusive_cumprod(x, dim, True)


def _prod_backward(grad, self, result):
    if self.dim() == 0:
        return grad
    if not _has_zero(self):
        return grad * (result / self)
    if not state.grad_enabled and not _is_wrapper(self) and \
            self.numel() - np.count_nonzero(self._data) > 1:
        # first order with two zeros: every product of the others has a zero factor (the
        # products below could meet an overflow first, 0 * inf, in narrow types); the second
        # order is not zero, so with create_graph the products are built, as torch
        from retrograd._ops.creation import zeros_like

        return zeros_like(self)
    return (grad * _prod_of_others(self.reshape(-1), 0)).reshape(self.shape)


def _prod_dim_backward(grad, self, result, dim, keepdim):
    if self.dim() == 0:
        return grad
    d = wrap_dim(dim, self.dim())
    if not keepdim:
        grad, result = grad.unsqueeze(d), result.unsqueeze(d)
    if not _has_zero(self):
        return grad * (result / self)
    return grad * _prod_of_others(self, d)


_prod_all = op("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor",
               lambda a, dtype: _prod_forward(a, None, False, dtype),
               grads={"self": _prod_backward})
_prod_dim = op("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, "
               "ScalarType? dtype=None) -> Tensor", _prod_forward,
               grads={"self": _prod_dim_backward})
prod = overloaded("prod")


# --- return types of the (values, indices) reductions ----------------------------------------


class _ReturnType(tuple):
    """A named tuple like torch.return_types.max (a structseq): indexable, unpackable, with
    named fields, made from one sequence of n_fields values."""

    __slots__ = ()
    _fields: tuple = ("values", "indices")
    n_fields = n_sequence_fields = 2
    n_unnamed_fields = 0

    def __new__(cls, sequence):
        sequence = tuple(sequence)
        n = cls.n_fields
        if len(sequence) != n:
            raise TypeError(f"retrograd.return_types.{cls.__name__}() takes a {n}-sequence "
                            f"({len(sequence)}-sequence given)")
        return tuple.__new__(cls, sequence)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"retrograd.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self),))


def _return_type(name: str, fields: tuple = ("values", "indices")) -> type:
    ns = {"__slots__": (), "_fields": fields, "__module__": __name__,
          "__qualname__": f"return_types.{name}", "n_fields": len(fields),
          "n_sequence_fields": len(fields)}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    return type(name, (_ReturnType,), ns)


class _ReturnTypes(type):
    """return_types' class: op families add their types to it as they are declared (linalg,
    scans, statistics, ...), so its attributes are open, for the type checker too."""

    def __getattr__(cls, name: str) -> Any:
        raise AttributeError(f"retrograd.return_types has no attribute '{name}'")

    def __setattr__(cls, name: str, value: Any) -> None:
        super().__setattr__(name, value)


class return_types(metaclass=_ReturnTypes):  # noqa: N801 - torch.return_types
    """The named tuple types the multi-output ops return."""

    max = _return_type("max")
    min = _return_type("min")
    median = _return_type("median")
    nanmedian = _return_type("nanmedian")
    aminmax = _return_type("aminmax", ("min", "max"))
    aminmax_out = _return_type("aminmax_out", ("min", "max"))
    sort = _return_type("sort")
    sort_out = _return_type("sort_out")
    topk = _return_type("topk")
    topk_out = _return_type("topk_out")
    kthvalue = _return_type("kthvalue")
    kthvalue_out = _return_type("kthvalue_out")
    linalg_qr = _return_type("linalg_qr", ("Q", "R"))


# --- amax, amin, max, min, argmax, argmin ----------------------------------------------------


def _amax_grad(grad, self, result, dim, keepdim):
    """grad split evenly among the elements equal to the extreme value (torch's amax rule)."""
    nd = self.dim()
    grad = unsqueeze_reduced(grad, nd, dim, keepdim)
    m = H.eq_mask(self, unsqueeze_reduced(result, nd, dim, keepdim), False)
    axes = _axes(dim, nd)
    count = m.sum(axes, keepdim=True) if nd else m
    return grad / count * m


def _extreme_forward(name: str, fn):
    def forward(a, dim, keepdim):
        axes = _axes(dim, a.ndim)
        _check_nonempty(name, a, axes)
        return _reduce(fn, a, axes, keepdim)

    return forward


amax = op("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
          _extreme_forward("amax", np.max), grads={"self": _amax_grad})
amin = op("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
          _extreme_forward("amin", np.min), grads={"self": _amax_grad})


def _evenly_distribute(grad, self, result):
    """Full max/min/median backward: grad shared by the elements equal to the result; a NaN
    result gives it to the NaNs."""
    m = H.eq_mask(self, result, True)
    return m * (grad / m.sum())


def _full_forward(name: str, fn):
    def forward(a):
        if a.size == 0:
            raise RuntimeError(NO_DIM_EMPTY.format(name))
        return np.asarray(fn(a))

    return forward


def _select_dim_forward(name: str, fn, argfn):
    def forward(a, dim, keepdim):
        d = wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        if a.shape[d] == 0:
            raise IndexError(EMPTY_DIM.format(name, d))
        return _reduce(fn, a, (d,), keepdim), _reduce(argfn, a, d, keepdim, np.int64)

    return forward


def _select_grad(grad, dim, indices, self_shape, keepdim):
    return H.select_scatter(grad, dim, indices, self_shape, keepdim)


_max_all = op("max(Tensor self) -> Tensor", _full_forward("max", np.max), node="MaxBackward1",
              grads={"self": _evenly_distribute})
_min_all = op("min(Tensor self) -> Tensor", _full_forward("min", np.min), node="MinBackward1",
              grads={"self": _evenly_distribute})
_max_dim = op("max.dim(Tensor self, int dim, bool keepdim=False) -> "
              "(Tensor values, Tensor indices)", _select_dim_forward("max", np.max, np.argmax),
              node="MaxBackward0", grads={"self": _select_grad},
              differentiable_outputs=(True, False))
_min_dim = op("min.dim(Tensor self, int dim, bool keepdim=False) -> "
              "(Tensor values, Tensor indices)", _select_dim_forward("min", np.min, np.argmin),
              node="MinBackward0", grads={"self": _select_grad},
              differentiable_outputs=(True, False))
# max(a, b) is maximum (its node too): the comparison family declares it
expose_as("max", "max.other(Tensor self, Tensor other) -> Tensor", "maximum")
expose_as("min", "min.other(Tensor self, Tensor other) -> Tensor", "minimum")
RETURN_TYPES.update(max=return_types.max, min=return_types.min)


def _arg_forward(name: str, fn):
    def forward(a, dim, keepdim):
        if a.dtype.kind == "b":
            raise RuntimeError(ARG_BOOL.format(name))
        if dim is None:
            if a.size == 0:
                raise IndexError(ARG_NO_DIM_EMPTY.format(name))
            idx = np.asarray(fn(a), dtype=np.int64)
            return idx.reshape((1,) * a.ndim) if keepdim else idx
        d = wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            return np.zeros((), np.int64)
        if a.shape[d] == 0:
            raise IndexError(EMPTY_DIM.format(name, d))
        return _reduce(fn, a, d, keepdim, np.int64)

    return forward


argmax = op("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
            _arg_forward("argmax", np.argmax))
argmin = op("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
            _arg_forward("argmin", np.argmin))


def _aminmax_forward(a, dim, keepdim):
    if dim is None:
        if a.size == 0:
            raise RuntimeError(AMINMAX_EMPTY)
        axes = None
    else:
        d = wrap_dim(dim, a.ndim)
        if a.ndim and a.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        axes = (d,) if a.ndim else None
    return _reduce(np.min, a, axes, keepdim), _reduce(np.max, a, axes, keepdim)


def _aminmax_grad(grads, self, result0, result1, dim, keepdim):
    out = None
    for g, r in zip(grads, (result0, result1)):
        if g is not None:
            part = _amax_grad(g, self, r, dim, keepdim)
            out = part if out is None else out + part
    return out


op("aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
   _aminmax_forward, grads={"self": _aminmax_grad})
RETURN_TYPES.update(aminmax=return_types.aminmax, aminmax_out=return_types.aminmax_out)


# --- median, nanmedian -----------------------------------------------------------------------


def _median_full_forward(skip_nan: bool):
    def forward(a):
        if a.dtype.kind == "b":
            raise NotImplementedError(NOT_IMPLEMENTED_KERNEL.format("median_cpu",
                                                                   _scalar_name(a.dtype)))
        flat = a.reshape(-1)
        if a.dtype.kind in "fV":
            nan = np.isnan(flat)
            if skip_nan:
                flat = flat[~nan]
            elif nan.any():
                return np.asarray(np.nan, a.dtype)
        if flat.size == 0:  # torch gives NaN, or the lowest integer
            return np.asarray(np.nan if a.dtype.kind in "fV" else np.iinfo(a.dtype).min, a.dtype)
        k = (flat.size - 1) // 2
        return np.asarray(np.partition(flat, k)[k])

    return forward


def _median_dim_forward(name: str, skip_nan: bool):
    def forward(a, dim, keepdim):
        d = wrap_dim(dim, a.ndim)
        if a.dtype.kind == "b":
            raise NotImplementedError(NOT_IMPLEMENTED_KERNEL.format("median_out",
                                                                   _scalar_name(a.dtype)))
        if a.ndim == 0:
            return a.copy(), np.zeros((), np.int64)
        if a.shape[d] == 0:
            raise IndexError(EMPTY_DIM.format(name, d))
        # stable order puts NaNs last and ties by index: the lower median's index as torch picks
        order = np.argsort(a, axis=d, kind="stable")
        n = a.shape[d]
        isnan = np.isnan(a) if a.dtype.kind in "fV" else None
        if isnan is not None and skip_nan:
            valid = np.sum(~isnan, axis=d, keepdims=True)
            k = np.maximum(valid - 1, 0) // 2
        else:
            k = np.full(_out_shape(a.shape, (d,), True), (n - 1) // 2, np.int64)
        idx = np.take_along_axis(order, k, d)
        if isnan is not None and not skip_nan:
            idx = np.where(isnan.any(axis=d, keepdims=True),
                           np.argmax(isnan, axis=d, keepdims=True), idx)
        values = np.take_along_axis(a, idx, d)
        if not keepdim:
            values, idx = np.squeeze(values, d), np.squeeze(idx, d)
        return H.c_layout(values), H.c_layout(idx.astype(np.int64, copy=False))

    return forward


_median_all = op("median(Tensor self) -> Tensor", _median_full_forward(False),
                 grads={"self": _evenly_distribute})
_median_dim = op("median.dim(Tensor self, int dim, bool keepdim=False) -> "
                 "(Tensor values, Tensor indices)", _median_dim_forward("median", False),
                 node="MedianBackward1", grads={"self": _select_grad},
                 differentiable_outputs=(True, False))
_nanmedian_all = op("nanmedian(Tensor self) -> Tensor", _median_full_forward(True),
                    grads={"self": _evenly_distribute})
_nanmedian_dim = op("nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> "
                    "(Tensor values, Tensor indices)", _median_dim_forward("nanmedian", True),
                    node="NanmedianBackward1", grads={"self": _select_grad},
                    differentiable_outputs=(True, False))
RETURN_TYPES.update(median=return_types.median, nanmedian=return_types.nanmedian)


# --- var, std, var_mean, std_mean ------------------------------------------------------------


def _var_backward(grad, self, dim, correction, keepdim):
    nd = self.dim()
    axes = _axes(dim, nd)
    corr = 1 if correction is None else correction
    if axes is None or nd == 0:
        dof = self.numel() - corr
        if dof <= 0:
            # torch: NaN where an element equals the mean, inf elsewhere (a constant)
            a = self._data
            flag = np.where(a == _mean_forward(a, None, False, None), np.nan, np.inf)
            return grad * _wrap(flag.astype(a.dtype))
        return (2.0 / dof) * grad * (self - self.mean())
    grad = unsqueeze_reduced(grad, nd, dim, keepdim)
    dof = _count(tuple(self.shape), axes) - corr
    factor = math.inf if dof == 0 else 2.0 / dof
    return factor * grad * (self - self.mean(axes, keepdim=True))


def _std_grad_to_var(grad, result):
    """d std = d var / (2 std); 0 where std is 0, as torch."""
    with np.errstate(divide="ignore", invalid="ignore"):  # the masked-out entries
        return H.masked_zero(grad / (result * 2), H.mask(result, "zero"))


def _std_backward(grad, self, result, dim, correction, keepdim):
    return _var_backward(_std_grad_to_var(grad, result), self, dim, correction, keepdim)


def _mean_backward(grad, self, dim, keepdim):
    shape = tuple(self.shape)
    return expand_reduced(grad, shape, dim, keepdim) / _numel_over(shape, dim)


def _var_mean_backward(grads, self, result0, dim, correction, keepdim, std: bool):
    g_var, g_mean = grads
    out = None
    if g_var is not None:
        if std:
            g_var = _std_grad_to_var(g_var, result0)
        out = _var_backward(g_var, self, dim, correction, keepdim)
    if g_mean is not None:
        part = _mean_backward(g_mean, self, dim, keepdim)
        out = part if out is None else out + part
    return out


_SIG = "(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False)"

_var = op(f"var.correction{_SIG} -> Tensor",
          _upcast16(lambda a, dim, correction, keepdim:
                    K.var("var", a, dim, correction, keepdim)[0]),
          node="VarBackward0", grads={"self": _var_backward})


@_upcast16
def _std_forward(a, dim, correction, keepdim):
    return K.var("std", a, dim, correction, keepdim, sqrt=True)[0]


_std = op(f"std.correction{_SIG} -> Tensor", _std_forward, node="StdBackward0",
          grads={"self": _std_backward})

_var_mean = op(f"var_mean.correction{_SIG} -> (Tensor, Tensor)",
               _upcast16(lambda a, dim, correction, keepdim:
                         K.var("var_mean", a, dim, correction, keepdim)),
               node="VarMeanBackward0",
               # only std_mean needs its result (PyTorch saves none for var_mean either, so
               # writing the outputs in place keeps the graph usable)
               grads={"self": lambda grads, self, dim, correction, keepdim:
                      _var_mean_backward(grads, self, None, dim, correction, keepdim, False)},
               method=False)


@_upcast16
def _std_mean_forward(a, dim, correction, keepdim):
    return K.var("std_mean", a, dim, correction, keepdim, sqrt=True)


_std_mean = op(f"std_mean.correction{_SIG} -> (Tensor, Tensor)", _std_mean_forward,
               node="StdMeanBackward0",
               grads={"self": lambda grads, self, result0, dim, correction, keepdim:
                      _var_mean_backward(grads, self, result0, dim, correction, keepdim, True)},
               method=False)


def _declare_unbiased_forms(name: str, target, returns: str, method: bool) -> None:
    """torch's older overloads, composites of <name>.correction: (dim, unbiased, keepdim) and
    (unbiased) over every element, correction 1 or 0 (a call without arguments is the
    correction overload's, correction None)."""
    if returns == "Tensor":
        def dim_form(input, dim, unbiased=True, keepdim=False, *, out=None):
            correction = 1 if unbiased else 0
            if out is None:
                return target(input, dim, correction=correction, keepdim=keepdim)
            return target(input, dim, correction=correction, keepdim=keepdim, out=out)
    else:
        def dim_form(input, dim, unbiased=True, keepdim=False):
            return target(input, dim, correction=1 if unbiased else 0, keepdim=keepdim)

    def full_form(input, unbiased=True):
        return target(input, None, correction=1 if unbiased else 0)

    composite(f"{name}.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) "
              f"-> {returns}", dim_form, method=method)
    composite(f"{name}(Tensor self, bool unbiased=True) -> {returns}", full_form, method=method)


_declare_unbiased_forms("var", _var, "Tensor", True)
_declare_unbiased_forms("std", _std, "Tensor", True)
_declare_unbiased_forms("var_mean", _var_mean, "(Tensor, Tensor)", False)
_declare_unbiased_forms("std_mean", _std_mean, "(Tensor, Tensor)", False)


# --- norms -----------------------------------------------------------------------------------


def _vector_norm_backward(grad, self, ord, result, dim, keepdim):
    # divisions by a zero norm land in entries the formula masks out (as torch's masked_fill)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _vector_norm_grad(grad, self, float(ord), result, dim, keepdim)


def _vector_norm_grad(grad, self, p: float, result, dim, keepdim):
    if p == 0:
        return None  # torch's gradient of the 0-"norm" is undefined: no gradient
    nd = self.dim()
    grad = unsqueeze_reduced(grad, nd, dim, keepdim)
    norm = unsqueeze_reduced(result, nd, dim, keepdim)
    sign = H.sign(self)
    if p == 1:
        return sign * grad
    norm_zero = H.mask(norm, "zero")
    if p == 2:
        return grad * H.masked_zero(self / norm, norm_zero)
    mag = self * sign
    if math.isinf(p):
        m = H.eq_mask(mag, norm, True)
        count = m.sum(_axes(dim, nd), keepdim=True) if nd else m
        return sign * (grad / count * m)
    if p < 1:
        scaled = sign * H.masked_zero(H.pow_scalar(mag, p - 1), H.mask(self, "zero"))
        return scaled * grad * H.pow_scalar(norm, 1 - p)
    scaled = sign * H.pow_scalar(mag, p - 1) if p < 2 else self * H.pow_scalar(mag, p - 2)
    return scaled * H.masked_zero(grad / H.pow_scalar(norm, p - 1), norm_zero)


linalg_vector_norm = op(
    "linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor", K.vector_norm,
    grads={"self": _vector_norm_backward}, function=False, method=False)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector norm for numbers and 'fro' over at most two dims."""
    if out is not None:
        raise NotImplementedError("retrograd.norm does not support out=")
    if isinstance(dim, int):
        dim = [dim]
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return linalg_vector_norm(input, 2, dim, keepdim, dtype=dtype)
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if dim is not None and len(dim) != 2:
            raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got "
                               + " ".join(str(d) for d in dim))
        # the nuclear norm: a sum of singular values (the linalg family, imported here to
        # keep reductions below it)
        from retrograd._ops.linalg_norms import matrix_norm

        dims = list(range(input.dim())) if dim is None else list(dim)
        return matrix_norm(input, "nuc", dims, keepdim, dtype=dtype)
    return linalg_vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype)


register("norm", norm)


def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    """Tensor.norm: torch.norm without `out` (so dtype is the fourth positional argument)."""
    return norm(self, p, dim, keepdim, dtype=dtype)


register_method("norm", _norm_method)


# --- logsumexp -------------------------------------------------------------------------------


@_upcast16
def _logsumexp_forward(a, dim, keepdim):
    if a.dtype.kind in "biu":
        a = a.astype(D.get_default_dtype().np)
    axes = _axes(dim, a.ndim)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if a.size == 0:
            out = _reduce(np.sum, np.exp(a), axes, keepdim)
            return np.log(out)
        # subtract the max for stability; an infinite max is replaced by 0 as torch does
        m = _reduce(np.max, a, axes, True)
        m[np.isinf(m)] = 0
        out = _reduce(np.sum, np.exp(a - m), axes, keepdim)
        out = np.log(out, out=out) if out.ndim else np.log(out)
        out += m.reshape(out.shape)
    return np.asarray(out, a.dtype)


logsumexp = op("logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
               _logsumexp_forward,
               grads={"self": lambda grad, self, result, dim, keepdim:
                      unsqueeze_reduced(grad, self.dim(), dim, keepdim)
                      * (self - unsqueeze_reduced(result, self.dim(), dim, keepdim)).exp()})


# --- cumsum, cumprod -------------------------------------------------------------------------


def _cumulative_forward(ufunc):
    def forward(a, dim, dtype):
        d = wrap_dim(dim, a.ndim)
        out_dt = np.dtype(_acc_dtype(a, dtype))
        if a.ndim == 0:
            return a.astype(out_dt)
        return _cumulative(ufunc, a, d, np.empty(a.shape, out_dt))  # NOTE [Running scans]

    return forward


def _trivial_cumulative(t: Tensor, dim: int) -> bool:
    return t.numel() <= 1 or t._data.shape[wrap_dim(dim, t.dim())] == 1


def _cumsum_backward(grad, self, dim):
    if _trivial_cumulative(self, dim):
        return grad
    return H.rev_cumsum(grad, wrap_dim(dim, self.dim()))


def _cumprod_backward(grad, self, dim, result):
    if _trivial_cumulative(self, dim):
        return grad
    d = wrap_dim(dim, self.dim())
    if not _has_zero(self):
        return H.rev_cumsum(result * grad, d) / self
    return _cumprod_backward_zeros(grad, self, d)


def _cumprod_backward_zeros(grad, self, d: int):
    """grad_in[k] = sum_{j>=k} grad[j] prod_{i<=j, i!=k} self[i], with no division (exact with
    zeros). Built from products over (k, j) pairs: O(n^2) along dim, differentiable again."""
    n = self._data.shape[d]
    x, g = self.transpose(d, -1), grad.transpose(d, -1)
    last = x.dim() - 1
    ar = np.arange(n)
    after = ar[None, :] > ar[:, None]  # [k, i]: i > k
    dt = self._data.dtype
    from_k = _wrap((ar[None, :] >= ar[:, None]).astype(dt))  # [k, j]: j >= k
    # [k, j] = prod_{k < i <= j} x[i] (1 for j <= k)
    between = (x.unsqueeze(-2) * _wrap(after.astype(dt)) + _wrap((~after).astype(dt))).cumprod(-1)
    # first order only (the second order is not zero there), on values it can read (a batched
    # value's examples differ: the products stand, exact but where narrow types overflow)
    exact = not state.grad_enabled and not _is_wrapper(x)
    if exact:
        # exact zeros where a zero lies in (k, j]: the products there may have met an overflow
        # first (0 * inf is nan in narrow types)
        zero_count = np.cumsum(x._data == 0, axis=-1)
        passed = zero_count[..., None, :] - zero_count[..., :, None] > 0  # [.., k, j]
        between = H.masked_zero(between, _wrap(passed.astype(dt)))
    before = H.shift(x, last, 1, 1.0).cumprod(-1)  # prod_{i < k} x[i]
    summed = (g.unsqueeze(-2) * from_k * between).sum(-1)
    out = before * summed
    if exact:  # and where a zero comes before k
        out = H.masked_zero(out, _wrap((zero_count - (x._data == 0) > 0).astype(dt)))
    return out.transpose(d, -1)


cumsum = op("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
            _cumulative_forward(np.add), grads={"self": _cumsum_backward})
cumprod = op("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
             _cumulative_forward(np.multiply), grads={"self": _cumprod_backward})


# --- softmax, log_softmax --------------------------------------------------------------------


def _softmax_checks(name: str, a, dim) -> int | None:
    d = wrap_dim(dim, a.ndim)
    if a.dtype.kind not in "fV":
        kernel = f"{name}_lastdim_kernel_impl" if d == a.ndim - 1 or a.ndim == 0 \
            else f"{name}_kernel_impl"
        raise NotImplementedError(NOT_IMPLEMENTED_KERNEL.format(kernel, _scalar_name(a.dtype)))
    return d if a.ndim else None


def _shifted(a, axis):
    """a - max(a) along axis, into a fresh row-major array in the compute dtype (nan for a
    slice of infinities, without NumPy's warning: torch gives nan silently)."""
    acc = _float_acc(a.dtype)
    src = a.astype(acc) if acc is not None else a
    out = np.empty(a.shape, src.dtype)
    if a.size:
        with np.errstate(invalid="ignore"):
            np.subtract(src, np.maximum.reduce(src, axis=axis, keepdims=True), out=out)
    return out


# NOTE [Softmax without the shift]
# softmax subtracts each row's max only so that exp cannot overflow; along a short last axis
# that max is NumPy's slowest step (a per-row reduction loop: half the kernel's time for rows
# of 64). Where the whole input lies in [-limit, limit - log(n)] (two vectorized reductions
# tell; nan or inf fail the test), exp of the input itself stays in the normal range and its
# row sums cannot overflow, so the shift is skipped, and the rows are summed by
# kernels.reduction.last_axis_sums (a matrix-vector product for short rows; the backward on
# arrays sums its rows so too). The values are torch's within an ulp or two, with one
# rounding fewer (x - max is rounded).
# log_softmax keeps the shift: there x - log(sum) would cancel where the result is near 0.
_UNSHIFTED_LIMIT = {np.dtype(np.float32): 80.0, np.dtype(np.float64): 700.0}


def _softmax_unshifted(a):
    """softmax along the last axis of a row-major float32/float64 array without the max shift
    (NOTE [Softmax without the shift]), or None where the input's range does not allow it."""
    n = a.shape[-1]
    limit = _UNSHIFTED_LIMIT[a.dtype]
    if not (np.minimum.reduce(a, axis=None) >= -limit
            and np.maximum.reduce(a, axis=None) <= limit - math.log(n)):
        return None
    out = np.exp(a)
    out /= K.last_axis_sums(out)
    return out


def _softmax_forward(a, dim, half_to_float):
    axis = _softmax_checks("softmax", a, dim)
    if (axis is not None and axis == a.ndim - 1 and a.dtype in _UNSHIFTED_LIMIT and a.size
            and a.shape[-1] > 1 and a.flags.c_contiguous):
        out = _softmax_unshifted(a)
        if out is not None:
            return out
    out = _shifted(a, axis)
    if a.size:
        # exp of values <= 0 (or nan) cannot overflow; their sum is >= 1 (or nan)
        np.exp(out, out=out)
        out /= np.add.reduce(out, axis=axis, keepdims=True)
    return out.astype(a.dtype, copy=False)


def _log_softmax_forward(a, dim, half_to_float):
    axis = _softmax_checks("log_softmax", a, dim)
    out = _shifted(a, axis)
    if a.size:
        out -= np.log(np.add.reduce(np.exp(out), axis=axis, keepdims=True))
    return out.astype(a.dtype, copy=False)


def _half_in_float32(formula):
    """An array formula of (grad, result, dim) computed in float32 for 16-bit floats, as
    torch's softmax kernels accumulate."""
    def wrapped(grad, result, dim):
        acc = _float_acc(result.dtype)
        if acc is None:
            return formula(grad, result, dim)
        return formula(grad.astype(acc), result.astype(acc), dim).astype(result.dtype)

    return wrapped


@_half_in_float32
def _softmax_grad_array(grad, result, dim):
    """softmax's formula on arrays (NOTE [Array formulas])."""
    axis = dim if result.ndim else None
    prod = np.asarray(np.multiply(grad, result))  # 0-d: a scalar otherwise
    if prod.ndim and wrap_dim(dim, prod.ndim) == prod.ndim - 1:
        dot = K.last_axis_sums(prod)  # (NOTE [Softmax without the shift])
    else:
        dot = np.add.reduce(prod, axis=axis, keepdims=True)
    np.subtract(grad, dot, out=prod)
    return np.multiply(result, prod, out=prod)


@_half_in_float32
def _log_softmax_grad_array(grad, result, dim):
    """log_softmax's formula on arrays (NOTE [Array formulas])."""
    axis = dim if result.ndim else None
    e = np.asarray(np.exp(result))  # 0-d: a scalar otherwise
    e *= np.add.reduce(grad, axis=axis, keepdims=True)
    return np.subtract(grad, e, out=e)


_softmax = op("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", _softmax_forward,
              node="SoftmaxBackward0",
              grads={"self": lambda grad, result, dim:
                     result * (grad - (grad * result).sum(dim, keepdim=True))},
              array_grads={"self": lambda grad, result, dim: _softmax_grad_array(grad, result,
                                                                                 dim)},
              function=False, method=False)
_log_softmax = op("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor",
                  _log_softmax_forward, node="LogSoftmaxBackward0",
                  grads={"self": lambda grad, result, dim:
                         grad - result.exp() * grad.sum(dim, keepdim=True)},
                  array_grads={"self": lambda grad, result, dim:
                               _log_softmax_grad_array(grad, result, dim)},
                  function=False, method=False)


@numpy_names
def softmax(input: Tensor, dim: int, dtype: D.dtype | None = None) -> Tensor:
    if dtype is not None:
        input = input.to(dtype)
    return _softmax(input, dim, False)


@numpy_names
def log_softmax(input: Tensor, dim: int, dtype: D.dtype | None = None) -> Tensor:
    if dtype is not None:
        input = input.to(dtype)
    return _log_softmax(input, dim, False)


def _implicit_dim(name: str, ndim: int, stacklevel: int) -> int:
    _ws.warn(IMPLICIT_DIM.format(name), UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _functional_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                        dtype: D.dtype | None = None) -> Tensor:
    if dim is None:
        dim = _implicit_dim("softmax", input.dim(), _stacklevel)
    return softmax(input, dim, dtype)


def _functional_log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                            dtype: D.dtype | None = None) -> Tensor:
    if dim is None:
        dim = _implicit_dim("log_softmax", input.dim(), _stacklevel)
    return log_softmax(input, dim, dtype)


register("softmax", softmax, method=True)
register("log_softmax", log_softmax, method=True)
register_functional("softmax", _functional_softmax)
register_functional("log_softmax", _functional_log_softmax)


# --- all, any, count_nonzero -----------------------------------------------------------------


def _logical_forward(fn):
    def forward(a, dim=None, keepdim=False):
        axes = _dims(dim, a.ndim)
        out = _reduce(fn, a, axes, keepdim, np.bool_)
        return out.astype(np.uint8) if a.dtype == np.uint8 else out

    return forward


def _logical(name: str, fn):
    forward = _logical_forward(fn)
    op(f"{name}(Tensor self) -> Tensor", lambda a: forward(a))
    op(f"{name}.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", forward)
    op(f"{name}.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor", forward)
    return overloaded(name)


all = _logical("all", np.all)  # noqa: A001 - torch's names
any = _logical("any", np.any)  # noqa: A001


def _count_nonzero_forward(a, dim):
    return _reduce(np.sum, a != 0, _axes(dim, a.ndim), False, np.int64, dtype=np.int64)


op("count_nonzero(Tensor self, int? dim=None) -> Tensor", _count_nonzero_forward)
op("count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor", _count_nonzero_forward)
count_nonzero = overloaded("count_nonzero")
