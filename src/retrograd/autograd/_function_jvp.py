"""Forward-mode AD through a custom autograd.Function: its `jvp` gives the outputs' tangents.

The tangents jvp returns are checked against what forward did, as torch checks them, because a
wrong answer here would silently give wrong tangents downstream:
- one tangent per output; None where the output is not differentiable (an integer tensor, or one
  given to ctx.mark_non_differentiable);
- an input modified in place (ctx.mark_dirty) must have its tangent modified in place too, and
  that same tensor returned;
- an output that is a view of an input (an input returned as-is counts: it becomes a view of
  itself) must get a tangent that is the matching view of the input's tangent, so that later
  in-place ops on the view keep primal and tangent aliased alike.
"""

from __future__ import annotations

from typing import Any

from retrograd._ops import forward_ad as fw
from retrograd._tensor import Tensor

NOT_DIFFERENTIABLE = ("Function's jvp returned a gradient at position {i}, but  the corresponding "
                      "forward output is not a differentiable Tensor.You should return None at "
                      "that position instead.")
WRONG_COUNT = ("Function's jvp returned an invalid number of forward gradients (expected {n} but "
               "got {m})")
DIRTY_NOT_INPLACE = (
    "An inplace custom Function is not modifying the forward mode gradients inplace. If the "
    "forward is modifying an input inplace, then the jvp function must modify the corresponding "
    "gradient inplace.")
DIRTY_NOT_AS_IS = (
    "An inplace custom Function is not returning the forward mode gradients as-is. If the forward "
    "is modifying an input inplace, then the jvp function must modify the gradient inplace and "
    "return it as-is.")
VIEW_NOT_VIEW = ("A custom Function's forward is returning a view (or an input as-is) but the jvp "
                 "is not returning a view.")
VIEW_OF_OTHER = ("A custom Function is returning a view but the jvp is not returning a view of "
                 "the given grad input.")
VIEW_OF_OTHER_BASE = ("A custom Function is returning a view but the jvp is not returning a view "
                      "of the same base as the given grad input.")


def input_tangents(args: tuple) -> list | None:
    """The inputs' tangents (None where an input has none); None as a whole when no input has
    a tangent. run_jvp puts zeros in for floating inputs unless forward turned that off."""
    if not fw._enabled[0]:
        return None
    found = False
    out: list = []
    for a in args:
        t = fw.tangent_of(a) if isinstance(a, Tensor) else None
        found = found or t is not None
        out.append(t)
    return out if found else None


def _root(t: Tensor) -> Tensor:
    info = t._view
    return info.base if info is not None else t


def run_jvp(cls: Any, ctx: Any, args: tuple, tangents: list, output: Any) -> None:
    """Run cls.jvp with ctx.saved_tensors being what save_for_forward kept, check its results
    and give them to the outputs as their tangents."""
    d = ctx.__dict__
    if d.get("_materialize", True):  # ctx.set_materialize_grads(False) passes None through
        tangents = [fw._zeros(a) if t is None and isinstance(a, Tensor) and fw._float(a) else t
                    for a, t in zip(args, tangents)]
    versions = [t._version if isinstance(t, Tensor) else None for t in tangents]
    before = (d.get("_saved_vars"), d.get("_to_save"))
    d["_saved_vars"] = None
    d["_to_save"] = d.get("_saved_for_forward") or ()
    try:
        with fw.suspended():
            result = cls.jvp(ctx, *tangents)
    finally:
        d["_saved_vars"], d["_to_save"] = before
    outs = output if isinstance(output, tuple) else (output,)
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outs):
        raise RuntimeError(WRONG_COUNT.format(n=len(outs), m=len(results)))
    dirty = d.get("_dirty", ())
    non_diff = d.get("_non_differentiable", ())
    chosen = []
    for i, (o, t) in enumerate(zip(outs, results)):
        if not fw._float(o) or any(o is n for n in non_diff):
            if t is not None:
                raise RuntimeError(NOT_DIFFERENTIABLE.format(i=i))
            continue
        if t is None:
            continue
        k = next((k for k, a in enumerate(args) if a is o and any(a is x for x in dirty)), None)
        if k is not None:
            if t._version == versions[k]:
                raise RuntimeError(DIRTY_NOT_INPLACE)
            if t is not tangents[k]:
                raise RuntimeError(DIRTY_NOT_AS_IS)
        elif o._view is not None:
            _check_view(o, t, args, tangents)
        chosen.append((o, t))
    for o, t in chosen:  # every check passed: nothing is half set
        fw.set_tangent(o, fw._like(o, t))


def _check_view(out: Tensor, tangent: Tensor, args: tuple, tangents: list) -> None:
    """out is a view: if it views an input, its tangent must view that input's tangent."""
    base = out._view.base
    for a, given in zip(args, tangents):
        if not isinstance(a, Tensor) or given is None or _root(a) is not base:
            continue
        if tangent._view is None:
            raise RuntimeError(VIEW_NOT_VIEW)
        if given._view is not None:
            if tangent._view.base is not given._view.base:
                raise RuntimeError(VIEW_OF_OTHER_BASE)
        elif tangent._view.base is not given:
            raise RuntimeError(VIEW_OF_OTHER)
        return
