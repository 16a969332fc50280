"""Samples for the reduction family: sums, extremes, statistics, norms, cumulative ops, softmax.

Inputs for max/min/amax/median are random (no ties); the tie rules are tested against torch in
tests/test_reduction_ops.py.
"""

import numpy as np

from retrograd import float32, float64
from tests.op_samples import Sample, arr, pos


def with_values(a: np.ndarray, flat_index: list, value: float) -> np.ndarray:
    a = a.copy()
    a.reshape(-1)[flat_index] = value
    return a


def big(*shape) -> np.ndarray:
    """Values far from 0, where exp overflows without subtracting the max first."""
    return arr(*shape, low=-3.0, high=3.0) + 500.0


def vector_norm(lib, x, *args, **kwargs):
    """torch.linalg.vector_norm (retrograd: the op, until retrograd.linalg exposes it)."""
    linalg = getattr(lib, "linalg", None)
    fn = getattr(linalg, "vector_norm", None) or lib._ops.reduction.linalg_vector_norm
    return fn(x, *args, **kwargs)


# float32 outputs (dtype=) are too coarse for float64 finite differences: parity covers them
NO_GRADCHECK_F32 = {"gradcheck": False}
# integer / bool outputs: nothing to differentiate
NOT_DIFF = {"gradcheck": False}

SAMPLES = [
    # sum, nansum, mean (core.py has the basic sum/mean samples)
    Sample("sum", (arr(),), name="zero_dim"),
    Sample("sum", (arr(), 0), name="zero_dim_dim"),
    Sample("sum", (arr(), -1, True), name="zero_dim_keepdim"),
    Sample("sum", (arr(3, 4, noncontig=True), 0, True), name="noncontig_keepdim"),
    Sample("sum", (arr(2, 3, 4), [-1, 0]), name="neg_dims"),
    Sample("sum", (arr(2, 3), ()), name="empty_dim_list"),
    Sample("sum", (arr(2, 3), None, True), name="none_keepdim"),
    Sample("sum", (arr(2, 3),), {"dtype": float32}, name="dtype", **NO_GRADCHECK_F32),
    Sample("sum", (arr(2, 3, dtype="int32"),), name="int"),
    Sample("sum", (arr(2, 3, dtype="bool"), 1), name="bool"),
    Sample("nansum", (with_values(arr(2, 3), [1, 4], np.nan),), name="nan"),
    Sample("nansum", (with_values(arr(2, 3), [0], np.nan), 1), name="dim"),
    Sample("nansum", (arr(2, 3, 4), (0, -1), True), name="dims_keepdim"),
    Sample("nansum", (arr(),), name="zero_dim"),
    Sample("mean", (arr(),), name="zero_dim"),
    Sample("mean", (arr(3, 4, noncontig=True), 1, True), name="noncontig"),
    Sample("mean", (arr(2, 3), ()), name="empty_dim_list"),
    Sample("mean", (arr(2, 3, dtype="int32"),), {"dtype": float64}, name="int_dtype"),
    # prod, with zeros (torch's backward is exact there)
    Sample("prod", (pos(2, 3),), name="all"),
    Sample("prod", (arr(2, 3, 2), 1), name="dim"),
    Sample("prod", (arr(2, 3), -1, True), name="keepdim"),
    Sample("prod", (arr(),), name="zero_dim"),
    Sample("prod", (arr(), 0), name="zero_dim_dim"),
    Sample("prod", (arr(3, 4, noncontig=True), 0), name="noncontig"),
    Sample("prod", (with_values(arr(2, 3), [4], 0.0),), name="one_zero"),
    Sample("prod", (with_values(arr(2, 3), [1, 4], 0.0),), name="two_zeros"),
    Sample("prod", (with_values(arr(3, 4), [1, 5, 6], 0.0), 1), name="dim_zeros"),
    Sample("prod", (with_values(arr(3, 4), [1, 5, 6], 0.0), 0, True), name="dim0_zeros"),
    Sample("prod", (arr(2, 3, dtype="int32"),), name="int"),
    Sample("prod", (arr(2, 3), 1), {"dtype": float32}, name="dtype", **NO_GRADCHECK_F32),
    # amax, amin, max, min
    Sample("amax", (arr(3, 4),), name="all"),
    Sample("amax", (arr(3, 4), 1), name="dim"),
    Sample("amax", (arr(2, 3, 4), (0, -1), True), name="dims_keepdim"),
    Sample("amax", (arr(),), name="zero_dim"),
    Sample("amax", (arr(4, 3, noncontig=True), 0, True), name="noncontig"),
    Sample("amax", (arr(0, 3), 1), name="empty"),
    Sample("amin", (arr(3, 4),), name="all"),
    Sample("amin", (arr(2, 3, 4), -2), name="dim"),
    Sample("amin", (arr(2, 3, 4), [0, 2], True), name="dims_keepdim"),
    Sample("max", (arr(3, 4),), name="all"),
    Sample("max", (arr(3, 4), 1), name="dim"),
    Sample("max", (arr(2, 3, 4), -1, True), name="keepdim"),
    Sample("max", (arr(),), name="zero_dim"),
    Sample("max", (arr(), 0), name="zero_dim_dim"),
    Sample("max", (arr(4, 3, noncontig=True), 0), name="noncontig"),
    Sample("Tensor.max", (arr(3, 4),), {"dim": 0, "keepdim": True}, name="method"),
    Sample("min", (arr(3, 4),), name="all"),
    Sample("min", (arr(3, 4), 0), name="dim"),
    Sample("min", (arr(2, 3, 4), -2, True), name="keepdim"),
    Sample("aminmax", (arr(3, 4),), name="all"),
    Sample("aminmax", (arr(3, 4),), {"dim": 1, "keepdim": True}, name="dim"),
    Sample("argmax", (arr(3, 4),), name="all", **NOT_DIFF),
    Sample("argmax", (arr(3, 4), 1), name="dim", **NOT_DIFF),
    Sample("argmax", (arr(2, 3, 4),), {"dim": -1, "keepdim": True}, name="keepdim", **NOT_DIFF),
    Sample("argmax", (arr(2, 3),), {"keepdim": True}, name="all_keepdim", **NOT_DIFF),
    Sample("argmax", (arr(4, 3, noncontig=True), 0), name="noncontig", **NOT_DIFF),
    Sample("argmin", (arr(3, 4), 0), name="dim", **NOT_DIFF),
    Sample("argmin", (arr(),), name="zero_dim", **NOT_DIFF),
    Sample("median", (arr(3, 4),), name="all"),
    Sample("median", (arr(3, 4), 1), name="dim"),
    Sample("median", (arr(3, 5), 0, True), name="keepdim"),
    Sample("nanmedian", (with_values(arr(3, 4), [2, 5], np.nan),), name="all"),
    Sample("nanmedian", (with_values(arr(3, 4), [2, 5], np.nan), 1), name="dim"),
    # var, std, var_mean, std_mean
    Sample("var", (arr(3, 4),), name="all"),
    Sample("var", (arr(3, 4), 1), name="dim"),
    Sample("var", (arr(2, 3, 4), (0, 2), True), name="dims_keepdim"),
    Sample("var", (arr(3, 4), 1, False), name="biased"),
    Sample("var", (arr(3, 4),), {"dim": 0, "correction": 0}, name="correction0"),
    Sample("var", (arr(3, 4),), {"dim": -1, "correction": 2.5, "keepdim": True},
           name="correction_float"),
    Sample("var", (arr(4, 3, noncontig=True), 0), name="noncontig"),
    Sample("var", (arr(5),), {"unbiased": False}, name="unbiased_kw"),
    Sample("std", (arr(3, 4),), name="all"),
    Sample("std", (arr(3, 4), 0, True, True), name="dim_keepdim"),
    Sample("std", (arr(2, 3, 4),), {"dim": (1, 2), "correction": 0}, name="correction0"),
    Sample("std", (arr(4),), name="one_dim"),
    Sample("var_mean", (arr(3, 4),), name="all"),
    Sample("var_mean", (arr(3, 4), 1), {"keepdim": True}, name="dim"),
    Sample("std_mean", (arr(3, 4),), name="all"),
    Sample("std_mean", (arr(2, 3, 4),), {"dim": [0, 1], "correction": 0}, name="dims"),
    # norms
    Sample("norm", (arr(3, 4),), name="default"),
    Sample("norm", (arr(3, 4), 1), name="p1"),
    Sample("norm", (arr(3, 4), float("inf")), name="inf"),
    Sample("norm", (arr(3, 4), float("-inf"), 1), name="neg_inf_dim"),
    Sample("norm", (arr(3, 4), 3, 1, True), name="p3_keepdim"),
    Sample("norm", (arr(3, 4), 1.5, 0), name="p1_5"),
    Sample("norm", (arr(3, 4), 0.5), name="p0_5"),
    Sample("norm", (arr(3, 4), 0), name="p0"),
    Sample("norm", (arr(2, 3, 4), "fro", (0, 2)), name="fro_dims"),
    Sample("norm", (arr(4, 3, noncontig=True),), {"dim": -1}, name="noncontig"),
    Sample("norm", (arr(),), name="zero_dim"),
    Sample("norm", (arr(3, 4),), {"dtype": float64}, name="dtype", parity_dtype="float32"),
    Sample("Tensor.norm", (arr(3, 4),), {"p": 2, "dim": 1}, name="method"),
    Sample(vector_norm, (arr(3, 4), 2, (0, 1), True), name="keepdim"),
    Sample(vector_norm, (arr(3, 4), -1.5, 1), name="negative"),
    # logsumexp
    Sample("logsumexp", (arr(3, 4), 1), name="dim"),
    Sample("logsumexp", (arr(2, 3, 4), (0, -1), True), name="dims_keepdim"),
    Sample("logsumexp", (arr(), 0), name="zero_dim"),
    Sample("logsumexp", (arr(4, 3, noncontig=True), 0), name="noncontig"),
    Sample("logsumexp", (big(3, 4), -1), name="large"),
    Sample("logsumexp", (arr(2, 3, dtype="int64"), 1), name="int", **NOT_DIFF),
    # cumsum, cumprod
    Sample("cumsum", (arr(3, 4), 1), name="dim"),
    Sample("cumsum", (arr(2, 3, 4), -3), name="neg"),
    Sample("cumsum", (arr(), 0), name="zero_dim"),
    Sample("cumsum", (arr(4, 3, noncontig=True), 0), name="noncontig"),
    Sample("cumsum", (arr(0, 3), 0), name="empty"),
    Sample("cumsum", (arr(3, 4), 1), {"dtype": float32}, name="dtype", **NO_GRADCHECK_F32),
    Sample("cumsum", (arr(3, 4, dtype="int32"), 0), name="int", **NOT_DIFF),
    Sample("Tensor.cumsum", (arr(3, 4),), {"dim": -1}, name="method"),
    Sample("cumprod", (arr(3, 4), 1), name="dim"),
    Sample("cumprod", (arr(2, 3, 4), -2), name="neg"),
    Sample("cumprod", (arr(), 0), name="zero_dim"),
    Sample("cumprod", (arr(4, 3, noncontig=True), 0), name="noncontig"),
    Sample("cumprod", (arr(1, 3), 0), name="size_one"),
    Sample("cumprod", (with_values(arr(3, 4), [1, 4, 6, 10], 0.0), 1), name="zeros"),
    Sample("cumprod", (with_values(arr(4, 3), [3, 9], 0.0), 0), name="zeros_dim0"),
    Sample("cumprod", (arr(3, 4, dtype="bool"), 1), name="bool", **NOT_DIFF),
    # softmax, log_softmax
    Sample("softmax", (arr(3, 4), 1), name="dim"),
    Sample("softmax", (arr(2, 3, 4), -2), name="neg"),
    Sample("softmax", (arr(), 0), name="zero_dim"),
    Sample("softmax", (arr(4, 3, noncontig=True), 1), name="noncontig"),
    Sample("softmax", (big(3, 4), 1), name="large"),
    Sample("softmax", (arr(3, 4), 1), {"dtype": float64}, name="dtype"),
    Sample("softmax", (arr(0, 3), 1), name="empty"),
    Sample("Tensor.softmax", (arr(3, 4), 0), name="method"),
    Sample("nn.functional.softmax", (arr(3, 4),), {"dim": -1}, name="functional"),
    Sample("log_softmax", (arr(3, 4), 1), name="dim"),
    Sample("log_softmax", (arr(2, 3, 4), 0), name="dim0"),
    Sample("log_softmax", (arr(), -1), name="zero_dim"),
    Sample("log_softmax", (arr(4, 3, noncontig=True), 1), name="noncontig"),
    Sample("log_softmax", (big(3, 4), 1), name="large"),
    Sample("Tensor.log_softmax", (arr(3, 4), -1), name="method"),
    Sample("nn.functional.log_softmax", (arr(3, 4), 0), name="functional"),
    # all, any, count_nonzero
    Sample("all", (arr(3, 4, dtype="bool"),), name="bool", **NOT_DIFF),
    Sample("all", (arr(3, 4, dtype="bool"), 1), name="dim", **NOT_DIFF),
    Sample("all", (arr(2, 3, 4, dtype="bool"), (0, 2), True), name="dims", **NOT_DIFF),
    Sample("all", (arr(3, 4, low=0, high=3, dtype="uint8"), 0), name="uint8", **NOT_DIFF),
    Sample("all", (arr(4, 3, dtype="bool").T, 1, True), name="noncontig", **NOT_DIFF),
    Sample("any", (arr(3, 4, dtype="bool"),), name="bool", **NOT_DIFF),
    Sample("any", (arr(3, 4, low=0, high=2, dtype="int32"), -1, True), name="int",
           **NOT_DIFF),
    Sample("any", (arr(3, 4),), name="float", **NOT_DIFF),
    Sample("count_nonzero", (arr(3, 4, low=0, high=2, dtype="int64"),), name="all",
           **NOT_DIFF),
    Sample("count_nonzero", (arr(3, 4, low=0, high=2, dtype="int64"), 1), name="dim",
           **NOT_DIFF),
    Sample("count_nonzero", (arr(2, 3, 4, low=0, high=2, dtype="int64"), (0, 2)), name="dims",
           **NOT_DIFF),
    Sample("count_nonzero", (arr(4, 3, low=0, high=2, dtype="int64").T, 1), name="noncontig",
           **NOT_DIFF),
]
