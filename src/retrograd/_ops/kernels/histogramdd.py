"""NumPy kernels of histogramdd: the checks (torch's messages, in torch's order), the outer
edges, and the binning of points.

Binning follows torch's CPU kernel. A point is counted when each coordinate lies within its
dimension's [first edge, last edge] (NaN never does); the last bin of a dimension holds its
right edge. With given edges a coordinate's bin is std::upper_bound's binary search over the
edges (as libstdc++ runs it, so unsorted edges give torch's answer too); with evenly spaced
edges the bin (x - first) * bins / (last - first), computed in the input's dtype, narrows that
search to the bins on either side. Counts accumulate in the input's dtype, one element after
another, in the chunks torch's threads take, then the chunks are added.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from retrograd._ops.kernels.histograms import _cpp_name, _number_text
from retrograd._ops.kernels.special_gamma import sum_last_axis
from retrograd._ops.layout import not_implemented

PREFIX = "torch.histogramdd: "
GRAIN = 200  # points per thread chunk in torch's kernel, divided by the dimension count


def check_points(a: np.ndarray) -> None:
    if a.ndim < 2:
        raise RuntimeError(PREFIX + "input tensor should have at least 2 dimensions")


def check_bin_count_length(a: np.ndarray, bins: list) -> None:
    if len(bins) != a.shape[-1]:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")


def outer_edges(a: np.ndarray, range) -> tuple:
    """Each dimension's first and last edge: range's pairs, else the data's min and max
    ([0, 1] for no data); an empty range widened by 0.5 on each side."""
    n = a.shape[-1]
    points = a.reshape(math.prod(a.shape[:-1]), n)
    if range is not None:
        if len(range) != 2 * n:
            raise RuntimeError(f"{PREFIX}for a {n}-dimensional histogram range should have "
                               f"{2 * n} elements, but got {len(range)}")
        lows = [float(v) for v in range[0::2]]
        highs = [float(v) for v in range[1::2]]
    elif points.shape[0]:
        if a.dtype not in (np.float32, np.float64):
            raise not_implemented("histogramdd", a.dtype)
        lows = [float(v) for v in points.min(0)]
        highs = [float(v) for v in points.max(0)]
    else:
        lows, highs = [0.0] * n, [1.0] * n
    for d in builtins.range(n):
        low, high = lows[d], highs[d]
        if not (math.isfinite(low) and math.isfinite(high)):
            raise RuntimeError(f"{PREFIX}dimension {d}'s range [{_number_text(low)}, "
                               f"{_number_text(high)}] is not finite")
        if low > high:
            raise RuntimeError(f"{PREFIX}min should not exceed max, but got min "
                               f"{_number_text(low)} max {_number_text(high)} for dimension {d}")
        if low == high:
            lows[d], highs[d] = low - 0.5, high + 0.5
    return lows, highs



def check_operands(a: np.ndarray, edges: list, weight: np.ndarray | None) -> None:
    """torch's checks of input, edges and weight, then of the bin counts."""
    check_points(a)
    n = a.shape[-1]
    if len(edges) != n:
        raise RuntimeError(f"{PREFIX}expected {n} sequences of bin edges for a {n}-dimensional "
                           f"histogram but got {len(edges)}")
    for d, e in enumerate(edges):
        if e.dtype != a.dtype:
            raise RuntimeError(f"{PREFIX}input tensor and bins tensors should have the same "
                               f"dtype, but got input with dtype {_cpp_name(a.dtype)} and bins "
                               f"for dimension {d} with dtype {_cpp_name(e.dtype)}")
        if e.ndim != 1:
            raise RuntimeError(f"{PREFIX}bins tensor should have one dimension, but got "
                               f"{e.ndim} dimensions in the bins tensor for dimension {d}")
        if e.size == 0:
            raise RuntimeError(f"{PREFIX}bins tensor should have at least 1 element, but got 0 "
                               f"elements in the bins tensor for dimension {d}")
    if weight is not None:
        if weight.dtype != a.dtype:
            raise RuntimeError(f"{PREFIX}if weight tensor is provided, input tensor and weight "
                               f"tensor should have the same dtype, but got input("
                               f"{_cpp_name(a.dtype)}), and weight({_cpp_name(weight.dtype)})")
        if list(a.shape[:-1]) != list(weight.shape or (1,)):
            shape_a = ", ".join(map(str, a.shape))
            shape_w = ", ".join(map(str, weight.shape))
            raise RuntimeError(f"{PREFIX}if weight tensor is provided it should have the same "
                               "shape as the input tensor excluding its innermost dimension, but "
                               f"got input with shape [{shape_a}] and weight with shape "
                               f"[{shape_w}]")
    for d, e in enumerate(edges):
        if e.size - 1 <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {e.size - 1} for "
                               f"dimension {d}")
    if a.dtype.kind not in "fV":
        raise not_implemented("histogram_cpu", a.dtype)


def _upper_bound(edges: np.ndarray, x: np.ndarray, first: np.ndarray, length: np.ndarray):
    """std::upper_bound over edges[first:first + length] for each x, step for step as
    libstdc++ halves the range (so any edges, sorted or not, give its answer)."""
    first, length = first.copy(), length.copy()
    last = edges.size - 1
    while (length > 0).any():
        half = length >> 1
        mid = first + half
        live = length > 0
        right = live & ~(x < edges[np.minimum(mid, last)])
        first = np.where(right, mid + 1, first)
        length = np.where(right, length - half - 1, np.where(live, half, 0))
    return first


def _bins_of(x: np.ndarray, edges: np.ndarray, search: bool) -> np.ndarray:
    """The bin of each coordinate x (all within the outer edges)."""
    k = edges.size
    if search:
        first = np.zeros(x.shape, np.int64)
        pos = _upper_bound(edges, x, first, np.full(x.shape, k, np.int64)) - 1
    else:
        lo, hi = edges[0], edges[-1]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            guess = ((x - lo) * x.dtype.type(k - 1) / (hi - lo)).astype(np.int64)
        # a guess past the edges (an overflow to inf or NaN on the way: undefined behaviour in
        # torch's kernel) searches all edges
        wild = (guess < 0) | (guess > k - 1)
        guess = np.where(wild, 0, guess)
        pos_min = np.where(wild, 0, np.maximum(guess - 1, 0))
        pos_max = np.where(wild, k, np.minimum(guess + 2, k))
        pos = _upper_bound(edges, x, pos_min, np.maximum(pos_max - pos_min, 0)) - 1
    return np.where(pos == k - 1, pos - 1, pos)


def _counted(counts: np.ndarray, dt: np.dtype) -> np.ndarray:
    """counts as adding 1 at a time in dt gives them: stuck where +1 no longer rounds up."""
    limit = {np.dtype(np.float32): 2.0 ** 24, np.dtype(np.float64): 2.0 ** 53,
             np.dtype(np.float16): 2048.0}.get(dt, 256.0)  # bfloat16
    return np.minimum(counts, limit).astype(dt)


def _accumulate(flat: np.ndarray, weight: np.ndarray | None, size: int, dt: np.dtype,
                n_dims: int, threads: int) -> np.ndarray:
    """Each point's weight (1 without weights) added into bin flat[i] (-1: none), in torch's
    thread chunks; the chunks' histograms added in order."""
    n = flat.size
    grain = max(1, GRAIN // max(n_dims, 1))
    chunk = n
    if n > grain and n > 1 and threads > 1:
        chunk = -(-n // min(threads, -(-n // grain)))
    total = None
    for start in range(0, max(n, 1), max(chunk, 1)):
        idx = flat[start:start + chunk]
        keep = idx >= 0
        if weight is None:
            h = _counted(np.bincount(idx[keep], minlength=size), dt)
        else:
            h = np.zeros(size, dt)
            np.add.at(h, idx[keep], weight[start:start + chunk][keep])
        total = h if total is None else _added(total, h)
    return total if total is not None else np.zeros(size, dt)


def _added(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "V" or a.dtype == np.float16:
        return (a.astype(np.float32) + b.astype(np.float32)).astype(a.dtype)
    return a + b


def histogramdd(a: np.ndarray, edges: list, weight: np.ndarray | None, density: bool,
                search: bool, threads: int) -> np.ndarray:
    """The D-dimensional histogram of a's points (its last axis) over the edges of each
    dimension. search: edges of any spacing (else evenly spaced ones)."""
    n_dims = a.shape[-1]
    shape = tuple(e.size - 1 for e in edges)
    dt = a.dtype
    if n_dims == 0:
        hist = np.zeros((), dt)
    else:
        points = a.reshape(-1, n_dims)
        w = None if weight is None else weight.reshape(-1)
        flat = np.zeros(points.shape[0], np.int64)
        inside = np.ones(points.shape[0], bool)
        for d, e in enumerate(edges):
            x = points[:, d]
            with np.errstate(invalid="ignore"):
                inside &= (x >= e[0]) & (x <= e[-1])
        for d, e in enumerate(edges):
            x = points[inside, d]
            stride = math.prod(shape[d + 1:])
            flat[inside] += _bins_of(x, e, search) * stride
        flat[~inside] = -1
        hist = _accumulate(flat, w, math.prod(shape), dt, n_dims, threads).reshape(shape)
    if density:
        hist = _density(hist, edges)
    return hist


def _density(hist: np.ndarray, edges: list) -> np.ndarray:
    """hist over its sum (torch's float sum), then over each dimension's bin widths."""
    dt = hist.dtype
    wide = dt.kind == "V" or dt == np.float16
    acc = np.dtype(np.float32) if wide else dt
    flat = hist.reshape(1, -1).astype(acc)
    total = acc.type(sum_last_axis(flat, dt.itemsize)[0]) if flat.size else acc.type(0)
    if wide:
        total = acc.type(np.asarray(total).astype(dt))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (hist.astype(acc) / total).astype(dt)
        for d, e in enumerate(edges):
            widths = np.diff(e).reshape([-1 if i == d else 1 for i in range(hist.ndim)])
            out = (out.astype(acc) / widths.astype(acc)).astype(dt)
    return out
