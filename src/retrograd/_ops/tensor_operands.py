"""Binary ops whose operands must both be tensors (torch declares no Scalar overload for
atan2, hypot, logaddexp, fmax, ...): a Python number gets torch's TypeError before promotion
could turn it into an array."""

from __future__ import annotations

import numpy as np

from retrograd._ops.arg_check import type_name
from retrograd._ops.layout import binary, not_implemented, promote_args

NOT_TENSOR = "{}(): argument '{}' (position {}) must be Tensor, not {}"


def tensors_only(name: str, kernel, to_float: bool = False, floats_only: bool = False,
                 ints_only: bool = False, same_dtype: bool = False,
                 names: tuple = ("input", "other")):
    """The forward of a binary op whose operands must both be tensors (torch has no Scalar
    overload): torch's TypeError for a number (before promotion would hide an int), then
    promotion (integers to float when to_float) and the broadcasting kernel with torch's
    layout. floats_only / ints_only refuse other dtypes with torch's error; same_dtype refuses
    to promote at all (heaviside)."""
    compute = binary(kernel)

    def forward(a, b):
        for position, (arg, value) in enumerate(zip(names, (a, b)), 1):
            if type(value) is not np.ndarray:
                raise TypeError(NOT_TENSOR.format(name, arg, position, type_name(value)))
        if same_dtype and a.dtype != b.dtype:
            raise RuntimeError(f"{name} is not yet implemented for tensors with different "
                               "dtypes.")
        a, b = promote_args((a, b), (0, 1), to_float)
        if floats_only and a.dtype.kind not in "fV" or ints_only and a.dtype.kind not in "iu":
            raise not_implemented(f"{name}_cpu", a.dtype)
        return compute(a, b)

    forward.__name__ = name
    return forward
