"""Print the code retrograd generates for an op (NOTE [Visible generated code]).

    python -m retrograd.codegen mul             every overload of mul
    python -m retrograd.codegen mul.Tensor      one overload
    python -m retrograd.codegen mul --mask 1,0  only the save/backward for that requires-grad mask

For each op: its docstring (schema and derivative formulas), the entry points (the namespace
function and the Tensor method), then per requires-grad mask over its tensor inputs the save
function and the backward functions; for an op whose array formulas are generated (NOTE
[Generated array formulas]), each formula's function (its guarded specializations, then the
key lookup) and the code made per key. A mask's functions are generated the first time a node
with that mask is built; the common masks are generated here if they were not yet (and an
example backward runs for generated array formulas).
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import sys
from collections.abc import Callable

import retrograd  # declares every op
from retrograd._ops import array_formulas
from retrograd._ops.codegen import GENERATED
from retrograd._ops.registry import OPS, OpDef

# masks of ops with more tensor inputs than this: all inputs, and each input alone
_ALL_MASKS_UP_TO = 3


def find_ops(name: str) -> list:
    """The ops a name means: an exact overload ("mul.Tensor"), or every overload of a name."""
    if name in OPS:
        return [OPS[name]]
    return [o for o in OPS.values() if o.schema.name == name]


def common_masks(opdef: OpDef) -> list:
    k = len(opdef.tensor_idx)
    if k <= _ALL_MASKS_UP_TO:
        masks = [m for m in itertools.product((True, False), repeat=k) if any(m)]
    else:
        masks = [(True,) * k] + [tuple(i == j for j in range(k)) for i in range(k)]
    return masks


def generated_for(opdef: OpDef, masks: list | None = None) -> list:
    """(header, function) for everything generated for `opdef`, generating the save and
    backward functions of `masks` (default: common_masks) first."""
    out = [(_header("entry point", fn), fn) for fn in GENERATED.values()
           if getattr(fn, "__globals__", {}).get("_op") is opdef]
    if opdef.node_cls is None:
        return out
    for mask in masks if masks is not None else common_masks(opdef):
        opdef.saved_plan(mask)
    for mask in sorted(opdef._saved_plan, key=lambda m: (-sum(m), [not x for x in m])):
        plan = opdef._saved_plan[mask]
        saved = ", ".join(plan.names) or "nothing"
        out.append((_header(f"save (saves {saved})", plan.save), plan.save))
        for fn in (plan.backward, plan.backward_array):
            if fn is not None:
                out.append((_header("backward", fn), fn))
    if opdef.name in array_formulas.GENERATED:
        # NOTE [Generated array formulas]: the per-key code is made on first use
        if opdef not in array_formulas.SHOWN:
            _run_example(opdef)
        for f in opdef.array_formulas or ():
            out.append((_header("array formula (specializations, then the key)", f.fn), f.fn))
        for fn in array_formulas.SHOWN.get(opdef, []):
            out.append((_header("array formula for one key", fn), fn))
    return out


def _run_example(opdef: OpDef) -> None:
    """One backward of `opdef` on float32 (2, 3) tensors, so its array formulas get generated."""
    from retrograd._ops.registry import run

    args = []
    for a in opdef.schema.args:
        if a.is_tensor:
            args.append(retrograd.randn(2, 3, requires_grad=True))
        elif a.has_default:
            args.append(a.default)
        else:
            args.append(0.5)  # a Scalar with no default (lerp's weight)
    try:
        out = run(opdef, tuple(args))
        out.sum().backward()
    except Exception:  # noqa: BLE001 - the listing then shows the entry functions only
        pass


def _header(what: str, fn: Callable) -> str:
    filename = fn.__code__.co_filename
    return f"# ---- {what}: {fn.__qualname__}   {filename}"


def render(opdef: OpDef, masks: list | None = None) -> str:
    parts = [f"# ==== {opdef.name} ====", *(f"# {line}".rstrip() for line in
                                             _doc(opdef).splitlines()), ""]
    for header, fn in generated_for(opdef, masks):
        source = getattr(fn, "__retrograd_source__", None)
        if source is None:  # the reference backward is plain Python (NOTE [Reference backward])
            source = "# (not generated: RETROGRAD_REFERENCE_BACKWARD=1)\n"
        parts += [header, source]
    return "\n".join(parts)


def _doc(opdef: OpDef) -> str:
    from retrograd._ops.op_doc import op_doc

    return op_doc(opdef)


def _parse_mask(text: str, opdef: OpDef) -> tuple:
    mask = tuple(bool(int(x)) for x in text.replace(" ", "").strip("()").split(",") if x)
    if len(mask) != len(opdef.tensor_idx) or not any(mask):
        raise SystemExit(f"retrograd.codegen: {opdef.name} takes a mask of "
                         f"{len(opdef.tensor_idx)} flags, not all 0 (got {text!r})")
    return mask


def main(argv: list | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m retrograd.codegen",
                                description="Print the code retrograd generates for an op.")
    p.add_argument("op", help="an op name (mul) or one overload (mul.Tensor)")
    p.add_argument("--mask", help="only this requires-grad mask over the tensor inputs, e.g. 1,0")
    args = p.parse_args(argv)
    ops = find_ops(args.op)
    if not ops:
        names = sorted({o.schema.name for o in OPS.values()} | set(OPS))
        close = difflib.get_close_matches(args.op, names, n=5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        print(f"retrograd.codegen: no op named {args.op!r}{hint}", file=sys.stderr)
        return 2
    for opdef in ops:
        masks = None if args.mask is None else [_parse_mask(args.mask, opdef)]
        print(render(opdef, masks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
