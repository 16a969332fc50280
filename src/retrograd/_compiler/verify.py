"""Checks a new compiled variant passes before it is used (config.verify; NOTE [Compiler
pipeline]): its code reproduces the captured values, and on fresh, slightly different inputs it
agrees with running the function eagerly, which catches a value computed outside the recorded
ops and so frozen into the graph. A variant that fails runs eagerly."""

from __future__ import annotations

from typing import Any

import numpy as np

from retrograd._autograd.state import state
from retrograd._compiler.capture import Unsupported
from retrograd._tensor import Tensor, _wrap


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fV":
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        # float32 sums done in another order (a formula's fast array copy in eager, its op
        # form in the graph) differ by rounding relative to the array's scale; a value frozen
        # into the graph differs by about the 5% perturbation
        scale = float(np.nanmax(np.abs(b64), initial=0.0)) if b64.size else 0.0
        rtol = 1e-5 if a.dtype == np.float64 else 1e-4
        return bool(np.allclose(a64, b64, rtol=rtol, atol=1e-6 + rtol * 0.1 * scale,
                                equal_nan=True))
    return bool(np.array_equal(a, b))


def check_captured(entry: Any, part: Any, cap: Any, check_backward: bool = True) -> None:
    """Run the generated code once on the captured values and compare with them (random ops
    draw what they drew while capturing)."""
    from retrograd._compiler.joint import RngSnapshot

    seed = RngSnapshot(list(entry.forward.constants.values()))
    try:
        _check_captured(entry, part, check_backward, cap)
    finally:
        seed.restore()


def _check_captured(entry: Any, part: Any, check_backward: bool, cap: Any) -> None:
    fw_graph = part.forward
    inputs = [p.meta["val"] for p in fw_graph.placeholders()]
    expected = [None if o is None else o.meta["val"] for o in fw_graph.output_node.args[0]]
    got = entry.forward.fn(*[np.array(x, copy=True) for x in inputs])
    for i, (g, e) in enumerate(zip(got, expected)):
        if not _same(g, e):
            raise Unsupported(f"the generated forward differs from eager at output {i}")
    for gen, after in cap.rng_after_forward:
        if not _same_state(gen.get_state(), after):
            raise Unsupported("random numbers drawn outside the captured ops")
    if part.backward is None or not check_backward:
        return
    bw_graph = part.backward
    sizes = entry.sym_sizes([p.meta["val"] for p in fw_graph.placeholders()])
    inputs = [p.meta["val"] for p in bw_graph.placeholders()]
    expected = [None if o is None else o.meta["val"] for o in bw_graph.output_node.args[0]]
    got = entry.backward.fn([np.array(x, copy=True) for x in inputs] + sizes)
    for i, (g, e) in enumerate(zip(got, expected)):
        if not _same(g, e):
            raise Unsupported(f"the generated backward differs from eager at gradient {i}")


def _same_state(a: Any, b: Any) -> bool:
    return np.array_equal(np.asarray(a._data if isinstance(a, Tensor) else a),
                          np.asarray(b._data if isinstance(b, Tensor) else b))


def _perturbed(t: Tensor, rng) -> Tensor:
    a = t._data
    if a.dtype.kind in "fV" and a.size:
        wide = a.astype(np.float64)
        wide = wide * (1 + 0.05 * rng.standard_normal(a.shape)) + 0.01 * rng.standard_normal(
            a.shape)
        a = wide.astype(a.dtype)
    elif a.dtype.kind in "iub" and a.size > 1:
        # integers and masks (targets, indices) in another order: the same values, so still
        # valid, but a derivative formula that made a constant from them is caught
        a = np.ascontiguousarray(rng.permutation(a.reshape(-1)).reshape(a.shape))
    else:
        a = np.array(a, copy=True)
    c = _wrap(a)
    c._requires_grad = t._requires_grad
    return c


def check_perturbed(entry: Any, fn, args: tuple, kwargs: dict, slots: list, cap: Any,
                    compare_grads: bool, strict: bool = False) -> None:
    """Run eagerly and compiled on perturbed copies of the inputs and compare. `strict`: an
    eager run that fails on them fails the check (else the check passes: the perturbed values
    may leave the function's domain)."""
    from retrograd import autograd
    from retrograd._compiler.joint import RngSnapshot, flatten, unflatten

    rng = np.random.default_rng(20240501)
    leaves, spec = flatten((args, kwargs))
    params = [_perturbed(t, rng) for _, _, t in slots]
    new_leaves = [_perturbed(v, rng) if isinstance(v, Tensor) else v for v in leaves]
    inputs = [v for v in new_leaves if isinstance(v, Tensor)]
    primals = params + inputs + list(entry.free)
    start = [np.array(p._data, copy=True) for p in primals]
    tangents: list | None = None
    seed = RngSnapshot(leaves)
    hooks = state.saved_hooks
    state.saved_hooks = ()  # the generated code does not run them either
    for (slot, key, _), p in zip(slots, params):
        slot[key] = p
    try:
        call_args, call_kwargs = unflatten(new_leaves, spec)
        out = fn(*call_args, **call_kwargs)
        outs = [v for v in flatten(out)[0] if isinstance(v, Tensor)]
        grads: list = []
        if entry.backward is not None:
            diff = [outs[i] for i in entry.diff_outputs]
            tangents = [_wrap(rng.standard_normal(o.shape).astype(o._data.dtype)) for o in diff]
            grads = list(autograd.grad(diff, [primals[i] for i in entry.diff_primals],
                                       tangents, allow_unused=True))
    except Exception as err:  # noqa: BLE001 - the perturbed inputs leave the function's domain
        if strict:
            raise Unsupported(f"the check against eager could not run: {err!r}") from None
        return
    finally:
        state.saved_hooks = hooks
        for slot, key, t in slots:
            slot[key] = t
        seed.restore()
    try:
        got = entry.forward.fn(*start)
    finally:
        seed.restore()
    n, m = entry.n_outputs, len(entry.mutated)
    for i in range(n):
        if not _same(got[i], outs[i]._data):
            raise Unsupported(f"output {i} depends on values computed outside the captured ops")
    for j, i in enumerate(entry.mutated):
        if not _same(got[n + j], primals[i]._data):
            raise Unsupported("an input's new value depends on values computed outside the "
                              "captured ops")
    if entry.backward is None or not compare_grads or tangents is None:
        return
    result = entry.backward.fn([*got[n + m:], *[t._data for t in tangents],
                                *[entry.free[i]._data for i in entry.backward_free],
                                *entry.sym_sizes(start)])
    for i, (g, e) in enumerate(zip(result, grads)):
        if not _same(g, None if e is None else e._data):
            raise Unsupported(f"gradient {i} depends on values computed outside the captured "
                              "ops")
