"""Samples for scans and statistics: cummax/cummin/logcumsumexp, cumsum_/cumprod_, nanmean,
quantile/nanquantile, mode, cov/corrcoef, histograms, cdist/dist and renorm.

Inputs are random (no ties) unless a sample says otherwise; ties, NaN and error messages are
tested against torch in tests/test_statistics.py.
"""

import numpy as np

from retrograd import float64
from tests.op_samples import Sample, arr, pos

NOT_DIFF = {"gradcheck": False}
# q as a tensor: its gradient exists (through the interpolation weights), but finite
# differences would step q out of [0, 1], which quantile refuses
Q_FIXED = {"requires_grad": (True, False)}


def with_values(a: np.ndarray, flat_index: list, value: float) -> np.ndarray:
    a = a.copy()
    a.reshape(-1)[flat_index] = value
    return a


def cumsum_(lib, x, dim):
    return x.clone().cumsum_(dim)


def cumprod_(lib, x, dim):
    return x.clone().cumprod_(dim)


_SCANS = [
    Sample("cummax", (arr(3, 5), 1)),
    Sample("cummax", (arr(3, 5), 0), name="dim0"),
    Sample("cummax", (arr(2, 3, 4), -1), name="3d"),
    Sample("cummax", (arr(), 0), name="zero_dim"),
    Sample("cummax", (arr(0, 3), 1), name="empty"),
    Sample("Tensor.cummax", (arr(4, 3, noncontig=True), 0), name="noncontig"),
    Sample("cummax", (arr(3, 5, low=-9, high=9, dtype="int64"), 1), name="int", **NOT_DIFF),
    Sample("cummin", (arr(3, 5), 1)),
    Sample("cummin", (arr(2, 3, 4), 1), name="3d"),
    Sample("cummin", (arr(), -1), name="zero_dim"),
    Sample("Tensor.cummin", (arr(4, 3, noncontig=True), -2), name="noncontig"),
    Sample("logcumsumexp", (arr(3, 5), 1)),
    Sample("logcumsumexp", (arr(2, 3, 4), 0), name="dim0"),
    # (far from 0, float32 rounds the inputs by about 3e-5: both libraries' float32 gradients
    # stray that far from the exact one, each its own way; compared in float64)
    Sample("logcumsumexp", (arr(3, 4) * 5 + 500.0, 1), name="big", parity_dtype="float64"),
    Sample("logcumsumexp", (arr(3, 4) * 5 - 500.0, 1), name="very_negative",
           parity_dtype="float64"),
    Sample("logcumsumexp", (arr(), 0), name="zero_dim"),
    Sample("logcumsumexp", (arr(0, 3), 1), name="empty"),
    Sample("Tensor.logcumsumexp", (arr(4, 3, noncontig=True), 0), name="noncontig"),
    Sample(cumsum_, (arr(3, 4), 1)),
    Sample(cumsum_, (arr(), 0), name="zero_dim"),
    Sample(cumprod_, (arr(3, 4), 0)),
    Sample(cumprod_, (with_values(arr(3, 4), [1, 6], 0.0), 1), name="zeros"),
]


def q(*values):
    return np.array(values, dtype=np.float64)


def ints(*values):
    return np.array(values, dtype=np.int64)


_NAN_ROWS = with_values(arr(3, 5), [1, 7, 8], np.nan)

_STATISTICS = [
    Sample("nanmean", (arr(3, 4),)),
    Sample("nanmean", (_NAN_ROWS, 1), name="nan_dim"),
    Sample("nanmean", (_NAN_ROWS, (0, 1), True), name="dims_keepdim"),
    Sample("nanmean", (arr(3, 4),), {"dtype": float64}, name="dtype"),
    Sample("Tensor.nanmean", (arr(4, 3, noncontig=True), 0), name="noncontig"),
    Sample("quantile", (arr(3, 5), 0.3)),
    Sample("quantile", (arr(3, 5), 0.3, 1), name="dim"),
    Sample("quantile", (arr(3, 5), 0.75, 0, True), name="dim0_keepdim"),
    Sample("quantile", (arr(3, 5), q(0.1, 0.5, 0.9), 1), name="q_tensor", **Q_FIXED),
    Sample("quantile", (arr(3, 5), q(0.2, 1.0)), {"keepdim": True}, name="q_tensor_all",
           **Q_FIXED),
    Sample("quantile", (arr(2, 3, 4), q(0.4, 0.0), -2), name="3d", **Q_FIXED),
    Sample("quantile", (arr(3, 5), q(0.3, 0.6), 1), {"interpolation": "midpoint"},
           name="midpoint", **Q_FIXED),
    *[Sample("quantile", (arr(3, 5), 0.3, 1), {"interpolation": mode}, name=mode)
      for mode in ("lower", "higher", "nearest")],
    Sample("quantile", (arr(), 0.5), name="zero_dim"),
    Sample("quantile", (arr(), q(0.2, 0.5), 0, True), name="zero_dim_dim", **Q_FIXED),
    Sample("quantile", (_NAN_ROWS, 0.4, 1), name="nan", **NOT_DIFF),
    Sample("Tensor.quantile", (arr(4, 3, noncontig=True), q(0.5),), {"dim": 0}, name="method",
           **Q_FIXED),
    Sample("nanquantile", (_NAN_ROWS, 0.4, 1)),
    Sample("nanquantile", (_NAN_ROWS, q(0.25, 0.5)), name="all", **Q_FIXED),
    Sample("nanquantile", (with_values(arr(3, 4), [4, 5, 6, 7], np.nan), 0.5, 1),
           name="nan_row", **NOT_DIFF),
    Sample("Tensor.nanquantile", (_NAN_ROWS, 0.6, 0, True), {"interpolation": "higher"},
           name="method"),
    Sample("mode", (arr(3, 5),)),
    Sample("mode", (arr(3, 5), 0, True), name="dim0_keepdim"),
    # (a per-example 0-d value under vmap: the batched gradient check meets the select helpers'
    # rank-0 gap that max-zero_dim_dim and kthvalue-zero_dim list in test_ops_generated.py)
    Sample("mode", (arr(),), name="zero_dim", **NOT_DIFF),
    Sample("Tensor.mode", (np.array([[1.0, 2.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 4.0]]),),
           name="ties", **NOT_DIFF),
    Sample("mode", (np.array([[3, 1, 3, 1, 2] * 5, [0, 0, 1, 1, 2] * 5]),), name="int_long_rows",
           **NOT_DIFF),
    Sample("cov", (arr(3, 6),)),
    Sample("cov", (arr(6),), name="1d"),
    Sample("cov", (arr(3, 6),), {"correction": 0}, name="correction0"),
    Sample("cov", (arr(2, 6),), {"fweights": ints(1, 2, 1, 3, 1, 1)}, name="fweights"),
    Sample("cov", (arr(2, 6),), {"aweights": pos(6)}, name="aweights"),
    Sample("cov", (arr(2, 6),), {"fweights": ints(1, 2, 1, 3, 1, 1), "aweights": pos(6),
                                 "correction": 2}, name="both_weights"),
    Sample("Tensor.cov", (arr(6, 3, noncontig=True),), name="noncontig"),
    Sample("cov", (np.array([[1, 2, 4], [2, 2, 5]]),), name="int", **NOT_DIFF),
    Sample("corrcoef", (arr(3, 6),)),
    Sample("corrcoef", (arr(6),), name="1d"),
    Sample("Tensor.corrcoef", (arr(6, 3, noncontig=True),), name="noncontig"),
]


# bincount and histogram have no derivative (torch's NotImplemented node): they run on inputs
# that do not require grad, their result a constant factor of a differentiable expression


def bincount_const(lib, x, w):
    return x * lib.bincount(lib.tensor([0, 2, 2, 1, 4]), weights=w, minlength=6)


def histogram_const(lib, x, a, w):
    return x * lib.histogram(a, 4, range=(-1.0, 1.0), weight=w, density=True).hist


def histogram_edges_const(lib, x, a, edges):
    return x * lib.histogram(a, edges).hist


_HISTOGRAMS = [
    Sample("bincount", (ints(0, 2, 2, 1, 4, 1),)),
    Sample("bincount", (ints(0, 2, 2, 1, 4, 1), arr(6)), {"minlength": 8}, name="weights",
           requires_grad=(False, False)),
    Sample("Tensor.bincount", (ints(3, 3, 0),), {"minlength": 2}, name="method"),
    Sample(bincount_const, (arr(6), arr(5)), requires_grad=(True, False)),
    Sample("histc", (arr(4, 5),), {"bins": 6}, requires_grad=(False,)),
    Sample("histc", (arr(20),), {"bins": 4, "min": -0.5, "max": 0.5}, name="range",
           requires_grad=(False,)),
    Sample("Tensor.histc", (np.array([0.0, 1.0, 2.0, 3.0]), 3, 0, 3), name="edges",
           requires_grad=(False,)),
    Sample("histogram", (arr(4, 5), 5), requires_grad=(False,)),
    Sample("histogram", (arr(20), np.array([-1.0, -0.2, 0.1, 1.0])), {"density": True},
           name="edges", requires_grad=(False, False)),
    Sample("Tensor.histogram", (arr(20),), {"bins": 3, "weight": pos(20), "range": (-0.5, 0.5)},
           name="weight", requires_grad=(False, False)),
    Sample(histogram_const, (arr(4), arr(30), pos(30)), requires_grad=(True, False, False)),
    Sample(histogram_edges_const, (arr(3), arr(30), np.array([-1.0, 0.0, 0.3, 1.0])),
           requires_grad=(True, False, False)),
]



def renorm_(lib, x, p, dim, maxnorm):
    return x.clone().renorm_(p, dim, maxnorm)


_DISTANCES = [
    Sample("cdist", (arr(3, 4), arr(5, 4))),
    *[Sample("cdist", (arr(3, 4), arr(5, 4), p), name=f"p{p}") for p in (0.0, 1.0, 0.5, 1.5,
                                                                      3.0, float("inf"))],
    Sample("cdist", (arr(2, 3, 4), arr(5, 4)), name="batch"),
    Sample("cdist", (arr(1, 3, 4), arr(2, 1, 5, 4)), {"p": 1.0}, name="batch_broadcast"),
    # more than 25 rows: the matrix-product form (EuclideanDistBackward0)
    Sample("cdist", (arr(27, 3), arr(4, 3)), name="mm"),
    Sample("cdist", (arr(2, 26, 3), arr(4, 3)), name="mm_batch"),
    Sample("cdist", (arr(3, 4), arr(5, 4)), {"compute_mode": "use_mm_for_euclid_dist"},
           name="mm_mode"),
    Sample("cdist", (arr(30, 4), arr(5, 4)), {"compute_mode": "donot_use_mm_for_euclid_dist"},
           name="no_mm"),
    Sample("cdist", (arr(0, 4), arr(5, 4)), name="empty"),
    Sample("_euclidean_dist", (arr(3, 4), arr(5, 4))),
    Sample("dist", (arr(3, 4), arr(3, 4))),
    Sample("dist", (arr(3, 4), arr(4)), name="broadcast"),
    *[Sample("dist", (arr(3, 4), arr(3, 4), p), name=f"p{p}") for p in (1, 3, float("inf"))],
    Sample("Tensor.dist", (arr(2, 3), arr(2, 3), 0.5), name="method"),
    Sample("renorm", (arr(3, 4), 2, 0, 0.7)),
    Sample("renorm", (arr(3, 4), 1, 1, 0.5), name="p1_dim1"),
    Sample("renorm", (arr(2, 3, 4), 3, -1, 0.6), name="3d"),
    Sample("renorm", (arr(3, 4) * 0.1, 2, 0, 5.0), name="no_change"),
    Sample("Tensor.renorm", (arr(4, 3, noncontig=True), 2, 1, 0.8), name="noncontig"),
    Sample(renorm_, (arr(3, 4), 2, 0, 0.7)),
]

SAMPLES = _SCANS + _STATISTICS + _HISTOGRAMS + _DISTANCES
