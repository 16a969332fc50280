"""Samples for the view and reshaping ops of retrograd._ops.shape (beyond the core ones)."""

from tests.op_samples import Sample, arr


def unbind_one(lib, x):
    # only one output used: the others' gradients arrive as None and are zero-filled
    return x.unbind(0)[1]


def split_last(lib, x):
    return x.split(2, 1)[-1]


def prop_T(lib, x):
    return x.T


def prop_mT(lib, x):
    return x.mT


def view_as(lib, x, y):
    return x.view_as(y)


def expand_as(lib, x, y):
    return x.expand_as(y)


def slice_inverse_of_slice(lib, x):
    # the whole dim: the result aliases exactly self's elements, so finite differences agree
    return lib.slice_inverse(x[:, 0:4], x.detach(), 1, 0, 4)


def slice_inverse_method(lib, x):
    return x[1:3].slice_inverse(x.detach()[1:3], dim=0)


def chain_of_views(lib, x):
    # a view of a view of a view: select -> diagonal -> slice
    return x.select(0, 1).diagonal()[1:]


SAMPLES = [
    # squeeze / flatten / unflatten / movedim
    Sample("Tensor.squeeze", (arr(2, 1, 3),), name="all"),
    Sample("squeeze", (arr(2, 1, 3), 1), name="dim"),
    Sample("squeeze", (arr(2, 3), 0), name="dim_not_one"),
    Sample("squeeze", (arr(1, 2, 1), (0, 2)), name="dims"),
    Sample("squeeze", (arr(1, 2, 1), (-1,)), name="dims_neg"),
    Sample("Tensor.squeeze", (arr(),), name="zero_dim"),
    Sample("flatten", (arr(2, 3, 4),), name="all"),
    Sample("Tensor.flatten", (arr(2, 3, 4), 1), name="start"),
    Sample("flatten", (arr(2, 3, 4), 0, 1), name="start_end"),
    Sample("flatten", (arr(3, 4, noncontig=True),), name="noncontig"),
    Sample("flatten", (arr(),), name="zero_dim"),
    Sample("ravel", (arr(2, 3),)),
    Sample("unflatten", (arr(2, 6), 1, (2, 3))),
    Sample("Tensor.unflatten", (arr(2, 6), -1, (-1, 2)), name="infer"),
    Sample("movedim", (arr(2, 3, 4), 0, 2)),
    Sample("Tensor.movedim", (arr(2, 3, 4), (0, 1), (2, 0)), name="lists"),
    Sample("moveaxis", (arr(2, 3, 4), -1, 0)),
    # select / slice / narrow / diagonal
    Sample("select", (arr(3, 4), 1, -1)),
    Sample("Tensor.select", (arr(3,), 0, 2), name="to_0d"),
    Sample("select", (arr(3, 4, noncontig=True), 0, 1), name="noncontig"),
    Sample("narrow", (arr(4, 3), 0, 1, 2)),
    Sample("Tensor.narrow", (arr(4, 3), 1, -2, 2), name="neg_start"),
    # Tensor.stride() reports row-major strides for every zero-size tensor; torch keeps the
    # base's strides for an empty view
    Sample("Tensor.narrow", (arr(4, 3), 1, 1, 0), name="empty", check_strides=False),
    Sample("diagonal", (arr(3, 4),)),
    Sample("diagonal", (arr(3, 4), 1), name="offset"),
    Sample("diagonal", (arr(3, 4), -2), name="neg_offset"),
    Sample("Tensor.diagonal", (arr(2, 3, 4), -1, 0, 2), name="dims"),
    Sample("diagonal", (arr(2, 3, 4),), {"dim1": -1, "dim2": 1}, name="kw"),
    Sample("diagonal", (arr(3, 4, noncontig=True), 1), name="noncontig"),
    Sample(chain_of_views, (arr(3, 3, 3),)),
    Sample(slice_inverse_of_slice, (arr(3, 4, 5),)),
    Sample(slice_inverse_method, (arr(4, 2),)),
    # multi-output views
    Sample("unbind", (arr(3, 2),)),
    Sample("Tensor.unbind", (arr(3, 2), 1), name="dim"),
    Sample(unbind_one, (arr(3, 2),)),
    Sample("split", (arr(5, 2), 2)),
    Sample("Tensor.split", (arr(2, 5), [1, 3, 1], 1), name="sizes"),
    Sample("split", (arr(2, 4), 2, -1), name="neg_dim"),
    Sample(split_last, (arr(2, 5),)),
    Sample("split_with_sizes", (arr(5, 2), [2, 3])),
    Sample("chunk", (arr(5, 2), 2)),
    Sample("Tensor.chunk", (arr(2, 6), 3, 1), name="dim"),
    # cat / stack
    Sample("cat", ([arr(2, 3), arr(1, 3)],)),
    Sample("cat", ([arr(2, 3), arr(2, 1), arr(2, 2)], 1), name="dim1"),
    Sample("cat", ([arr(2, 3), arr(2, 2)], -1), name="neg_dim"),
    Sample("cat", ([arr(2, 3), arr(0)],), name="legacy_empty"),
    Sample("cat", ([arr(2, 3), arr(2, 3, dtype="int64", low=0, high=5)],), name="int_promote"),
    Sample("cat", ((arr(2, 2, noncontig=True), arr(1, 2)),), name="tuple_noncontig"),
    Sample("concat", ([arr(1, 2), arr(1, 2)],)),
    Sample("concatenate", ([arr(1, 2), arr(1, 2)], 1)),
    Sample("stack", ([arr(2, 3), arr(2, 3)],)),
    Sample("stack", ([arr(2, 3), arr(2, 3), arr(2, 3)], -1), name="last"),
    Sample("stack", ([arr(), arr()],), name="zero_dim"),
    Sample("stack", ([arr(2, 2, noncontig=True), arr(2, 2)], 1), name="noncontig"),
    Sample("hstack", ([arr(2), arr(3)],)),
    Sample("hstack", ([arr(2, 1), arr(2, 2)],), name="2d"),
    Sample("vstack", ([arr(3), arr(3)],)),
    Sample("dstack", ([arr(2, 2), arr(2, 2)],)),
    Sample("atleast_2d", (arr(3),)),
    Sample("atleast_3d", (arr(),)),
    # copies
    Sample("Tensor.repeat", (arr(2, 3), 2, 1)),
    Sample("Tensor.repeat", (arr(2, 3), 2, 1, 2), name="lead"),
    Sample("Tensor.repeat", (arr(2, 3), (0, 1)), name="zero"),
    Sample("tile", (arr(2, 3), (2,))),
    Sample("flip", (arr(2, 3), (0,))),
    Sample("Tensor.flip", (arr(2, 3, 4), 0, 2), name="varargs"),
    Sample("flip", (arr(3, 2, noncontig=True), (1,)), name="noncontig"),
    Sample("fliplr", (arr(2, 3),)),
    Sample("flipud", (arr(2, 3),)),
    Sample("roll", (arr(2, 3), 1)),
    Sample("roll", (arr(2, 3), (1, -1), (0, 1)), name="dims"),
    Sample("Tensor.roll", (arr(3, 2, noncontig=True), 1, 0), name="noncontig"),
    Sample("tril", (arr(3, 4),)),
    Sample("tril", (arr(2, 3, 3), -1), name="batched"),
    Sample("triu", (arr(3, 4), 1)),
    Sample("Tensor.triu", (arr(4, 3, noncontig=True),), name="noncontig"),
    # Tensor properties and *_as
    Sample(prop_T, (arr(2, 3),)),
    Sample(prop_mT, (arr(2, 2, 3),)),
    Sample(view_as, (arr(2, 3), arr(3, 2))),
    Sample(expand_as, (arr(1, 3), arr(2, 3))),
]
