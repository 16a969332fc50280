"""NumPy kernel of max unpooling: each value written at its per-plane flat index in a zero
output plane (the inverse placement of max pooling's indices), with torch's checks.
retrograd._ops.max_unpool declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

from math import prod

import numpy as np

from retrograd._ops.layout import not_implemented, type_name


def max_unpool_forward(x: np.ndarray, indices: np.ndarray, output_size, nsp: int,
                       ) -> np.ndarray:
    name = f"max_unpooling{nsp}d"
    if indices.dtype != np.int64:
        got = f" but got: {type_name(indices.dtype)}" if nsp == 2 else ""
        raise RuntimeError(f"elements in indices should be type int64{got}")
    if nsp == 2 and len(output_size) != 2:
        raise RuntimeError("There should be exactly two elements (height, width) in "
                           f"output_size, but got {len(output_size)} elements.")
    if x.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"Input to {name} should be a {nsp + 1}d or {nsp + 2}d Tensor, but "
                           f"got a tensor with {x.ndim} dimensions.")
    if indices.shape != x.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(x.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    if nsp == 3:
        for i in range(x.ndim - 4, x.ndim):
            if x.shape[i] == 0:
                raise RuntimeError(
                    f"{name}_forward_out_cpu(): Expected input to have non-zero size for "
                    f"non-batch dimensions, but got {list(x.shape)} with dimension {i} being "
                    "empty.")
    if x.dtype.kind not in "fV":
        raise not_implemented(f"max_unpool{nsp}d", x.dtype)
    plane = prod(output_size)
    lead = x.shape[:-nsp]
    planes = prod(lead)
    flat_idx = indices.reshape(planes, -1)
    bad = (flat_idx < 0) | (flat_idx >= plane)
    if bad.any():
        first = int(flat_idx[bad][0])
        sizes = "x".join(str(v) for v in output_size)
        raise RuntimeError(f"Found an invalid max index: {first} (output volumes are of size "
                           f"{sizes})")
    out = np.zeros((planes, plane), x.dtype)
    out[np.arange(planes)[:, None], flat_idx] = x.reshape(planes, -1)
    return out.reshape(lead + tuple(output_size))
