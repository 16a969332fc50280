"""NumPy kernels of diag_embed. retrograd._ops.diagonals declares the ops. No Tensor here: plain
arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd._dims import wrap_dim
from retrograd._ops.kernels.shape import _diagonal_forward


def _diag_embed_forward(a, offset, dim1, dim2):
    nd = a.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = a.shape[-1] + abs(offset)
    rest = iter(a.shape[:-1])
    shape = tuple(n if k in (d1, d2) else next(rest) for k in range(nd))
    out = np.zeros(shape, a.dtype)
    # the diagonal view of the zeros puts its diagonal last, as the input's last dim
    _diagonal_forward(out, offset, d1, d2)[...] = a
    return out
