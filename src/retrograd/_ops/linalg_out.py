"""`out=` for the linalg functions (linalg.inv(A, out=X), linalg.svd(A, out=(U, S, Vh)), ...).

These functions are compositions of ops rather than one declared op, so the generic out=
support of the op declarations (out_variant.py) does not reach them. `with_out` gives each the
same contract, in torch's order of checks, all made before anything is written (a refused call
leaves the out tensors as they were):
  1. the kind of `out`: a Tensor for one result, a tuple or list of as many Tensors as results
     (TypeError, named after the function the user called: "linalg_inv(): argument 'out' ...");
  2. no autograd: with grad mode on, neither an argument nor an out tensor may require grad
     (named after the op torch runs underneath: inv's message says linalg_inv_ex);
  3. the dtype of each out tensor: the result's exactly (most), the result's in torch's
     "expected scalar type" words (solve_triangular), or any dtype the result casts to (the
     composites pinv and torch.cholesky);
then the function runs without recording history and its results are written into the out
tensors (resized, with torch's warning, where their shape differs; each one's version bumped).
Several results come back as the `<name>_out` named tuple of the out tensors, as torch's do.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from retrograd import _dtype as D
from retrograd._ops import dispatch
from retrograd._ops.out_variant import OUT_CAST, _store, check_no_grad
from retrograd._ops.reduction import _return_type, return_types
from retrograd._tensor import Tensor

EXACT, SCALAR_TYPE, CAST = "exact", "scalar type", "cast"


def with_out(api_name: str, grad_name: str, n: int = 1, dtype_rule: str = EXACT,
             fields: tuple | None = None) -> Callable:
    """Decorate a linalg function taking `out=None` (see the module docstring). `api_name`
    names it in TypeErrors, `grad_name` in the autograd error; `fields` names the results of
    a function with several (its return type is return_types.<api_name>_out)."""
    out_type: Any = None
    if n > 1:
        type_name = f"{api_name}_out"
        out_type = return_types.__dict__.get(type_name)
        if out_type is None:
            out_type = _return_type(type_name, fields or ())
            setattr(return_types, type_name, out_type)

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, out: Any = None, **kwargs: Any) -> Any:
            if out is None:
                return fn(*args, **kwargs)
            outs = _out_tensors(api_name, out, n)
            check_no_grad(grad_name, args + tuple(kwargs.values()), outs)
            from retrograd.autograd.grad_mode import no_grad

            with no_grad():
                result = fn(*args, **kwargs)
            results = (result,) if n == 1 else tuple(result)
            for r, o in zip(results, outs):
                _check_dtype(dtype_rule, r, o)
            for r, o in zip(results, outs):
                _write(grad_name, r, o)
            return out if n == 1 else out_type(outs)
        return wrapper
    return decorate


def _out_tensors(api_name: str, out: Any, n: int) -> tuple:
    if n == 1:
        if not isinstance(out, Tensor):
            raise TypeError(f"{api_name}(): argument 'out' must be Tensor, not "
                            f"{type(out).__name__}")
        return (out,)
    if not isinstance(out, (tuple, list)) or not all(isinstance(o, Tensor) for o in out):
        raise TypeError(f"{api_name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != n:
        raise TypeError(f"expected tuple of {n} elements but got {len(out)}")
    return tuple(out)


def _check_dtype(rule: str, result: Tensor, out: Tensor) -> None:
    have, want = out._data.dtype.name, result._data.dtype.name
    if have == want:
        return
    if rule == EXACT:
        raise RuntimeError(f"Expected out tensor to have dtype {D.CPP_NAMES.get(want, want)}, "
                           f"but got {D.CPP_NAMES.get(have, have)} instead")
    if rule == SCALAR_TYPE:
        raise RuntimeError(f"expected scalar type {D.SCALAR_NAMES.get(want, want)} but found "
                           f"{D.SCALAR_NAMES.get(have, have)}")
    if not D.can_cast(result.dtype, out.dtype):
        raise RuntimeError(OUT_CAST.format(D.legacy_name(result.dtype),
                                           D.legacy_name(out.dtype)))


def _write(name: str, result: Tensor, out: Tensor) -> None:
    """Write one result into its out tensor. Under a dispatch mode (a tracer of
    retrograd.compile) the write is an op the mode sees, as in run_with_out."""
    if dispatch.mode_stack and out._data.shape == result._data.shape:
        from retrograd._autograd.state import state
        from retrograd._ops.copy import copy_

        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            copy_(out, result)
        finally:
            state.grad_enabled = prev
        return
    _store(name, result._data, out)  # its resize warning names the user's line, 4 frames up
