"""unique and unique_consecutive, with torch's internal ops behind them: _unique, _unique2,
unique_dim and unique_consecutive (whose `dim` form is torch's unique_dim_consecutive).

Equal values are found by sorting stably and comparing neighbours, so NaN (never equal to
itself) is a value of its own each time it occurs, as in torch. torch's CPU kernels return the
values sorted even for sorted=False, and so does retrograd. A `dim` form compares whole slices
along `dim` and orders them lexicographically (slices holding NaN, which torch orders by
accident of its sort, go last). The inverse and counts are int64; torch's dim
forms compute both whatever the flags say, and so do these. Only the values are differentiable,
and their derivative is not implemented in torch: the node exists (the values require grad) and
its backward raises torch's NotImplementedError.
"""

from __future__ import annotations

import numpy as np

from retrograd import _errors as E
from retrograd._ops.layout import not_implemented
from retrograd._ops.registry import op, register
from retrograd._ops.shape import wrap_dim
from retrograd._tensor import Tensor

NO_DERIVATIVE = "the derivative for '{}' is not implemented."
ZERO_SIZED = ("There are 0 sized dimensions, and they aren't selected, so unique cannot be "
              "applied")
_EMPTY_LONG = np.empty(0, np.int64)


def _no_derivative(name: str):
    def formula(grad):
        raise NotImplementedError(NO_DERIVATIVE.format(name))

    return formula


def _key(a: np.ndarray, kernel: str) -> np.ndarray:
    """`a` in a dtype NumPy sorts and compares (ml_dtypes' types widen exactly to float32)."""
    if a.dtype.kind == "c":
        raise not_implemented(kernel, a.dtype)
    return a.astype(np.float32) if a.dtype.kind == "V" else a


def _groups(starts: np.ndarray) -> tuple:
    """From flags marking where each run of equal values starts: each element's run number and
    each run's length."""
    ids = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    counts = np.diff(np.append(first, starts.size)).astype(np.int64)
    return ids.astype(np.int64), counts


def _starts(key: np.ndarray) -> np.ndarray:
    """Where a run of equal values (rows, for a 2-d key) begins in `key`."""
    starts = np.ones(key.shape[0], bool)
    if key.ndim == 1:
        np.not_equal(key[1:], key[:-1], out=starts[1:])
    else:
        np.any(key[1:] != key[:-1], axis=1, out=starts[1:])
    return starts


def _counted(flat: np.ndarray) -> tuple | None:
    """The sorted unique values, inverse and counts of integers that span a range no wider
    than a few times their number, by counting (O(n), where sorting is O(n log n)); None for
    any other array."""
    if flat.dtype.kind not in "iu" or not flat.size:
        return None
    lo, hi = int(flat.min()), int(flat.max())
    span = hi - lo + 1
    if span > 4 * flat.size + 1024:
        return None
    # offsets from the least value, taken where they cannot wrap: an unsigned array is at least
    # lo (uint64 values past intp too), a signed one is widened first (int8's 127 - -128)
    if flat.dtype.kind == "u":
        shifted = (flat - flat.dtype.type(lo)).astype(np.intp)
    else:
        shifted = flat.astype(np.intp) - lo
    tally = np.bincount(shifted, minlength=span)
    present = tally > 0
    # back in the input's dtype: offset + lo is in its range, so its wrapping arithmetic is
    # exact (lo itself may be past int64, as a uint64's)
    values = np.flatnonzero(present).astype(flat.dtype) + flat.dtype.type(lo)
    rank = np.cumsum(present) - 1
    return values, rank[shifted].astype(np.int64), tally[present].astype(np.int64)


def _flat(a: np.ndarray, sort: bool, kernel: str) -> tuple:
    """(values, inverse shaped like `a`, counts) over all elements."""
    flat = a.reshape(-1)
    counted = _counted(flat) if sort else None
    if counted is not None:
        values, inverse, counts = counted
        return values, inverse.reshape(a.shape), counts
    key = _key(flat, kernel)
    order = np.argsort(key, kind="stable") if sort else None
    if order is not None:
        key = key[order]
    starts = _starts(key)
    ids, counts = _groups(starts)
    if order is not None:
        values = flat[order[starts]]
        inverse = np.empty_like(ids)
        inverse[order] = ids
    else:
        values, inverse = flat[starts], ids
    return np.ascontiguousarray(values), inverse.reshape(a.shape), counts


def _along(a: np.ndarray, dim: int, sort: bool, kernel: str) -> tuple:
    """(values, inverse, counts) over the slices of `a` along dim."""
    if a.ndim == 0:
        raise IndexError(E.DIM_SCALAR.format(dim))
    d = wrap_dim(dim, a.ndim)
    _key(a[:0], kernel)  # the dtype check comes before the empty-tensor answers
    n = a.shape[d]
    if a.size == 0:
        if n:
            raise RuntimeError(ZERO_SIZED)
        return np.ascontiguousarray(a), _EMPTY_LONG.copy(), _EMPTY_LONG.copy()
    moved = np.ascontiguousarray(np.moveaxis(a, d, 0))
    rows = _key(moved.reshape(n, -1), kernel)
    order = np.lexsort(rows.T[::-1]) if sort else None
    if order is not None:
        rows = rows[order]
    starts = _starts(rows)
    ids, counts = _groups(starts)
    if order is not None:
        picks = order[starts]
        inverse = np.empty_like(ids)
        inverse[order] = ids
    else:
        picks, inverse = np.flatnonzero(starts), ids
    # torch picks the slices with dim moved first, then moves it back (so its strides)
    return np.moveaxis(moved[picks], 0, d), inverse, counts


def _chosen(outs: tuple, return_inverse: bool, return_counts: bool) -> tuple:
    values, inverse, counts = outs
    return (values, inverse if return_inverse else _EMPTY_LONG.copy(),
            counts if return_counts else _EMPTY_LONG.copy())


def _unique_forward(a, sorted, return_inverse):  # noqa: A002 - torch's name
    return _chosen(_flat(a, True, "unique"), return_inverse, False)[:2]


def _unique2_forward(a, sorted, return_inverse, return_counts):  # noqa: A002
    return _chosen(_flat(a, True, "unique"), return_inverse, return_counts)


def _unique_dim_forward(a, dim, sorted, return_inverse, return_counts):  # noqa: A002
    return _along(a, dim, True, "unique_dim")


def _unique_consecutive_forward(a, return_inverse, return_counts, dim):
    if dim is not None:
        return _along(a, dim, False, "unique")
    return _chosen(_flat(a, False, "unique"), return_inverse, return_counts)


_FIRST_ONLY = (True, False, False)

_unique = op("_unique(Tensor self, bool sorted=True, bool return_inverse=False) -> "
             "(Tensor, Tensor)", _unique_forward, node="UniqueBackward0",
             grads={"self": _no_derivative("_unique")}, differentiable_outputs=(True, False),
             method=False)
_unique2 = op("_unique2(Tensor self, bool sorted=True, bool return_inverse=False, "
              "bool return_counts=False) -> (Tensor, Tensor, Tensor)", _unique2_forward,
              grads={"self": _no_derivative("_unique2")}, differentiable_outputs=_FIRST_ONLY,
              method=False)
# torch leaves unique_dim out of its namespace; it is reached as torch._VF.unique_dim
unique_dim = op("unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, "
                "bool return_counts=False) -> (Tensor, Tensor, Tensor)", _unique_dim_forward,
                grads={"self": _no_derivative("unique_dim")}, differentiable_outputs=_FIRST_ONLY,
                function=False, method=False)
unique_consecutive_op = op(
    "unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, "
    "int? dim=None) -> (Tensor, Tensor, Tensor)", _unique_consecutive_forward,
    grads={"self": _no_derivative("unique_consecutive")}, differentiable_outputs=_FIRST_ONLY,
    function=False, method=False)


def _pick(outs: tuple, return_inverse: bool, return_counts: bool):
    """The values alone, or a tuple with the inverse and/or counts asked for."""
    if not (return_inverse or return_counts):
        return outs[0]
    return (outs[0],) + ((outs[1],) if return_inverse else ()) + (
        (outs[2],) if return_counts else ())


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None):
    """The distinct values of `input` (or its distinct slices along `dim`), sorted; optionally
    where each element went (inverse) and how often each value occurs (counts)."""
    if dim is not None:
        outs = unique_dim(input, dim, sorted, return_inverse, return_counts)
    else:
        outs = _unique2(input, sorted, return_inverse, return_counts)
    return _pick(outs, return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim: int | None = None):
    """`input` with each run of equal consecutive values (or slices along `dim`) kept once."""
    outs = unique_consecutive_op(input, return_inverse, return_counts, dim)
    return _pick(outs, return_inverse, return_counts)


register("unique", unique, method=True)
register("unique_consecutive", unique_consecutive, method=True)

# torch._VF's functions that torch's namespace does not show (or shows as a wrapper)
VARIABLE_FUNCTIONS = {"unique_dim": unique_dim, "unique_consecutive": unique_consecutive_op}
