"""Samples for index_reduce and index_reduce_ (every reduction, with and without self, along
each dim, repeated indices, zeros for prod)."""

import numpy as np

from tests.op_samples import Sample, arr


def index_reduce_(lib, x, dim, index, source, reduce, include_self=True):
    return x.clone().index_reduce_(dim, index, source, reduce, include_self=include_self)


def with_values(a: np.ndarray, flat_index: list, value: float) -> np.ndarray:
    a = a.copy()
    a.reshape(-1)[flat_index] = value
    return a


IDX = np.array([0, 2, 0], dtype=np.int64)  # row 0 twice, row 2 once, row 1 not at all

SAMPLES = [
    Sample("index_reduce", (arr(3, 4), 0, IDX, arr(3, 4), r), {"include_self": inc},
           name=f"{r}_{'self' if inc else 'noself'}")
    for r in ("prod", "mean", "amax", "amin") for inc in (True, False)
] + [
    Sample("Tensor.index_reduce", (arr(3, 4), 1, np.array([3, 0], dtype=np.int64), arr(3, 2),
                                   "mean"), name="dim1"),
    Sample("index_reduce", (with_values(arr(3, 4), [1], 0.0), 0, IDX,
                            with_values(arr(3, 4), [4], 0.0), "prod"), name="prod_zeros"),
    # two zeros reach one cell: first order only (torch refuses double backward there)
    Sample("index_reduce", (arr(2, 2), 0, np.array([1, 1], dtype=np.int64),
                            with_values(arr(2, 2), [0, 2], 0.0), "prod"),
           name="prod_two_zeros", gradgrad=False),
    Sample(index_reduce_, (arr(3, 4), 0, IDX, arr(3, 4), "amax"), name="amax"),
    Sample(index_reduce_, (arr(3, 4), 0, IDX, arr(3, 4), "prod", False), name="prod"),
]
