"""slice_inverse: the tensor of which `self` is the slice, as a view of self's memory.

slice_inverse(self, src, dim, start, end, step) lays src's sizes and strides over self's storage
at src's storage offset; when self is src[dim, start:end:step] sharing src's storage, the result
is src again, aliasing self. Its gradient is the slice for self and, as torch's, the rest of
the gradient (zero on the slice) for src.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.creation import zeros_like
from retrograd._ops.kernels.shape import _as_strided_rel_forward, _Holder
from retrograd._ops.registry import op
from retrograd._ops.scatter_views import slice_scatter
from retrograd._ops.shape import slice_op


def _root_and_offset(a: np.ndarray) -> tuple:
    """The array owning a's memory, and a's first element's offset in it (in a's items)."""
    root = a
    while True:
        owner = root.base
        if isinstance(owner, np.ndarray):
            root = owner
        elif isinstance(owner, _Holder):  # an as_strided view (retrograd's own)
            root = owner.base
        else:
            break
    start = root.__array_interface__["data"][0]
    return root, (a.__array_interface__["data"][0] - start) // a.itemsize


def _slice_inverse_forward(a, src, dim, start, end, step):
    root, own = _root_and_offset(a)
    _, offset = _root_and_offset(src)
    item = a.itemsize
    size = src.shape
    stride = [s // src.itemsize for s in src.strides]
    needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    available = root.nbytes // item
    if needed > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {stride}, storage offset {offset}, and "
            f"itemsize {item} requiring a storage size of {needed * item} are out of bounds for "
            f"storage of size {available * item}")
    return _as_strided_rel_forward(a, size, stride, offset - own)


slice_inverse = op(
    "slice_inverse(Tensor(a) self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, "
    "SymInt step=1) -> Tensor(a)", _slice_inverse_forward,
    grads={"self": lambda grad, dim, start, end, step: slice_op(grad, dim, start, end, step),
           # src's own elements outside the slice: the gradient there, zero inside it
           "src": lambda grad, self, dim, start, end, step:
           slice_scatter(grad, zeros_like(self), dim, start, end, step)})
