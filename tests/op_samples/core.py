"""Samples for the core arithmetic, reduction, view and copy ops."""

from retrograd import float32
from tests.op_samples import Sample, arr, pos


def copy_into_clone(lib, x, src):
    return x.clone().copy_(src)


SAMPLES = [
    Sample(copy_into_clone, (arr(2, 3), arr(3)), name="broadcast"),
    Sample("add", (arr(2, 3), arr(2, 3)), name="same"),
    Sample("add", (arr(2, 3), arr(3)), name="broadcast"),
    Sample("add", (arr(2, 3), 2.5), name="scalar"),
    Sample("add", (arr(2, 3), arr(1, 3)), {"alpha": 2.0}, name="alpha"),
    Sample("add", (arr(0, 3), arr(3)), name="empty"),
    Sample("add", (arr(3, 2, noncontig=True), arr(3, 2)), name="noncontig"),
    Sample("sub", (arr(2, 3), arr(2, 1)), name="broadcast"),
    Sample("sub", (arr(2, 3), arr(2, 3)), {"alpha": 0.5}, name="alpha"),
    Sample("operator.sub", (1.5, arr(2, 3)), name="rsub"),
    Sample("mul", (arr(2, 3), arr(2, 3)), name="same"),
    Sample("mul", (arr(4, 1), arr(3)), name="broadcast"),
    Sample("mul", (arr(2, 3), 3.0), name="scalar"),
    Sample("mul", (arr(), arr(2, 2)), name="zero_dim"),
    Sample("div", (arr(2, 3), pos(2, 3)), name="same"),
    Sample("div", (arr(2, 3), pos(3)), name="broadcast"),
    Sample("neg", (arr(2, 3),)),
    Sample("exp", (arr(2, 3),)),
    Sample("exp", (arr(3, 2, noncontig=True),), name="noncontig"),
    Sample("log", (pos(2, 3),)),
    Sample("tanh", (arr(2, 3),)),
    Sample("sum", (arr(2, 3),), name="all"),
    Sample("sum", (arr(2, 3, 4), 1), name="dim"),
    Sample("sum", (arr(2, 3, 4), (0, 2), True), name="dims_keepdim"),
    Sample("sum", (arr(0, 3), 0), name="empty"),
    Sample("mean", (arr(2, 3),), name="all"),
    Sample("mean", (arr(2, 3, 4), -1), name="dim"),
    Sample("mean", (arr(2, 3, 4), (0, 1), True), name="keepdim"),
    Sample("Tensor.view", (arr(2, 6), 3, 4), name="varargs"),
    Sample("Tensor.view", (arr(2, 6), (-1,)), name="infer"),
    Sample("reshape", (arr(2, 6), (4, 3)), name="view"),
    Sample("reshape", (arr(3, 4, noncontig=True), (12,)), name="copy"),
    Sample("Tensor.expand", (arr(3, 1), 2, 3, 4)),
    Sample("permute", (arr(2, 3, 4), (2, 0, 1))),
    Sample("transpose", (arr(2, 3, 4), 0, 2)),
    Sample("t", (arr(2, 3),)),
    Sample("unsqueeze", (arr(2, 3), 1)),
    Sample("unsqueeze", (arr(2, 3), -1), name="neg"),
    Sample("as_strided", (arr(3, 4), (2, 2), (1, 2), 1), name="offset"),
    Sample("as_strided", (arr(3, 3), (2, 2), (1, 1)), name="overlap"),
    Sample("mm", (arr(2, 3), arr(3, 4))),
    Sample("mm", (arr(3, 2, noncontig=True), arr(2, 4)), name="noncontig"),
    Sample("clone", (arr(2, 3),)),
    Sample("Tensor.to", (arr(2, 3), float32), name="dtype", gradcheck=False),
    Sample("Tensor.float", (arr(2, 3),), gradcheck=False, parity_dtype="float64"),
]
