"""segment_reduce: runs of `data` along `axis`, given by lengths or offsets, each reduced to one
value (sum, mean, max/amax, min/amin, prod), and its backward _segment_reduce_backward.

lengths (or offsets) may carry leading dims: lengths.shape == data.shape[:axis] + (segments,),
a separate set of segments for every index of the leading dims. The kernels flatten the leading
dims into rows and run ufunc.reduceat over the (rows * size) runs at once. torch implements no
derivative of _segment_reduce_backward, so its node is NotImplemented (double backward raises).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from retrograd._dims import wrap_dim
from retrograd._ops.layout import not_implemented
from retrograd._ops.pointwise import _no_derivative, _not_implemented_node
from retrograd._ops.registry import op

REDUCE_ARG = "reduce argument must be either sum, prod, mean, amax or amin, got {}"
INDICES = "segment_reduce(): indices based reduction is not supported yet."
NO_SEGMENTS = "segment_reduce(): Either lengths or offsets must be defined."
DIMS = ("Expected data.dim() >= lengths_value.dim() to be true, but got false.  (Could this error "
        "message be improved?  If so, please report an enhancement request to PyTorch.)")
AXIS = "segment_reduce(): Expected axis to be the last dimension of lengths but got {}."
NEGATIVE = "lengths contains negative value!"
SUM = ("segment_reduce(): Expected all rows of lengths along axis to sum to "
       "data.size(lengths.dim()-1) when !unsafe.")
SEGMENT_LENGTH = ("Expected segment_length >= 0 to be true, but got false.  (Could this error "
                  "message be improved?  If so, please report an enhancement request to PyTorch.)")
EMPTY_MIN = ("min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
             "reduction dim with the 'dim' argument.")

# reduce names torch accepts -> the kernel's reduction
_REDUCES = {"sum": "sum", "mean": "mean", "max": "max", "amax": "max", "min": "min",
            "amin": "min", "prod": "prod"}
_UFUNCS = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum,
           "prod": np.multiply}
_IDENTITY = {"sum": 0.0, "mean": math.nan, "max": -math.inf, "min": math.inf, "prod": 1.0}
_FLOATS = ("float16", "bfloat16", "float32", "float64")
# the C++ type names torch's scalar conversion names in its overflow message
_CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
              "float64": "double"}
OVERFLOW = "value cannot be converted to type {} without overflow"


def _segments(data_shape: tuple, lengths, offsets, axis: int):
    """(starts, lens) of every segment, shape (rows, segments), as flat row indices into data
    viewed as (rows * size, inner); offsets win over lengths when both are given (as in
    torch). Segments are clipped to their row, so unchecked (unsafe) lengths stay in bounds."""
    size = data_shape[axis]
    if offsets is not None:
        off = offsets.astype(np.int64).reshape(-1, offsets.shape[-1])
    else:
        lens = lengths.astype(np.int64).reshape(-1, lengths.shape[-1])
        off = np.concatenate([np.zeros((lens.shape[0], 1), np.int64), np.cumsum(lens, axis=1)],
                             axis=1)
    if (np.diff(off, axis=1) < 0).any():
        raise RuntimeError(SEGMENT_LENGTH)
    off = np.clip(off, 0, size)
    rows = off.shape[0]
    starts = off[:, :-1] + (np.arange(rows, dtype=np.int64) * size)[:, None]
    return starts, np.diff(off, axis=1)


def _check_initial(initial, np_dtype) -> None:
    """initial is converted to data's dtype: a finite value beyond its range (or a complex one
    with an imaginary part) is refused as torch refuses it."""
    if initial is None:
        return
    bad = isinstance(initial, complex) and initial.imag != 0
    value = initial.real if isinstance(initial, complex) else float(initial)
    if math.isfinite(value) and abs(value) > float(ml_dtypes.finfo(np_dtype).max):
        bad = True
    if bad:
        raise RuntimeError(OVERFLOW.format(_CPP_NAMES[np.dtype(np_dtype).name]))


def _check(data, reduce: str, lengths, indices, offsets, axis: int, unsafe: bool,
           initial=None) -> tuple:
    if reduce not in _REDUCES:
        raise RuntimeError(REDUCE_ARG.format(reduce))
    ax = wrap_dim(axis, data.ndim)
    if indices is not None:
        raise RuntimeError(INDICES)
    seg = offsets if offsets is not None else lengths
    if seg is None:
        raise RuntimeError(NO_SEGMENTS)
    if data.ndim < seg.ndim:
        raise RuntimeError(DIMS)
    if ax != seg.ndim - 1:
        raise RuntimeError(AXIS.format(ax))
    if lengths is not None and not unsafe:
        if lengths.size == 0:
            raise RuntimeError(EMPTY_MIN)
        if lengths.min() < 0:
            raise RuntimeError(NEGATIVE)
        if (lengths.sum(axis=-1) != data.shape[ax]).any():
            raise RuntimeError(SUM)
    if seg.dtype not in (np.int32, np.int64):
        kind = "offsets" if offsets is not None else "lengths"
        raise not_implemented(f"_segment_reduce_{kind}_cpu_kernel1", seg.dtype)
    if data.dtype.name not in _FLOATS:
        raise not_implemented("_segment_reduce_cpu", data.dtype)
    _check_initial(initial, data.dtype)
    return _REDUCES[reduce], ax


def _as_rows(data, ax: int):
    """data as (rows * size, inner): leading dims flattened into rows, trailing into inner."""
    inner = int(np.prod(data.shape[ax + 1:], dtype=np.int64))
    return data.reshape(int(np.prod(data.shape[:ax + 1], dtype=np.int64)), inner)


def _reduce(rows, starts, lens, kind: str, initial):
    """Every segment of `rows` (flat row index ranges) reduced; shape (segments, inner)."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return _reduce_segments(rows, starts, lens, kind, initial)


def _reduce_segments(rows, starts, lens, kind: str, initial):
    work = rows.astype(np.float32) if rows.dtype.itemsize < 4 else rows
    flat_s, flat_l = starts.reshape(-1), lens.reshape(-1)
    out = np.full((flat_s.size, rows.shape[1]), _IDENTITY[kind], dtype=work.dtype)
    full = flat_l > 0
    if full.any():
        # a row of padding so that every segment's end is a valid reduceat index; the
        # interleaved (start, end) pairs make each even entry exactly one segment's reduction
        padded = np.concatenate([work, np.zeros((1, work.shape[1]), work.dtype)])
        idx = np.stack([flat_s[full], flat_s[full] + flat_l[full]], axis=1).reshape(-1)
        out[full] = _UFUNCS[kind].reduceat(padded, idx, axis=0)[::2]
    if kind == "mean":
        total = out if initial is None else out + initial
        out = total / flat_l[:, None].astype(work.dtype)
        if initial is not None:
            out[~full] = initial
    elif initial is not None:
        out = _UFUNCS[kind](out, np.asarray(initial, dtype=out.dtype))
        out[~full] = initial
    return out


def _out_shape(data_shape: tuple, ax: int, segments: int) -> tuple:
    return tuple(data_shape[:ax]) + (segments,) + tuple(data_shape[ax + 1:])


def _forward(data, reduce, lengths=None, indices=None, offsets=None, axis=0, unsafe=False,
             initial=None):
    kind, ax = _check(data, reduce, lengths, indices, offsets, axis, unsafe, initial)
    starts, lens = _segments(data.shape, lengths, offsets, ax)
    out = _reduce(_as_rows(data, ax), starts, lens, kind, initial)
    return np.ascontiguousarray(out.reshape(_out_shape(data.shape, ax, lens.shape[1]))
                                .astype(data.dtype, copy=False))


def _backward_kernel(grad, output, data, reduce, lengths=None, offsets=None, axis=0,
                     initial=None):
    kind = _REDUCES[reduce]
    ax = wrap_dim(axis, data.ndim)
    starts, lens = _segments(data.shape, lengths, offsets, ax)
    rows = _as_rows(data, ax)
    flat_s, flat_l = starts.reshape(-1), lens.reshape(-1)
    # for every data row covered by a segment: its segment's number
    seg_of = np.repeat(np.arange(flat_s.size), flat_l)
    pos = np.repeat(flat_s, flat_l) + (np.arange(seg_of.size)
                                       - np.repeat(np.cumsum(flat_l) - flat_l, flat_l))
    g = grad.reshape(flat_s.size, rows.shape[1])[seg_of]
    x = rows[pos]

    def per_segment(values, kind: str, init=None):
        """values (one per covered row) reduced over their segments, back at those rows."""
        full = np.zeros(rows.shape, dtype=values.dtype)
        full[pos] = values
        return _reduce(full, starts, lens, kind, init)[seg_of]

    if kind == "sum":
        d = g
    elif kind == "mean":
        d = g / flat_l[seg_of][:, None].astype(g.dtype)
    elif kind in ("max", "min"):
        r = output.reshape(flat_s.size, rows.shape[1])[seg_of]
        # the gradient is shared equally among the elements equal to the result (NaN: the NaNs)
        hit = ((x == r) | (np.isnan(x) & np.isnan(r))).astype(g.dtype)
        count = per_segment(hit, "sum")
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(hit > 0, g / count, 0)
    else:
        r = output.reshape(flat_s.size, rows.shape[1])[seg_of]
        # zeros and NaNs take the product of the other elements (with initial), which is
        # NaN when another NaN is among them, else 0 when another zero is; the rest grad * r / x
        zero, nan = x == 0, np.isnan(x)
        special = zero | nan
        zeros = per_segment(zero.astype(g.dtype), "sum") - zero
        nans = per_segment(nan.astype(g.dtype), "sum") - nan
        rest = per_segment(np.where(special, 1, x), "prod", initial)
        others = np.where(nans > 0, np.nan, np.where(zeros > 0, 0, rest))
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(special, g * others, g * r / x)
    out = np.zeros(rows.shape, dtype=data.dtype)
    out[pos] = d
    return out.reshape(data.shape)


_segment_reduce_backward = _not_implemented_node(op(
    "_segment_reduce_backward(Tensor grad, Tensor output, Tensor data, str reduce, *, "
    "Tensor? lengths=None, Tensor? offsets=None, int axis=0, Scalar? initial=None) -> Tensor",
    _backward_kernel, grads={"grad, data": _no_derivative("_segment_reduce_backward")},
    function=False, method=False))


def _grad(grad, result, data, reduce, lengths, offsets, axis, initial):
    return _segment_reduce_backward(grad, result, data, reduce, lengths=lengths,
                                    offsets=offsets, axis=axis, initial=initial)


segment_reduce = op(
    "segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, "
    "Tensor? offsets=None, int axis=0, bool unsafe=False, Scalar? initial=None) -> Tensor",
    _forward, grads={"data": _grad}, method=False)
