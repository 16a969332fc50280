"""Samples for Tensor.unfold (sliding windows as a view) and its backward."""

from tests.op_samples import Sample, arr


def unfold_twice(lib, x):
    # windows of windows: overlapping views of a view
    return x.unfold(1, 3, 1).unfold(0, 2, 1)


def unfold_then_write(lib, x):
    # the view shares memory with its base: writing through the base shows in the windows
    y = x * 1
    w = y.unfold(0, 2, 1)
    y.mul_(2)
    return w


SAMPLES = [
    Sample("Tensor.unfold", (arr(5, 4), 0, 2, 1), name="overlapping"),
    Sample("Tensor.unfold", (arr(5, 4), 0, 2, 2), name="disjoint"),
    Sample("Tensor.unfold", (arr(3, 7), -1, 3, 2), name="neg_dim_tail_dropped"),
    Sample("Tensor.unfold", (arr(4, 5, noncontig=True), 1, 5, 1), name="noncontig_whole"),
    Sample("Tensor.unfold", (arr(2, 3, 4), 1, 1, 2), name="size1"),
    Sample("Tensor.unfold", (arr(), 0, 1, 1), name="scalar"),
    Sample(unfold_twice, (arr(4, 5),)),
    Sample(unfold_then_write, (arr(4, 3),)),
]
