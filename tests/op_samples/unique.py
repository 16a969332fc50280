"""Samples for unique, unique_consecutive and torch's ops behind them (_unique, _unique2,
_VF.unique_dim, _VF.unique_consecutive).

The values' derivative is not implemented in torch (their backward raises), so float inputs do
not require grad here; tests/parity/test_unique_parity.py checks the nodes, the requires_grad
flags and the error of that backward.
"""

import numpy as np

from tests.op_samples import Sample, arr

NO_GRAD = {"requires_grad": (False,)}


def ints(*values):
    return np.array(values, dtype=np.int64)


REPEATS = ints([3, 1, 3], [2, 7, 1], [0, 3, 1], [2, 7, 1])  # rows 1 and 3 are equal
ROWS = ints([1, 2], [1, 2], [0, 5], [0, 5], [1, 2])
# float values with repeats, NaN (never equal to itself) and both zeros
FLOATS = np.array([2.5, np.nan, -1.0, 2.5, 0.0, np.nan, -0.0, -1.0], np.float64)
BOOLS = np.array([True, False, True, True])


def unique_dim(lib, x, dim, *args, **kwargs):
    return lib._VF.unique_dim(x, dim, *args, **kwargs)


def vf_unique_consecutive(lib, x, *args, **kwargs):
    return lib._VF.unique_consecutive(x, *args, **kwargs)


SAMPLES = [
    Sample("unique", (REPEATS,)),
    Sample("unique", (REPEATS,), {"return_inverse": True, "return_counts": True}, name="all"),
    Sample("unique", (REPEATS, False, True), name="unsorted_inverse"),
    Sample("unique", (REPEATS,), {"return_counts": True}, name="counts"),
    Sample("unique", (REPEATS.T,), {"return_inverse": True}, name="noncontig"),
    Sample("unique", (FLOATS,), {"return_inverse": True, "return_counts": True}, name="nan",
           **NO_GRAD),
    Sample("unique", (BOOLS,), {"return_inverse": True, "return_counts": True}, name="bool"),
    Sample("unique", (arr(3, 4, low=-3, high=3, dtype="int32"),), {"return_counts": True},
           name="int32"),
    Sample("unique", (np.array(4.0),), {"return_inverse": True, "return_counts": True},
           name="zero_dim", **NO_GRAD),
    Sample("unique", (np.zeros(0),), {"return_inverse": True, "return_counts": True},
           name="empty", **NO_GRAD),
    Sample("unique", (REPEATS,), {"dim": 0, "return_inverse": True, "return_counts": True},
           name="dim0"),
    Sample("unique", (REPEATS,), {"dim": -1, "return_inverse": True}, name="dim_last"),
    Sample("unique", (ROWS.T,), {"dim": 1, "return_counts": True}, name="dim_noncontig"),
    Sample("unique", (np.zeros((0, 3)),), {"dim": 0, "return_inverse": True,
                                           "return_counts": True}, name="dim_empty", **NO_GRAD),
    Sample("Tensor.unique", (REPEATS, True, True, True), name="method"),
    Sample("_unique", (REPEATS,), {"return_inverse": True}),
    Sample("_unique", (REPEATS, False), name="no_inverse"),
    Sample("_unique2", (REPEATS, True, True, True)),
    Sample("_unique2", (FLOATS,), {"return_counts": True}, name="float", **NO_GRAD),
    Sample(unique_dim, (ROWS, 0)),
    Sample(unique_dim, (ROWS, 1, True, True, False), name="dim1"),
    Sample(unique_dim, (np.stack([ROWS, ROWS + 1]), 1), name="3d"),
    Sample("unique_consecutive", (ROWS,)),
    Sample("unique_consecutive", (ROWS.reshape(-1),), {"return_inverse": True,
                                                       "return_counts": True}, name="flat"),
    Sample("unique_consecutive", (FLOATS,), {"return_counts": True}, name="nan", **NO_GRAD),
    Sample("unique_consecutive", (ROWS,), {"dim": 0, "return_inverse": True,
                                           "return_counts": True}, name="dim0"),
    Sample("unique_consecutive", (ROWS.T,), {"dim": 1, "return_counts": True},
           name="dim_noncontig"),
    Sample("Tensor.unique_consecutive", (ROWS, True, True, -2), name="method"),
    Sample(vf_unique_consecutive, (ROWS,), {"dim": 0}, name="vf_dim"),
    Sample(vf_unique_consecutive, (ROWS,), name="vf"),
]
