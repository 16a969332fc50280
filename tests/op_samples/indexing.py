"""Samples for indexing: __getitem__/__setitem__, index/index_put, gather/scatter, index_select,
index_add, masked_fill/masked_select, take."""

import numpy as np

from tests.op_samples import Sample, arr


def ints(*values):
    return np.array(values, dtype=np.int64)


def mask(*values):
    return np.array(values, dtype=bool)


M34 = np.array([[True, False, True, False], [False, False, True, True],
                [True, True, False, False]])


def get(index):
    """A sample function x[index] (index fixed, so slices and None need no conversion)."""

    def fn(lib, x):
        idx = tuple(lib.from_numpy(i.copy()) if isinstance(i, np.ndarray) else i
                    for i in index) if isinstance(index, tuple) else index
        if isinstance(idx, np.ndarray):
            idx = lib.from_numpy(idx.copy())
        return x[idx]

    fn.__name__ = "getitem"
    return fn


def setitem(index, value=None):
    """x.clone()[index] = v (v the second array argument, or a fixed scalar)."""

    def fn(lib, x, *v):
        y = x.clone()
        idx = tuple(lib.from_numpy(i.copy()) if isinstance(i, np.ndarray) else i
                    for i in index) if isinstance(index, tuple) else index
        if isinstance(idx, np.ndarray):
            idx = lib.from_numpy(idx.copy())
        y[idx] = v[0] if v else value
        return y

    fn.__name__ = "setitem"
    return fn


def _reduce_index(lib):
    return lib.tensor([[0, 1], [2, 0]])


def scatter_reduce_const(lib, x, y, src):
    return x * lib.scatter(y, 0, _reduce_index(lib), src, reduce="add")


def scatter_value_reduce_const(lib, x, y):
    return x * lib.scatter(y, 1, _reduce_index(lib), 2.0, reduce="multiply")


def scatter_reduce_inplace_const(lib, x, y, src):
    return x * y.clone().scatter_(0, _reduce_index(lib), src, reduce="multiply")


def scatter_value_reduce_inplace_const(lib, x, y):
    return x * y.clone().scatter_(1, _reduce_index(lib), -1.5, reduce="add")


def inplace(name):
    def fn(lib, x, *args, **kwargs):
        return getattr(x.clone(), name)(*args, **kwargs)

    fn.__name__ = name
    return fn


def index_put_(lib, x, i, v):
    return x.clone().index_put_((i,), v)


def index_put_acc_(lib, x, i, j, v):
    return x.clone().index_put_((i, j), v, accumulate=True)


_G = [
    # basic indexing: views through select / slice / unsqueeze / alias
    Sample(get(1), (arr(3, 4),), name="int"),
    Sample(get(-1), (arr(3, 4),), name="neg_int"),
    Sample(get((slice(None), 1)), (arr(3, 4),), name="select_dim1"),
    Sample(get(slice(1, None)), (arr(3, 4),), name="slice"),
    Sample(get((slice(None), slice(None, None, 2))), (arr(3, 4),), name="step"),
    Sample(get((slice(0, 3, 2), 1)), (arr(4, 3),), name="slice_int"),
    Sample(get(slice(None)), (arr(3, 4),), name="full_slice"),
    Sample(get((slice(None), slice(None))), (arr(3, 4),), name="full_tuple_alias"),
    Sample(get(Ellipsis), (arr(3, 4),), name="ellipsis_alias"),
    Sample(get((Ellipsis, 0)), (arr(2, 3, 4),), name="ellipsis_int"),
    Sample(get(None), (arr(3, 4),), name="none"),
    Sample(get((slice(None), None, 1)), (arr(3, 4),), name="none_mid"),
    Sample(get((1, slice(5, None))), (arr(3, 4),), name="empty_slice"),
    Sample(get((0, 0)), (arr(3, 4),), name="to_0d"),
    Sample(get((1, slice(None, None, 2))), (arr(4, 3, noncontig=True),), name="basic_noncontig"),
    # advanced indexing: index (IndexBackward0)
    Sample(get(ints(0, 2, 0)), (arr(3, 4),), name="int_tensor_dup"),
    Sample(get((slice(None), ints(3, 1))), (arr(3, 4),), name="int_tensor_dim1"),
    Sample(get((ints(0, 2), slice(None), ints(1, 3))), (arr(3, 2, 4),), name="non_adjacent"),
    Sample(get((ints(0, 2), ints(1, 3))), (arr(3, 4),), name="pair"),
    Sample(get((ints([0], [2]), ints(1, 3, 0))), (arr(3, 4),), name="broadcast"),
    Sample(get(M34), (arr(3, 4),), name="mask"),
    Sample(get(mask(True, False, True)), (arr(3, 4),), name="mask_dim0"),
    Sample(get((slice(None), mask(True, False, True, True))), (arr(3, 4),), name="mask_dim1"),
    Sample(get(True), (arr(3, 4),), name="true"),
    Sample(get(False), (arr(3, 4),), name="false"),
    Sample(get((1, ints(0, 3))), (arr(3, 4),), name="int_and_tensor"),
    Sample(get((slice(1, None), ints(0, 3))), (arr(3, 4),), name="slice_and_tensor"),
    Sample(get(ints(1, 0)), (arr(4, 3, noncontig=True),), name="noncontig"),
    Sample(get((slice(None), ints(1, 0))), (arr(2, 3, 4, noncontig=True),), name="noncontig_mid"),
    Sample(get(ints()), (arr(3, 4),), name="empty_index"),
]

_S = [
    # assignment: basic indices copy into the view (CopySlices), advanced use index_put_
    Sample(setitem(0), (arr(3, 4), arr(4)), name="row"),
    Sample(setitem((slice(None), 1)), (arr(3, 4), arr(3)), name="column"),
    Sample(setitem((slice(None), slice(1, None))), (arr(3, 4), arr(3)), name="broadcast"),
    Sample(setitem(1, 2.5), (arr(3, 4),), name="scalar"),
    Sample(setitem(slice(None, None, 2)), (arr(3, 4), arr()), name="zero_dim_fill"),
    Sample(setitem(Ellipsis), (arr(3, 4), arr(1, 4)), name="ellipsis"),
    Sample(setitem(ints(0, 2)), (arr(3, 4), arr(2, 4)), name="int_tensor"),
    Sample(setitem((0, ints(1, 3))), (arr(3, 4), arr(2)), name="int_and_tensor"),
    Sample(setitem(M34, 0.0), (arr(3, 4),), name="mask_scalar"),
    Sample(setitem(M34), (arr(3, 4), arr(6)), name="mask_values"),
    Sample(setitem(mask(True, False, True)), (arr(3, 4), arr(4)), name="mask_rows"),
]

_OPS = [
    # index_put
    Sample("index_put", (arr(3, 4), (ints(0, 2),), arr(2, 4))),
    Sample("Tensor.index_put", (arr(3, 4), (ints(0, 2), ints(1, 3)), arr(2)), name="pair"),
    Sample("index_put", (arr(3, 4), (ints(0, 0),), arr(4), True), name="accumulate"),
    Sample("index_put", (arr(3, 4), (M34,), arr()), name="mask"),
    Sample(index_put_, (arr(3, 4), ints(2, 0), arr(2, 4))),
    Sample(index_put_acc_, (arr(3, 4), ints(1, 1), ints(0, 0), arr(2))),
    # gather / scatter / scatter_add
    Sample("gather", (arr(3, 4), 0, ints([0, 1, 2, 0], [2, 2, 1, 0]))),
    Sample("Tensor.gather", (arr(3, 4), 1, ints([3], [0], [1])), name="dim1"),
    Sample("gather", (arr(3, 4), -1, ints([3, 3])), name="neg_dim"),
    Sample("gather", (arr(3, 4, noncontig=True), 0, ints([1, 0])), name="noncontig"),
    Sample("gather", (arr(), 0, np.array(0)), name="zero_dim"),
    Sample("scatter", (arr(3, 4), 0, ints([0, 1], [2, 0]), arr(2, 2)), name="src"),
    Sample("Tensor.scatter", (arr(3, 4), 1, ints([0], [3]), 2.5), name="value"),
    Sample("scatter", (arr(3, 4), 1, ints([3, 1]), arr(1, 2)), name="src_dim1"),
    Sample("scatter_add", (arr(3, 4), 0, ints([0, 0], [2, 0]), arr(2, 2))),
    Sample("Tensor.scatter_add", (arr(3, 4), 1, ints([1, 1, 1]), arr(1, 3)), name="dup"),
    Sample(inplace("scatter_"), (arr(3, 4), 0, ints([0, 1], [2, 0]), arr(2, 2)), name="src"),
    Sample(inplace("scatter_"), (arr(3, 4), 0, ints([0, 1], [2, 0]), -1.0), name="value"),
    Sample(inplace("scatter_add_"), (arr(3, 4), 0, ints([0, 0], [2, 0]), arr(2, 2))),
    # scatter with reduce has no derivative (torch's NotImplemented node): run on inputs that do
    # not require grad, its result a constant factor of a differentiable expression
    Sample(scatter_reduce_const, (arr(3, 4), arr(3, 4), arr(2, 2)),
           requires_grad=(True, False, False)),
    Sample(scatter_value_reduce_const, (arr(3, 4), arr(3, 4)), requires_grad=(True, False)),
    Sample(scatter_reduce_inplace_const, (arr(3, 4), arr(3, 4), arr(2, 2)),
           requires_grad=(True, False, False)),
    Sample(scatter_value_reduce_inplace_const, (arr(3, 4), arr(3, 4)),
           requires_grad=(True, False)),
    Sample("take_along_dim", (arr(3, 4), ints([0], [3], [1]), 1)),
    Sample("take_along_dim", (arr(3, 4), ints(0, 11, 5)), name="flat"),
    Sample("Tensor.take_along_dim", (arr(3, 4), ints([2, 0, 1, 0]), 0), name="broadcast"),
    # index_select / index_add
    Sample("index_select", (arr(3, 4), 0, ints(2, 0, 2))),
    Sample("Tensor.index_select", (arr(3, 4), 1, ints(3, 1)), name="dim1"),
    Sample("index_select", (arr(3, 4), 0, np.array(1)), name="zero_dim_index"),
    Sample("index_select", (arr(3, 4, noncontig=True), 1, ints(0)), name="noncontig"),
    Sample("index_add", (arr(3, 4), 0, ints(0, 0), arr(2, 4))),
    Sample("Tensor.index_add", (arr(3, 4), 1, ints(3, 1, 3), arr(3, 3)), {"alpha": 2.0},
           name="alpha"),
    Sample(inplace("index_add_"), (arr(3, 4), 1, ints(2), arr(3, 1))),
    # masked_fill / masked_select
    Sample("masked_fill", (arr(3, 4), M34, 2.0), name="scalar"),
    Sample("Tensor.masked_fill", (arr(3, 4), mask(True, False, True, False), arr()),
           name="tensor_value"),
    Sample("masked_fill", (arr(1, 4), M34, -1.0), name="broadcast_self"),
    Sample("masked_fill", (arr(4, 3, noncontig=True), M34.T, 0.5), name="noncontig"),
    Sample(inplace("masked_fill_"), (arr(3, 4), M34, 3.0), name="scalar"),
    Sample(inplace("masked_fill_"), (arr(3, 4), mask(False, True, True, False), arr()),
           name="tensor"),
    Sample("masked_select", (arr(3, 4), M34)),
    Sample("Tensor.masked_select", (arr(3, 1), M34), name="broadcast_self"),
    Sample("masked_select", (arr(3, 4), mask(True, False, False, True)), name="broadcast_mask"),
    # take
    Sample("take", (arr(3, 4), ints([0, 11], [5, -1]))),
    Sample("Tensor.take", (arr(4, 3, noncontig=True), ints(1, 1, 7)), name="noncontig"),
]

SAMPLES = _G + _S + _OPS
