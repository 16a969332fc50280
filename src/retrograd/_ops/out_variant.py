"""`out=` for the namespace functions of single-output ops: torch.add(a, b, out=c).

As in torch, out= variants do not record history: with grad mode on, an argument that requires
grad is an error; the result is cast into `out` (which is resized, with torch's warning, when
its shape differs) and out's version is bumped.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._autograd.state import state
from retrograd._ops import dispatch
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
    from retrograd._ops.registry import run

    if not isinstance(out, Tensor):
        raise TypeError(f"{op.schema.name}(): argument 'out' must be Tensor, not "
                        f"{type(out).__name__}")
    check_no_grad(op.schema.name, args, (out,), differentiable(op))
    if dispatch.mode_stack:
        from retrograd._ops.forward_ad import check_out

        check_out(op, args, out)
    computed = run(op, args)
    result = computed._data
    src, dst = D.from_numpy_dtype(result.dtype), out.dtype
    if not D.can_cast(src, dst):
        raise RuntimeError(OUT_CAST.format(D.legacy_name(src), D.legacy_name(dst)))
    write_out(op.schema.name, computed, out, 5)
    return out


def write_out(name: str, computed: Tensor, out: Tensor, stacklevel: int) -> None:
    """Write a result into its out tensor. Under a dispatch mode the write is an op the modes
    see, as torch's modes see the out= overload (allow_mutation_on_saved_tensors then keeps
    out's old value); `stacklevel` places a resize warning at the user's line."""
    if dispatch.mode_stack and out._data.shape == computed._data.shape:
        from retrograd._ops.copy import copy_

        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            copy_(out, computed)
        finally:
            state.grad_enabled = prev
        return
    _store(name, computed._data, out, stacklevel)


def differentiable(op) -> bool:
    """False for an op none of whose outputs is differentiable (histc, the special
    polynomials, ...): torch's out= form of such an op writes whatever requires grad."""
    diff = op.differentiable_outputs
    return diff is None or any(diff)


def check_no_grad(name: str, args: tuple, outs, any_differentiable: bool = True) -> None:
    """out= records no history: with grad mode on, nothing involved may require grad (unless
    the op is not differentiable at all)."""
    if any_differentiable and state.grad_enabled and (any(o._requires_grad for o in outs) or any(
            isinstance(a, Tensor) and a._requires_grad for a in args)):
        raise RuntimeError(OUT_NO_AUTOGRAD.format(name))
    if not state.inference and any(o._version_counter is None for o in outs):
        from retrograd._ops.inplace import INFERENCE_INPLACE

        raise RuntimeError(INFERENCE_INPLACE)  # writing an inference tensor outside the mode


def _store(name: str, result: np.ndarray, out: Tensor, stacklevel: int = 4) -> None:
    """Write `result` into `out` (resized, with torch's warning, if its shape differs); the
    user's line is `stacklevel` frames up (by default: called from the function the user
    called, two frames up)."""
    from retrograd._ops.inplace import bump_version

    if out._data.shape == result.shape:
        np.copyto(out._data, result, casting="unsafe")
    else:
        if out._data.size:
            _ws.warn(OUT_RESIZED.format(list(out._data.shape), list(result.shape)),
                     UserWarning, stacklevel=stacklevel)
        out._data = result.astype(out._data.dtype, copy=False)
    bump_version(out, name, stacklevel)


def store_outs(name: str, compute, outs, args: tuple, n: int = 2) -> tuple:
    """out= for ops with several outputs (sort, topk, ...): `compute()` gives the outputs, run
    here without history; each out tensor must have its result's dtype exactly, as in torch."""
    from retrograd.autograd.grad_mode import no_grad

    check_out_tuple(name, outs, n)
    check_no_grad(name, args, outs)
    with no_grad():
        results = compute()
    for r, o in zip(results, outs):
        check_same_dtype(r, o)
    for r, o in zip(results, outs):
        _store(name, r._data, o)
    return tuple(outs)


def check_out_tuple(name: str, outs, n: int) -> None:
    """torch's TypeErrors for the out= of several results: a tuple (or list) of n Tensors."""
    if not isinstance(outs, (tuple, list)) or not all(isinstance(o, Tensor) for o in outs):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(outs).__name__}")
    if len(outs) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(outs)}")


def check_same_dtype(result: Tensor, out: Tensor) -> None:
    """torch's error for an out tensor whose dtype is not its result's exactly."""
    have, want = out._data.dtype.name, result._data.dtype.name
    if have != want:
        raise RuntimeError(f"Expected out tensor to have dtype {D.CPP_NAMES.get(want, want)}"
                           f", but got {D.CPP_NAMES.get(have, have)} instead")
