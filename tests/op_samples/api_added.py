"""Samples for the ops added for torch's API names: angle on real inputs."""

from tests.op_samples import Sample, arr


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
]
