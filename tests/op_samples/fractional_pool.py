"""Samples for fractional max pooling, with _random_samples given so the windows are fixed."""

import numpy as np

from tests.op_samples import Sample, arr

F = "nn.functional."


def _samples(*shape):
    return np.random.default_rng(5).uniform(0, 1, size=shape)


GRAD_X = (True, False)  # the input, not the samples

SAMPLES = [
    Sample(F + "fractional_max_pool2d", (arr(2, 3, 7, 6), 2),
           {"output_size": (4, 3), "_random_samples": _samples(2, 3, 2)},
           requires_grad=GRAD_X, name="output_size"),
    Sample(F + "fractional_max_pool2d", (arr(2, 5, 6), (3, 2)),
           {"output_ratio": (0.5, 0.6), "return_indices": True,
            "_random_samples": _samples(1, 2, 2)},
           requires_grad=GRAD_X, name="unbatched_ratio_indices"),
    Sample(F + "fractional_max_pool2d", (arr(1, 2, 5, 5), 2),
           {"output_size": 1, "_random_samples": _samples(3, 2, 2)},
           requires_grad=GRAD_X, name="single_window"),
    Sample(F + "fractional_max_pool3d", (arr(2, 2, 5, 6, 5), 2),
           {"output_size": (3, 4, 2), "_random_samples": _samples(2, 2, 3)},
           requires_grad=GRAD_X, name="output_size"),
    Sample(F + "fractional_max_pool3d", (arr(2, 6, 5, 7), (2, 1, 3)),
           {"output_ratio": 0.5, "return_indices": True, "_random_samples": _samples(1, 2, 3)},
           requires_grad=GRAD_X, name="unbatched_ratio_indices"),
]
