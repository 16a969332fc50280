"""NumPy kernels of bincount, histc and histogram: functions on plain arrays. No Tensor here:
retrograd._ops.histograms declares the ops on these.

Binning follows torch's CPU kernel. Elements outside [first edge, last edge] are left out, NaN
too; the last bin holds its right edge. With evenly spaced edges an element's bin is computed
as (x - first) * bins / (last - first) in the input's dtype, then (histogram, not histc)
checked against the edges on either side; with given edges it is a binary search.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.layout import not_implemented

BINCOUNT_INPUT = "bincount only supports 1-d non-negative integral inputs."
BINCOUNT_WEIGHTS = "weights should be 1-d and have the same length as input"
BINCOUNT_MINLENGTH = "minlength should be >= 0"
BINS_POSITIVE = "torch.histogram(): bins must be > 0, but got {} for dimension 0"


def bincount(a: np.ndarray, weights: np.ndarray | None, minlength: int) -> np.ndarray:
    if minlength < 0:
        raise RuntimeError(BINCOUNT_MINLENGTH)
    if a.dtype.kind not in "iu":
        raise not_implemented("bincount_cpu", a.dtype)
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError(BINCOUNT_INPUT)
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != a.shape[0]):
        raise RuntimeError(BINCOUNT_WEIGHTS)
    if a.size == 0:  # torch's early exit: counts, whatever the weights
        return np.zeros(minlength, np.int64)
    if weights is None:
        return np.bincount(a, minlength=minlength).astype(np.int64, copy=False)
    # float weights keep their dtype; any other weight is summed in double
    out_dtype = weights.dtype if weights.dtype in (np.float32, np.float64) else np.float64
    summed = np.bincount(a, weights=weights.astype(np.float64), minlength=minlength)
    return summed.astype(out_dtype)


def _cpp_name(dt: np.dtype) -> str:
    return D.CPP_NAMES[D.from_numpy_dtype(dt).name]


def check_bins(bins: int) -> None:
    if bins <= 0:
        raise RuntimeError(BINS_POSITIVE.format(bins))


def _number_text(v: float) -> str:
    """A double as C++'s ostream prints it."""
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf") if np.isinf(v) else f"{v:g}"


def histc_range(a: np.ndarray, low: float, high: float) -> tuple:
    """histc's outer edges: min and max if given (differing), else the data's; an empty range
    widened by 1 on each side."""
    from_data = low == high and a.size > 0
    if from_data:
        low, high = float(np.min(a)), float(np.max(a))
    if low == high:
        low, high = low - 1, high + 1
    if not (np.isfinite(low) and np.isfinite(high)):
        # torch's min/max kernel gives a negative NaN for data holding NaN
        texts = ("-nan" if from_data and np.isnan(v) else _number_text(v) for v in (low, high))
        raise RuntimeError("torch.histc: range of [{}, {}] is not finite".format(*texts))
    if not low < high:
        raise RuntimeError("torch.histc: max must be larger than min")
    return low, high


def histogram_range(a: np.ndarray, range) -> tuple:
    """histogram's outer edges: range if given, else the data's min and max ([0, 1] for no
    data); an empty range widened by 0.5 on each side."""
    if range is not None:
        if len(range) != 2:
            raise RuntimeError("torch.histogramdd: for a 1-dimensional histogram range should "
                               f"have 2 elements, but got {len(range)}")
        low, high = float(range[0]), float(range[1])
    elif a.size:
        low, high = float(np.min(a)), float(np.max(a))
    else:
        low, high = 0.0, 1.0
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{_number_text(low)}, "
                           f"{_number_text(high)}] is not finite")
    if low > high:
        raise RuntimeError("torch.histogramdd: min should not exceed max, but got min "
                           f"{_number_text(low)} max {_number_text(high)} for dimension 0")
    if low == high:
        low, high = low - 0.5, high + 0.5
    return low, high


def check_histogram_operands(a: np.ndarray, weight: np.ndarray | None) -> None:
    if weight is None:
        return
    if weight.dtype != a.dtype:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and "
                           f"weight tensor should have the same dtype, but got "
                           f"input({_cpp_name(a.dtype)}), and weight({_cpp_name(weight.dtype)})")
    if weight.size != a.size:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the "
                           "same shape as the input tensor excluding its innermost dimension, "
                           f"but got input with shape [{a.size}, 1] and weight with shape "
                           f"[{weight.size}]")


def check_edges(a: np.ndarray, edges: np.ndarray) -> None:
    if edges.dtype != a.dtype:
        raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the "
                           f"same dtype, but got input with dtype {_cpp_name(a.dtype)} and bins "
                           f"for dimension 0 with dtype {_cpp_name(edges.dtype)}")
    if edges.ndim != 1:
        raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                           f"{edges.ndim} dimensions in the bins tensor for dimension 0")
    check_bins(edges.size - 1)


def bin_counts(a: np.ndarray, weight: np.ndarray | None, edges: np.ndarray, density: bool,
               how: str) -> np.ndarray:
    """The histogram of a's elements (weighted) over `edges`. how: "linear" (evenly spaced
    edges, as histc bins), "checked" (evenly spaced, the bin checked against its edges, as
    histogram with a bin count), "search" (any increasing edges)."""
    x = a.reshape(-1)
    w = None if weight is None else weight.reshape(-1)
    n_bins = edges.size - 1
    first, last = edges[0], edges[-1]
    with np.errstate(invalid="ignore"):
        inside = (x >= first) & (x <= last)
    x = x[inside]
    if how == "search":
        pos = np.searchsorted(edges, x, side="right") - 1
    else:
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            pos = ((x - first) * n_bins / (last - first)).astype(np.int64)
        if how == "checked":
            upper = np.searchsorted(edges, x, side="right")
            pos = np.clip(upper, np.maximum(pos - 1, 0), np.minimum(pos + 2, n_bins + 1)) - 1
    pos = np.where(pos >= n_bins, n_bins - 1, pos)
    acc = np.dtype(np.float32) if a.dtype.kind == "V" or a.dtype == np.float16 else a.dtype
    hist = np.bincount(pos, weights=None if w is None else w[inside].astype(np.float64),
                       minlength=n_bins).astype(acc)
    if density:
        with np.errstate(invalid="ignore", divide="ignore"):
            hist = hist / acc.type(hist.sum(dtype=acc))
            hist = hist / np.diff(edges).astype(acc)
    return hist.astype(a.dtype)


def check_float_input(a: np.ndarray, kernel: str) -> None:
    """histc takes every floating dtype, histogram float32 and float64."""
    floats = "fV" if kernel == "histogram_cpu" else ("f",)
    if a.dtype.kind not in floats or (kernel == "histogramdd" and a.dtype == np.float16):
        raise not_implemented(kernel, a.dtype)
