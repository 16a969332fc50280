"""Samples for the shape, indexing and construction functions: meshgrid, diff, kron, trace,
rot90, tensor_split / hsplit / vsplit / dsplit, repeat_interleave, index_fill, index_copy, put,
masked_scatter, cartesian_prod, combinations, inner, addr."""

import numpy as np

from tests.op_samples import Sample, arr


def ints(*values):
    return np.array(values, dtype=np.int64)


def inplace(name):
    def fn(lib, x, *args, **kwargs):
        return getattr(x.clone(), name)(*args, **kwargs)

    fn.__name__ = name
    return fn


M34 = np.array([[True, False, True, False], [False, False, True, True],
                [True, True, False, False]])

_GRIDS = [
    Sample("meshgrid", (arr(3), arr(2)), {"indexing": "ij"}, name="ij"),
    Sample("meshgrid", ([arr(3), arr(2), arr(4)],), {"indexing": "xy"}, name="xy_list"),
    Sample("meshgrid", (arr(), arr(2)), {"indexing": "xy"}, name="zero_dim"),
    Sample("cartesian_prod", (arr(3), arr(2))),
    Sample("cartesian_prod", (arr(2), arr(2), arr(3)), name="three"),
    Sample("combinations", (arr(4),)),
    Sample("combinations", (arr(4), 3), name="r3"),
    Sample("combinations", (arr(3), 2, True), name="with_replacement"),
    Sample("combinations", (arr(3),), {"r": 1}, name="r1"),
]

_DIFFS = [
    Sample("diff", (arr(3, 4),)),
    Sample("Tensor.diff", (arr(3, 4), 2, 0), name="n2_dim0"),
    Sample("diff", (arr(2, 5),), {"prepend": arr(2, 1), "append": arr(2, 2)}, name="pre_append"),
    Sample("diff", (arr(4, 3, noncontig=True),), {"dim": 0}, name="noncontig"),
    Sample("diff", (arr(3, 4),), {"n": 5}, name="n_past_length", check_strides=False),
]

_PRODUCTS = [
    Sample("kron", (arr(2, 3), arr(3, 2))),
    Sample("Tensor.kron", (arr(2, 3), arr(4)), name="ranks"),
    Sample("kron", (arr(), arr(2, 2)), name="zero_dim"),
    Sample("inner", (arr(2, 3, 4), arr(5, 4))),
    Sample("Tensor.inner", (arr(4), arr(4)), name="vectors"),
    Sample("inner", (arr(), arr(2, 3)), name="scalar"),
    Sample("addr", (arr(3, 4), arr(3), arr(4))),
    Sample("Tensor.addr", (arr(3, 4), arr(3), arr(4)), {"beta": 0.5, "alpha": 2.0},
           name="scaled"),
    Sample("addr", (arr(4), arr(3), arr(4)), {"beta": 0}, name="broadcast_beta0"),
    Sample(inplace("addr_"), (arr(3, 4), arr(3), arr(4)), {"alpha": -1.5}),
]

_ROTATIONS = [
    Sample("rot90", (arr(3, 4),)),
    Sample("Tensor.rot90", (arr(3, 4), 2), name="k2"),
    Sample("rot90", (arr(2, 3, 4), -1, [2, 0]), name="k-1_dims"),
    Sample("rot90", (arr(3, 4, noncontig=True), 3), name="k3_noncontig"),
    Sample("rot90", (arr(3, 4), 4), name="k4"),
    Sample("trace", (arr(3, 4),)),
    Sample("Tensor.trace", (arr(4, 3, noncontig=True),), name="noncontig"),
]

_SPLITS = [
    Sample("tensor_split", (arr(7, 2), 3)),
    Sample("Tensor.tensor_split", (arr(2, 6), [1, 4], 1), name="indices"),
    Sample("tensor_split", (arr(2, 6), [4, 1, -1]), {"dim": -1}, name="unsorted"),
    Sample("hsplit", (arr(2, 6), 3)),
    Sample("Tensor.hsplit", (arr(6), [2]), name="vector"),
    Sample("vsplit", (arr(4, 3), 2)),
    Sample("dsplit", (arr(2, 2, 4), [1, 3])),
]

_REPEATS = [
    Sample("repeat_interleave", (arr(2, 3), 2)),
    Sample("Tensor.repeat_interleave", (arr(2, 3), 3, 1), name="dim"),
    Sample("repeat_interleave", (arr(3, 2), ints(1, 0, 2)), {"dim": 0}, name="tensor"),
    Sample("Tensor.repeat_interleave", (arr(2, 3), ints(2), -1), name="one_count"),
    Sample("repeat_interleave", (arr(2, 2), ints(1, 2, 0, 1)), name="flat_counts"),
]

_INDEX_WRITES = [
    Sample("Tensor.index_fill", (arr(3, 4), 1, ints(0, 2), 1.5)),
    Sample("index_fill", (arr(3, 4), 0, ints(2, 0, 2), arr()), name="tensor_value"),
    Sample(
        "index_fill", (arr(3, 4), 1, ints(-1), 2.0), name="negative_index"),
    Sample("Tensor.index_fill", (arr(3, 4), 1, np.array(3), -2.0), name="zero_dim_index"),
    Sample(inplace("index_fill_"), (arr(3, 4), 1, ints(1, 3), 0.5), name="scalar"),
    Sample(inplace("index_fill_"), (arr(3, 4), 0, ints(1), arr()), name="tensor"),
    Sample("index_copy", (arr(3, 4), 1, ints(3, 0), arr(3, 2))),
    Sample("Tensor.index_copy", (arr(4, 2), 0, ints(2), arr(1, 2)), name="one_row"),
    Sample("index_copy", (arr(), 0, ints(0), arr()), name="zero_dim"),
    Sample(inplace("index_copy_"), (arr(3, 4), 0, ints(2, 0), arr(2, 4))),
    Sample("Tensor.put", (arr(3, 4), ints(0, -1, 5), arr(3))),
    Sample("Tensor.put", (arr(3, 4), ints([1, 1], [2, 0]), arr(2, 2), True), name="accumulate"),
    Sample("Tensor.put", (arr(4, 3, noncontig=True), ints(4, 7), arr(2)), name="noncontig"),
    Sample(inplace("put_"), (arr(3, 4), ints(0, 11), arr(2))),
    Sample(inplace("put_"), (arr(3, 4), ints(3, 3), arr(2)), {"accumulate": True},
           name="accumulate"),
    Sample("masked_scatter", (arr(3, 4), M34, arr(8))),
    Sample("Tensor.masked_scatter", (arr(4), M34, arr(2, 5)), name="broadcast"),
    Sample(inplace("masked_scatter_"), (arr(3, 4), M34, arr(6))),
    Sample(inplace("masked_scatter_"), (arr(3, 4), M34[0], arr(7)), name="broadcast_mask"),
]

SAMPLES = _GRIDS + _DIFFS + _PRODUCTS + _ROTATIONS + _SPLITS + _REPEATS + _INDEX_WRITES


def fill_diagonal_(lib, x, value, wrap=False):
    return x.clone().fill_diagonal_(value, wrap=wrap)


def fill_diagonal_times(lib, x, y):
    """x times a copy of y whose diagonal was overwritten: y's gradient misses the diagonal."""
    return x * y.clone().fill_diagonal_(0.5, wrap=True)


_BUILDERS = [
    Sample("block_diag", (arr(2, 3), arr(3), arr(), arr(1, 2))),
    Sample("block_diag", (arr(2, 2),), name="one"),
    # torch's own vander backward fails (its cumprod input is overwritten in place), and its
    # as_strided_scatter gives self the window's gradient instead of the rest: values and nodes
    # are compared with torch in tests/test_shape_extra.py instead
    Sample("vander", (arr(3),), parity=False),
    Sample("vander", (arr(3),), {"N": 4, "increasing": True}, name="increasing", parity=False),
    Sample("vander", (arr(2), 1), name="n1"),
    Sample("Tensor.diagonal_scatter", (arr(3, 4), arr(3))),
    Sample("diagonal_scatter", (arr(2, 3, 4), arr(2, 2), 1, 2, 1), name="dims"),
    Sample("Tensor.select_scatter", (arr(3, 4), arr(4), 0, 1)),
    Sample("select_scatter", (arr(3, 4), arr(3), -1, -1), name="neg"),
    Sample("Tensor.slice_scatter", (arr(3, 4), arr(3, 2), 1, 0, 4, 2)),
    Sample("slice_scatter", (arr(4, 3), arr(1, 3)), {"start": 2, "end": 3}, name="kwargs"),
    Sample("Tensor.as_strided_scatter", (arr(3, 4), arr(2, 2), (2, 2), (4, 1), 1),
           parity=False),
    Sample("as_strided_scatter", (arr(3, 4), arr(3), (3,), (5,)), name="diagonal",
           parity=False),
]

_METHODS = [
    Sample(inplace("tril_"), (arr(3, 4), -1)),
    Sample(inplace("triu_"), (arr(4, 3),), name="default"),
    Sample(fill_diagonal_, (arr(3, 4), 2.0)),
    Sample(fill_diagonal_, (arr(5, 2), -1.0, True), name="wrap"),
    Sample(fill_diagonal_, (arr(2, 2, 2), 0.0), name="cube"),
    Sample(fill_diagonal_times, (arr(5, 2), arr(5, 2))),
    Sample("Tensor.sum_to_size", (arr(3, 4), 1, 4)),
    Sample("Tensor.sum_to_size", (arr(2, 3, 4), (3, 1)), name="leading"),
    Sample("Tensor.narrow_copy", (arr(3, 4), 1, 1, 2)),
    # (a negative start: torch's backward fails, so only first-order values are compared there)
    Sample("narrow_copy", (arr(4, 3, noncontig=True), 0, 1, 2), name="noncontig"),
    Sample("narrow_copy", (arr(4, 3), 0, -2, 2), name="negative_start", parity=False),
    Sample("Tensor.adjoint", (arr(2, 3, 4),)),
    Sample("multiply", (arr(3, 4), arr(4))),
    Sample("Tensor.multiply", (arr(3, 4), 2.5), name="scalar"),
    Sample("subtract", (arr(3, 4), arr(3, 1)), {"alpha": 2.0}),
    Sample("Tensor.subtract", (arr(3, 4), arr(4)), name="method"),
    Sample(inplace("multiply_"), (arr(3, 4), arr(4))),
    Sample(inplace("subtract_"), (arr(3, 4), arr(4)), {"alpha": 0.5}),
]

SAMPLES += _BUILDERS + _METHODS
