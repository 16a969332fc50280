"""Samples for segment_reduce: every reduction with lengths, with offsets, with initial, along
axis 1 with 2-d lengths. Empty segments come with an initial value or in sum/prod only (mean's
NaN and max's -inf of an empty segment have no finite-difference derivative). torch implements
no derivative of _segment_reduce_backward, so there is no gradgradcheck (its double backward
raises)."""

import numpy as np

from tests.op_samples import Sample, arr

LENGTHS = np.array([2, 1, 2, 1], dtype=np.int64)
EMPTY = np.array([2, 0, 3, 1], dtype=np.int64)
OFFSETS = np.array([0, 2, 2, 5, 6], dtype=np.int64)
LENGTHS_2D = np.array([[1, 3, 0], [2, 0, 2]], dtype=np.int64)  # data (2, 4, 3) along axis 1

SAMPLES = [
    Sample("segment_reduce", (arr(6, 3), r), {"lengths": LENGTHS}, name=r, gradgrad=False)
    for r in ("sum", "mean", "max", "min", "prod")
] + [
    Sample("segment_reduce", (arr(6, 3), r), {"lengths": EMPTY}, name=f"{r}_empty",
           gradgrad=False)
    for r in ("sum", "prod")
] + [
    Sample("segment_reduce", (arr(6, 3), r), {"offsets": OFFSETS, "initial": 0.5},
           name=f"{r}_offsets_initial", gradgrad=False)
    for r in ("sum", "mean", "max", "min", "prod")
] + [
    Sample("segment_reduce", (arr(2, 4, 3), r), {"lengths": LENGTHS_2D, "axis": 1,
                                                "initial": -0.25},
           name=f"{r}_axis1", gradgrad=False)
    for r in ("sum", "mean", "max", "min", "prod")
]
