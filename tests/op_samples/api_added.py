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
]
