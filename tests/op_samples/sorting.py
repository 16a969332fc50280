"""Samples for ordering and diagonal ops: sort/argsort/msort/topk/kthvalue, isin, scatter_reduce,
diag/diag_embed/diagflat/diagonal_copy.

Inputs are random (no ties), so indices are compared with torch too; ties and NaN, where torch's
order of equal values is unspecified, are tested in tests/test_sorting_ops.py.
"""

import numpy as np

from tests.op_samples import Sample, arr

NOT_DIFF = {"gradcheck": False}


def ints(*values):
    return np.array(values, dtype=np.int64)


def with_values(a: np.ndarray, flat_index: list, value: float) -> np.ndarray:
    a = a.copy()
    a.reshape(-1)[flat_index] = value
    return a


def scatter_reduce_(lib, x, dim, index, src, reduce, include_self=True):
    return x.clone().scatter_reduce_(dim, index, src, reduce, include_self=include_self)


# index (2, 4) into a (3, 4) self along dim 0: cells hit twice, once, and not at all
IDX = ints([0, 1, 0, 2], [0, 1, 2, 2])
IDX1 = ints([1, 0, 1], [2, 2, 0], [3, 3, 3])  # (3, 3) along dim 1 of a (3, 4) self

_SORT = [
    Sample("sort", (arr(3, 5),)),
    Sample("sort", (arr(3, 5), 0), name="dim0"),
    Sample("sort", (arr(3, 5), -1, True), name="descending"),
    Sample("sort", (arr(4, 3, noncontig=True), 0), name="noncontig"),
    Sample("sort", (arr(),), name="zero_dim"),
    # torch.from_numpy gives an empty array strides (0, 0), which torch's sort then copies
    Sample("sort", (arr(2, 0),), name="empty", check_strides=False),
    Sample("sort", (arr(3, 5),), {"stable": True, "dim": 0, "descending": True}, name="stable"),
    Sample("sort", (arr(6),), {"stable": False}, name="stable_false"),
    Sample("Tensor.sort", (arr(2, 3, 4), 1), name="method"),
    Sample("sort", (arr(3, 5, low=-50, high=50, dtype="int64"),), name="int"),
    Sample("argsort", (arr(3, 5),), name="float", **NOT_DIFF),
    Sample("argsort", (arr(3, 5), 0, True), name="descending", **NOT_DIFF),
    Sample("argsort", (arr(3, 5),), {"stable": True, "dim": 0}, name="stable", **NOT_DIFF),
    Sample("Tensor.argsort", (arr(4, 3, noncontig=True),), name="noncontig", **NOT_DIFF),
    Sample("msort", (arr(4, 3),)),
    Sample("Tensor.msort", (arr(4, 3, noncontig=True),), name="noncontig"),
    Sample("topk", (arr(3, 6), 2)),
    Sample("topk", (arr(3, 6), 2, 0), name="dim0"),
    Sample("topk", (arr(3, 6), 3, -1, False), name="smallest"),
    Sample("topk", (arr(3, 6), 0), name="k0"),
    Sample("topk", (arr(3, 6), 6), name="all"),
    Sample("topk", (arr(), 1), name="zero_dim"),
    Sample("Tensor.topk", (arr(5, 4, noncontig=True), 2, 0), {"largest": False}, name="method"),
    Sample("topk", (np.array([4, -2, 9, 0, 7, -5, 3, 1], np.int32), 3), name="int"),
    Sample("kthvalue", (arr(3, 6), 2)),
    Sample("kthvalue", (arr(3, 6), 3, 0, True), name="keepdim"),
    Sample("kthvalue", (arr(), 1), name="zero_dim"),
    Sample("Tensor.kthvalue", (arr(5, 4, noncontig=True), 5, 0), name="noncontig"),
    Sample("kthvalue", (arr(2, 3, 4), 4, -1, True), name="3d"),
    Sample("isin", (ints(1, 2, 3, 4), ints(2, 4, 7)), **NOT_DIFF),
    Sample("isin", (ints([1, 5], [3, 4]), 4), name="scalar_test", **NOT_DIFF),
    Sample("isin", (3, ints(2, 3)), name="scalar_element", **NOT_DIFF),
    Sample("isin", (np.array([0.5, 1.0, 2.5]), ints(1, 2)), {"invert": True}, name="invert",
           requires_grad=(False, False), **NOT_DIFF),
]

_SCATTER = [
    Sample("scatter_reduce", (arr(3, 4), 0, IDX, arr(2, 4), r), {"include_self": inc},
           name=f"{r}_{'self' if inc else 'noself'}")
    for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)
] + [
    # src larger than index: torch's backward fails on the shapes (tests/test_sorting_ops.py
    # compares the forward); retrograd's gradient is zero outside index's corner
    Sample("Tensor.scatter_reduce", (arr(3, 4), 1, IDX1, arr(3, 5), "amax"), name="dim1_big_src",
           parity=False),
    Sample("scatter_reduce", (arr(3, 4), 1, IDX1, arr(3, 3), "prod"), name="dim1_prod"),
    Sample("scatter_reduce", (with_values(arr(3, 4), [2, 5], 0.0), 0, IDX,
                              with_values(arr(2, 4), [0, 6], 0.0), "prod"), name="prod_zeros"),
    # two zeros reach cell (0, 0): first order only (torch refuses double backward there)
    Sample("scatter_reduce", (arr(3, 4), 0, IDX, with_values(arr(2, 4), [0, 4], 0.0), "prod"),
           name="prod_two_zeros", gradgrad=False),
    Sample("scatter_reduce", (arr(4, dtype="int64", low=-20, high=20), 0, ints(0, 1, 0, 3),
                              arr(4, dtype="int64", low=-20, high=20), "mean"), name="int_mean"),
    Sample(scatter_reduce_, (arr(3, 4), 0, IDX, arr(2, 4), "sum"), name="sum"),
    Sample(scatter_reduce_, (arr(3, 4), 0, IDX, arr(2, 4), "prod", False), name="prod"),
    Sample(scatter_reduce_, (arr(3, 4), 0, IDX, arr(2, 4), "amin"), name="amin"),
]

_DIAG = [
    Sample("diag", (arr(4),)),
    Sample("diag", (arr(4), 1), name="offset"),
    Sample("diag", (arr(3), -2), name="neg_offset"),
    Sample("diag", (arr(3, 4),), name="matrix"),
    Sample("diag", (arr(4, 3, noncontig=True), -1), name="matrix_noncontig"),
    Sample("Tensor.diag", (arr(3, 4), 2), name="method"),
    Sample("diag_embed", (arr(2, 3),)),
    Sample("diag_embed", (arr(2, 3), 1, 0, 2), name="dims"),
    Sample("Tensor.diag_embed", (arr(3), -1), name="offset"),
    Sample("diagflat", (arr(2, 2),)),
    Sample("diagflat", (arr(3), -1), name="offset"),
    Sample("Tensor.diagflat", (arr(),), name="zero_dim"),
    Sample("diagonal_copy", (arr(3, 4), 1)),
    Sample("diagonal_copy", (arr(2, 3, 4), 0, 2, 0), name="dims"),
]

SAMPLES = _SORT + _SCATTER + _DIAG
