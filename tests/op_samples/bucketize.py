"""Samples for searchsorted (1-d and row-wise boundaries, sides, sorter, int32 output) and the
unsafe split variants (tests/test_bucketize.py covers bucketize and the errors)."""

import numpy as np

from tests.op_samples import Sample, arr

NOT_DIFF = {"gradcheck": False}
ROWS = np.array([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])
VALUES = np.array([[3.0, 6.0], [1.0, 7.0]])
SEQ = np.array([1.0, 3.0, 5.0])

SAMPLES = [
    Sample("searchsorted", (SEQ, VALUES), name="1d", **NOT_DIFF),
    Sample("searchsorted", (ROWS, VALUES), name="rows", **NOT_DIFF),
    Sample("searchsorted", (ROWS, VALUES), {"right": True}, name="right", **NOT_DIFF),
    Sample("searchsorted", (ROWS, VALUES), {"side": "right"}, name="side", **NOT_DIFF),
    Sample("searchsorted", (SEQ, VALUES), {"out_int32": True}, name="int32", **NOT_DIFF),
    Sample("searchsorted", (np.array([5.0, 1.0, 3.0]), np.array([2.0, 4.0])),
           {"sorter": np.array([1, 2, 0], dtype=np.int64)}, name="sorter", **NOT_DIFF),
    Sample("Tensor.unsafe_split", (arr(5, 3), 2)),
    Sample("Tensor.unsafe_split", (arr(3, 5), 2, 1), name="dim1"),
    Sample("Tensor.unsafe_split_with_sizes", (arr(5, 3), [1, 4])),
]
