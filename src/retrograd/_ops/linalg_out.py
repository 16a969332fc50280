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
     "expected scalar type" words (solve_triangular), any dtype the result casts to (the
     composites pinv and torch.cholesky), or a function's own check (vecdot's words);
then the function runs without recording history and its results are written into the out
tensors (resized, with torch's warning, where their shape differs; each one's version bumped).
Several results come back as the `<name>_out` named tuple of the out tensors, as torch's do.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from retrograd import _dtype as D
from retrograd._ops.out_variant import (
    OUT_CAST,
    check_no_grad,
    check_out_tuple,
    check_same_dtype,
    write_out,
)
from retrograd._ops.reduction import _return_type, return_types
from retrograd._tensor import Tensor

EXACT, SCALAR_TYPE, CAST = "exact", "scalar type", "cast"


def with_out(api_name: str, grad_name: str, n: int = 1, dtype_rule: Any = EXACT,
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
                write_out(grad_name, r, o, 4)  # (its resize warning names the user's line)
            return out if n == 1 else out_type(outs)
        return wrapper
    return decorate


def _out_tensors(api_name: str, out: Any, n: int) -> tuple:
    if n > 1:
        check_out_tuple(api_name, out, n)
        return tuple(out)
    if not isinstance(out, Tensor):
        raise TypeError(f"{api_name}(): argument 'out' must be Tensor, not "
                        f"{type(out).__name__}")
    return (out,)


def _check_dtype(rule: Any, result: Tensor, out: Tensor) -> None:
    if callable(rule):  # a function's own check and message
        rule(result, out)
        return
    if rule == EXACT:
        check_same_dtype(result, out)
        return
    have, want = out._data.dtype.name, result._data.dtype.name
    if have == want:
        return
    if rule == SCALAR_TYPE:
        raise RuntimeError(f"expected scalar type {D.SCALAR_NAMES.get(want, want)} but found "
                           f"{D.SCALAR_NAMES.get(have, have)}")
    if not D.can_cast(result.dtype, out.dtype):
        raise RuntimeError(OUT_CAST.format(D.legacy_name(result.dtype),
                                           D.legacy_name(out.dtype)))
