"""Samples for the ops added for torch's API names: angle on real inputs."""

import numpy as np

from tests.op_samples import Sample, arr


def _tri(n, *batch):
    # a strong diagonal keeps the triangular solves well conditioned
    return arr(*batch, n, n) + 3 * np.eye(n)


def triangular_solve_both(lib, b, a):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(lib.triangular_solve(b, a, upper=False, transpose=True))


def resize_then_scale(lib, x):
    # the deprecated non-in-place resize is a reshape with its own ResizeBackward node
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.resize(3, 2) * 2


SAMPLES = [
    Sample("angle", (arr(3, 4),)),
    Sample("Tensor.angle", (arr(5, noncontig=False),), name="method"),
    Sample("angle", (arr(),), name="scalar"),
    Sample(resize_then_scale, (arr(2, 3),)),
    Sample("triangular_solve", (arr(3, 2), _tri(3))),
    Sample("triangular_solve", (arr(2, 3, 2), _tri(3), False, True, True), name="batch_b"),
    Sample("triangular_solve", (arr(3, 1), _tri(3, 2), True, True, False), name="batch_a"),
    Sample("Tensor.triangular_solve", (arr(4, 3), _tri(4), False), name="method"),
    Sample(triangular_solve_both, (arr(3, 2), _tri(3))),
    Sample("view_copy", (arr(3, 4), (2, 6))),
    Sample("view_copy", (arr(3, 4), (-1,)), name="flat"),
    Sample("permute_copy", (arr(2, 3, 4), (2, 0, 1))),
    Sample("permute_copy", (arr(3, 4, noncontig=True), (1, 0)), name="noncontig"),
    Sample("transpose_copy", (arr(2, 3, 4), 0, 2)),
    Sample("t_copy", (arr(3, 4),)),
    Sample("t_copy", (arr(5),), name="vector"),
    Sample("expand_copy", (arr(3, 1), (2, 3, 4))),
    Sample("select_copy", (arr(3, 4), 1, -1)),
    Sample("slice_copy", (arr(5, 4), 0, 1, None, 2)),
    Sample("slice_copy", (arr(5, 4),), name="defaults"),
    Sample("squeeze_copy", (arr(3, 1, 4),)),
    Sample("squeeze_copy", (arr(3, 1, 4), 1), name="dim"),
    Sample("squeeze_copy", (arr(3, 1, 1), [1, 2]), name="dims"),
    Sample("unsqueeze_copy", (arr(3, 4), -1)),
    Sample("unbind_copy", (arr(3, 4), 1)),
    Sample("split_copy", (arr(5, 4), 2)),
    Sample("split_copy", (arr(4, 5), 3, 1), name="dim1"),
    Sample("split_with_sizes_copy", (arr(6, 2), [1, 2, 3])),
    Sample("unfold_copy", (arr(4, 5), 1, 2, 1)),
    Sample("alias_copy", (arr(3, 4),)),
]
