"""Samples for _weight_norm (fused for the first and last dim, composed otherwise), the fused
_weight_norm_interface and norm_except_dim."""

from tests.op_samples import Sample, arr


def interface(lib, v, g, dim):
    w, norms = lib._weight_norm_interface(v, g, dim)
    return w, norms.requires_grad


SAMPLES = [
    Sample("_weight_norm", (arr(4, 3, seed=1), arr(4, 1, seed=2), 0)),
    Sample("_weight_norm", (arr(4, 3, seed=1), arr(1, 3, seed=2), 1), name="last"),
    Sample("_weight_norm", (arr(4, 3, seed=1), arr(4, seed=2), 0), name="flat_g"),
    Sample("_weight_norm", (arr(2, 3, 4, seed=3), arr(2, 1, 1, seed=4), 0), name="3d"),
    Sample("_weight_norm", (arr(2, 3, 4, seed=3), arr(1, 3, 1, seed=4), 1), name="middle"),
    Sample("_weight_norm", (arr(2, 3, 4, seed=3), arr(1, 1, 1, seed=4), -1), name="whole"),
    Sample("_weight_norm", (arr(5, 3, noncontig=True), arr(1, 3, seed=5), 1),
           name="noncontig"),
    Sample(interface, (arr(4, 3, seed=1), arr(4, 1, seed=2), 0)),
    Sample(interface, (arr(2, 3, 4, seed=3), arr(1, 1, 4, seed=4), 2), name="last"),
    Sample("norm_except_dim", (arr(4, 3, seed=1), 2, 0)),
    Sample("norm_except_dim", (arr(2, 3, 4, seed=1), 2, 1), name="middle"),
    Sample("norm_except_dim", (arr(2, 3, 4, seed=1), 3, 2), name="p3_last"),
    Sample("norm_except_dim", (arr(2, 3, 4, seed=1), 2, -1), name="whole"),
]
