"""torch.special's Bessel and Airy functions as ops: special_bessel_j0, special_bessel_j1,
special_bessel_y0, special_bessel_y1, special_modified_bessel_i0/_i1/_k0/_k1,
special_scaled_modified_bessel_k0/_k1, special_spherical_bessel_j0 and special_airy_ai
(kernels in kernels/special_bessel.py), each under torch's schema (the later ones name their
argument x) with an out= form.

As in torch, which declares no derivative for them, none is differentiable: the result never
requires grad, so a backward through one stops at "does not require grad" as torch's does.
Integer and bool inputs compute in the default float dtype; half and bfloat16 have no kernel.
"""

from __future__ import annotations

from collections.abc import Callable

from retrograd._ops.kernels.special_bessel import KERNELS
from retrograd._ops.layout import pointwise
from retrograd._ops.registry import op

# the functions whose schema calls the argument x (the others call it self, input in Python)
X_ARGUMENT = frozenset({"scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                        "spherical_bessel_j0", "airy_ai"})

OPS: dict[str, Callable] = {
    name: op(f"special_{name}(Tensor {'x' if name in X_ARGUMENT else 'self'}) -> Tensor",
             pointwise(kernel), promote="float", method=False, function=False,
             differentiable_outputs=(False,))
    for name, kernel in KERNELS.items()}
