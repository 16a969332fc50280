"""`out=` for the namespace functions of single-output ops: torch.add(a, b, out=c).

As in torch, out= variants do not record history: with grad mode on, an argument that requires
grad is an error; the result is cast into `out` (which is resized, with torch's warning, when
its shape differs) and out's version is bumped.
"""

from __future__ import annotations

import warnings

import numpy as np

from retrograd import _dtype as D
from retrograd._autograd.state import state
from retrograd._tensor import Tensor

OUT_NO_AUTOGRAD = ("{}(): functions with out=... arguments don't support automatic "
                   "differentiation, but one of the arguments requires grad.")
OUT_CAST = "result type {} can't be cast to the desired output type {}"
OUT_RESIZED = (
    "An output with one or more elements was resized since it had shape {}, which does not "
    "match the required output shape {}. This behavior is deprecated, and in a future PyTorch "
    "release outputs will not be resized unless they have zero elements. You can explicitly "
    "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0)."
)


def run_with_out(op, args: tuple, out: Tensor):
    from retrograd._ops.inplace import bump_version
    from retrograd._ops.registry import run

    if not isinstance(out, Tensor):
        raise TypeError(f"{op.schema.name}(): argument 'out' must be Tensor, not "
                        f"{type(out).__name__}")
    if state.grad_enabled and (out._requires_grad or any(
            isinstance(a, Tensor) and a._requires_grad for a in args)):
        raise RuntimeError(OUT_NO_AUTOGRAD.format(op.schema.name))
    result = run(op, args)._data
    src, dst = D.from_numpy_dtype(result.dtype), out.dtype
    if not D.can_cast(src, dst):
        raise RuntimeError(OUT_CAST.format(D.legacy_name(src), D.legacy_name(dst)))
    if out._data.shape == result.shape:
        np.copyto(out._data, result, casting="unsafe")
    else:
        if out._data.size:
            warnings.warn(OUT_RESIZED.format(list(out._data.shape), list(result.shape)),
                          UserWarning, stacklevel=3)
        out._data = result.astype(out._data.dtype, copy=False)
    bump_version(out, op.schema.name)
    return out
