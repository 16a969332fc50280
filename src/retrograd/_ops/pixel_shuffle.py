"""pixel_shuffle / pixel_unshuffle: channels <-> spatial blocks (sub-pixel convolution layers).

Each is the other's derivative, so both orders of backward are the same two ops.

The NumPy kernels the declarations run are in kernels/pixel_shuffle.py.
"""

from __future__ import annotations

from retrograd._ops.kernels.pixel_shuffle import (
    _shuffle_forward,
    _unshuffle_forward,
)
from retrograd._ops.registry import op, register_functional

pixel_shuffle = op("pixel_shuffle(Tensor self, int upscale_factor) -> Tensor", _shuffle_forward,
                   grads={"self": lambda grad, upscale_factor:
                          pixel_unshuffle(grad, upscale_factor)},
                   method=False)
pixel_unshuffle = op("pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor",
                     _unshuffle_forward,
                     grads={"self": lambda grad, downscale_factor:
                            pixel_shuffle(grad, downscale_factor)},
                     method=False)
register_functional("pixel_shuffle", pixel_shuffle)
register_functional("pixel_unshuffle", pixel_unshuffle)
