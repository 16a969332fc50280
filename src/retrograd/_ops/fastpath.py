"""Generated entry points for ops: the per-op Python overhead is decided here.

NOTE [Fast path]
Each op's public function is generated with the schema's real signature (so Python binds the
arguments, no kwargs parsing). Three common shapes of op get a specialized body:
- tensor arguments that are single tensors, one output or a fixed tuple of them, neither a
  view nor in-place: the body unwraps the tensor arguments inline, skips promotion when the
  dtypes already agree (or a float array meets a Python scalar), wraps each result with the
  fields of a fresh Tensor set directly, and, when grad mode is on and an input requires grad,
  builds the node inline (edges, output metadata, the save plan's values);
- single-output views of their one tensor argument: the same, plus the view's ViewInfo;
- in-place ops that build no graph (an optimizer step): write, bump the version, return self.
Everything else goes to the generic runner (registry.run), which has the same semantics.
Tests run both paths (the generic runner is also what dispatch modes see).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from retrograd._autograd.accumulate_grad import gradient_edge
from retrograd._autograd.anomaly import anomaly
from retrograd._autograd.state import state
from retrograd._autograd.views import (
    DEFAULT,
    INFERENCE_MODE,
    NO_GRAD_MODE,
    VIEW_INFO_FIELDS,
    ViewChain,
    track_view,
)
from retrograd._numpy_names import has_numpy_names, hide_numpy_names, numpy_names_signature
from retrograd._ops import dispatch
from retrograd._ops.arg_check import PLAIN, PLAIN_ONLY, check_tensor_arg
from retrograd._ops.codegen import compile_function, wrap_lines
from retrograd._ops.inplace import bump_version
from retrograd._ops.out_variant import run_with_out
from retrograd._ops.registry import AFTER_OUTPUTS, FORMULA_NODE_FIELDS
from retrograd._tensor import TENSOR_FIELDS


def _fast_eligible(opdef) -> bool:
    """Single tensors in; one output, or a fixed tuple of them (max.dim, native_layer_norm,
    nll_loss_forward); neither a view nor in-place."""
    tuple_out = opdef.multi and opdef.schema.returns[0].type != "Tensor[]"
    return (not opdef.is_view and not opdef.inplace_idx and not opdef.list_idx
            and (opdef.n_outputs == 1 and not opdef.multi or tuple_out))


def _view_eligible(opdef) -> bool:
    """Single-output views of their one tensor argument (select, slice, t, view, ...)."""
    return (opdef.is_view and not opdef.multi and not opdef.inplace_idx and not opdef.list_idx
            and opdef.n_outputs == 1 and opdef.tensor_idx == (0,))


def _moded(tensor_names: list) -> str:
    """The test that sends a call to the dispatcher: a mode is active, unless the only one is
    the wrapper-subclass dispatcher (on the stack while any wrapper tensor lives, NOTE [Wrapper
    subclasses]) and no tensor argument is a Tensor subclass, so none can be a wrapper: the
    dispatcher would run the call as if no mode were there."""
    plain = "".join(f" and ({n}.__class__ is _T or not isinstance({n}, _T))"
                    for n in tensor_names)
    return f"_modes and not (len(_modes) == 1 and _modes[0] is _alone[0]{plain})"


def _inplace_eligible(opdef) -> bool:
    """In-place ops writing their first argument (add_, mul_, zero_, ...)."""
    return (opdef.inplace_idx == (0,) and not opdef.multi and not opdef.list_idx
            and opdef.n_outputs == 1)


def _inplace_body(opdef, names: list, tup: str) -> list:
    """The fast path for an in-place op that builds no graph: grad mode is off (an optimizer
    step), or nothing involved requires grad and self is no view. It writes, bumps the version
    and returns self; everything else (history rebasing, CopySlices, the checks that refuse a
    write) goes to the generic runner."""
    src = names[0]
    # (other tensor arguments that are subclasses go to _run below)
    lines = [f"    if {src}.__class__ is not _T or {src}._version_counter is None or "
             f"{_moded([])}:",
             f"        return _run(_op, {tup}, _pub)",
             f"    d0 = {src}._data",
             f"    rg = {src}._requires_grad"]
    data = ["d0"] + list(names[1:])
    for i in opdef.tensor_idx[1:]:
        n = names[i]
        data[i] = f"d{i}"
        lines += [f"    if {n}.__class__ is _T:",
                  f"        d{i} = {n}._data",
                  f"        if {n}._requires_grad:",
                  "            rg = True",
                  f"    elif isinstance({n}, _T):",
                  f"        return _run(_op, {tup}, _pub)",
                  "    else:",
                  f"        d{i} = {n}"]
    lines += [f"    if _state.grad_enabled and (rg or {src}._view is not None) "
              "or not d0.flags.writeable:",
              f"        return _run(_op, {tup}, _pub)",
              f"    _fwd({', '.join(data)})",
              f"    _bump({src}, _name, 1)",
              f"    return {src}"]
    return lines


def _view_body(opdef, names: list, tup: str) -> list:
    """The fast path for a view op: the output shares the input's memory and version counter,
    its ViewInfo records the view (make_views' work, inline), then the graph is built as for
    any op."""
    src = names[0]
    rest = ", ".join(names[1:])
    step = "(" + "".join(f"{n}, " for n in names[1:]) + ")"
    call = f"_fwd({src}._data{', ' + rest if rest else ''})"
    lines = [f"    if {src}.__class__ is not _T and ({src}.__class__ in _tf_parts or "
             f"not isinstance({src}, _T)) or {_moded([src])}:",
             f"        return _run(_op, {tup}, _pub)",
             f"    out = {call}",
             "    if out.__class__ is not _nd:",
             "        out = _asarray(out)",
             "    r = _new(_T)",
             # the view's version counter is its base's; its ViewInfo comes further down
             *TENSOR_FIELDS.lines("r", {"data": "out"}, later=("_view",), override={
                 "_version_counter": ("vc", f"{src}._version_counter")}),
             "    if vc is None:  # a view of an inference tensor is a plain inference tensor",
             "        r._view = None",
             "        return r",
             f"    info = {src}._view",
             "    vi = _new(_VI)",
             "    if info is None:",
             f"        root = {src}",
             "        chain = None",
             "        meta = _DEFAULT",
             "    else:",
             "        root = info.base",
             "        chain = info.replay",
             "        meta = info.creation_meta",
             f"    q0 = {src}._requires_grad",
             # NOTE [View creation meta]: views.make_views is the readable form of these lines
             "    if not _state.grad_enabled:",
             "        meta = _INFERENCE_MODE if _state.inference else _NO_GRAD_MODE",
             "        r._requires_grad = q0",
             *VIEW_INFO_FIELDS.lines("vi", {"base": "root", "creation_meta": "meta",
                                            "replay": f"_Chain(chain, _op, {step})",
                                            "version": "vc.version"}),
             "    r._view = vi",
             # NOTE [Views of a tensor that starts to require grad]
             "    if not q0:",
             "        _track_view(vc, r)"]
    if opdef.node_cls is not None:
        lines.append("    if q0 and _state.grad_enabled:")
        lines += ["    " + line for line in _inline_build(opdef, [src], tup, ["r"])]
    lines.append("    return r")
    return lines


def make_function(opdef, first_name: str, run: Callable, promote: Callable) -> Callable:
    params, names, defaults = [], [], {}
    kw_started = False
    for i, a in enumerate(opdef.schema.args):
        name = first_name if a.name == "self" else a.name
        names.append(name)
        if a.kwarg_only and not kw_started:
            params.append("*")
            kw_started = True
        if a.has_default:
            defaults[f"_d{i}"] = a.default
            params.append(f"{name}=_d{i}")
        else:
            params.append(name)
    fname = opdef.schema.name
    tup = "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"
    # namespace functions of single-output ops take torch's out= (methods do not)
    with_out = (first_name == "input" and opdef.n_outputs == 1 and not opdef.multi
                and not opdef.is_view and not opdef.inplace_idx and "out" not in names)
    if with_out:
        params += ["out=None"] if kw_started else ["*", "out=None"]
    ns: dict = dict(defaults)
    guard: list = []
    if has_numpy_names(names):  # NOTE [NumPy argument names]
        qualname = fname if first_name == "input" else f"Tensor.{fname}"
        params, guard = numpy_names_signature(params, ns, fname, qualname)
    lines = [f"def {fname}({', '.join(params)}):", *guard]
    if with_out:
        lines += ["    if out is not None:", f"        return _with_out(_op, {tup}, out)"]
    if _fast_eligible(opdef):
        lines += _fast_body(opdef, names, tup)
    elif _inplace_eligible(opdef):
        lines += _inplace_body(opdef, names, tup)
    elif _view_eligible(opdef):
        lines += _view_body(opdef, names, tup)
    else:
        lines.append(f"    return _run(_op, {tup}, _pub)")
    ns.update({**TENSOR_FIELDS.names, **FORMULA_NODE_FIELDS.names, **VIEW_INFO_FIELDS.names,
          "_run": run, "_op": opdef, "_nd": np.ndarray, "_asarray": np.asarray,
          "_state": state,
          "_modes": dispatch.mode_stack, "_dispatch": dispatch.dispatch, "_fwd": opdef.forward,
          "_tf_parts": dispatch.torch_function_parts,
          "_alone": dispatch.subclass_alone,
          "_promote": promote,
          "_uf": getattr(opdef.forward, "ufunc", None), "_with_out": run_with_out,
          "_bump": bump_version, "_name": opdef.schema.name,
          "_edge": gradient_edge, "_NO": (None, 0), "_cls": opdef.node_cls,
          "_plans": opdef._saved_plan, "_anomaly": anomaly,
          "_trace": record_trace, "_Chain": ViewChain, "_track_view": track_view,
          "_DEFAULT": DEFAULT,
          "_NO_GRAD_MODE": NO_GRAD_MODE, "_INFERENCE_MODE": INFERENCE_MODE,
          "_PLAIN": PLAIN, "_PLAIN_ONLY": PLAIN_ONLY, "_check": check_tensor_arg,
          "__name__": "retrograd._ops.fastpath"})
    kind = "entry" if first_name == "input" else "method entry"
    fn = compile_function(fname, lines, ns, f"{opdef.name} {kind}")
    fn.__module__ = "retrograd"
    ns["_pub"] = fn  # what __torch_function__ receives as func (NOTE [Torch function])
    return hide_numpy_names(fn) if guard else fn


def _fast_body(opdef, names: list, tup: str) -> list:
    tensor_pos = opdef.tensor_idx
    lines = [f"    if {_moded([names[i] for i in tensor_pos])}:",
             f"        return _dispatch(_op, {tup}, _pub)"]
    data = list(names)
    flags = []
    method = names[0] == "self"
    for k, i in enumerate(tensor_pos):
        n = names[i]
        d = f"d{i}"
        data[i] = d
        flags.append(f"q{k}")
        # not a tensor: numbers and arrays pass; anything else gets torch's TypeError
        odd = f"{n}.__class__ not in {'_PLAIN' if len(tensor_pos) > 1 else '_PLAIN_ONLY'}"
        if opdef.schema.args[i].type.endswith("?"):
            odd = f"{n} is not None and {odd}"
        lines += [f"    if {n}.__class__ is _T:",
                  f"        {d} = {n}._data",
                  f"        q{k} = {n}._requires_grad",
                  f"    elif isinstance({n}, _T):",
                  f"        if {n}.__class__ in _tf_parts:  # NOTE [Torch function]",
                  f"            return _dispatch(_op, {tup}, _pub)",
                  f"        {d} = {n}._data",
                  f"        q{k} = {n}._requires_grad",
                  "    else:",
                  f"        if {odd}:",
                  f"            _check(_op, {i}, {n}, {method})",
                  f"        {d} = {n}",
                  f"        q{k} = False"]
    if opdef.promote is not None:
        lines += _promote_check(opdef, names, data)
    ufunc = getattr(opdef.forward, "ufunc", None)
    if ufunc is not None and len(data) == 2 and len(tensor_pos) == 2:
        # NOTE [Direct ufunc]: two row-major arrays of one dtype need none of the binary
        # forward's layout and scalar handling; a broadcast error still goes through it
        a, b = data
        lines += [f"    if {a}.__class__ is _nd and {b}.__class__ is _nd and "
                  f"{a}.flags.c_contiguous and {b}.flags.c_contiguous:",
                  "        try:",
                  f"            out = _uf({a}, {b})",
                  "        except ValueError:",
                  f"            out = _fwd({a}, {b})",
                  "    else:",
                  f"        out = _fwd({a}, {b})"]
    else:
        lines += [f"    out = _fwd({', '.join(data)})"]
    n_out = opdef.n_outputs if opdef.multi else 1
    if n_out == 1:
        lines += wrap_lines("out", "r")
        results = ["r"]
    else:
        results = [f"r{k}" for k in range(n_out)]
        lines.append(f"    {''.join(f'o{k}, ' for k in range(n_out))}= out")
        for k in range(n_out):
            lines += wrap_lines(f"o{k}", f"r{k}")
    if opdef.node_cls is not None:
        lines += [f"    if ({' or '.join(flags)}) and _state.grad_enabled:"]
        lines += ["    " + line for line in _inline_build(opdef, [names[i] for i in tensor_pos],
                                                           tup, results)]
    lines.append(f"    return {results[0] if n_out == 1 else '(' + ', '.join(results) + ')'}")
    return lines


def _inline_build(opdef, tensor_names: list, tup: str, results: list) -> list:
    """The graph builder (registry._build_node's work) inlined in the entry point: edges from
    the inputs that require grad (q<k>), the node, the outputs' history and the values the
    save plan for this requires-grad mask keeps."""
    lines = []
    for k, n in enumerate(tensor_names):
        # an op output: its grad_fn; a leaf: its live AccumulateGrad (held weakly on the
        # leaf); anything else (views, a leaf's first use) through gradient_edge
        lines += [f"    if q{k}:",
                  f"        fn = {n}._grad_fn",
                  f"        if {n}._view is not None:",
                  f"            e{k} = _edge({n})",
                  "        elif fn is not None:",
                  f"            e{k} = (fn, {n}._output_nr)",
                  "        else:",
                  f"            ref = {n}._grad_acc",
                  "            fn = ref() if ref is not None else None",
                  f"            e{k} = (fn, 0) if fn is not None else _edge({n})",
                  "    else:",
                  f"        e{k} = _NO"]
    edges = "(" + "".join(f"e{k}, " for k in range(len(tensor_names))) + ")"
    # a single tensor input builds a node only when it requires grad: a constant key
    key = "(True,)" if len(tensor_names) == 1 else \
        "(" + "".join(f"q{k}, " for k in range(len(tensor_names))) + ")"
    meta = "".join(f"({r}._data.shape, {r}._data.dtype), " for r in results)
    lines += ["    node = _new(_cls)",
              *FORMULA_NODE_FIELDS.lines("node", {"next_functions": edges,
                                                  "output_meta": f"({meta})", "mask": "None"},
                                         later=AFTER_OUTPUTS)]
    diff = opdef.differentiable_outputs
    for k, r in enumerate(results):
        if diff is None or diff[k]:
            lines += [f"    if {r}._data.dtype.kind in 'fV':",
                      f"        {r}._grad_fn = node",
                      f"        {r}._output_nr = {k}",
                      f"        {r}._requires_grad = True"]
    outs = "(" + "".join(f"{r}, " for r in results) + ")"
    lines += [f"    plan = _plans.get({key})",
              "    if plan is None:",
              f"        plan = _op.saved_plan({key})",
              *FORMULA_NODE_FIELDS.lines("node", {"plan": "plan",
                                                  "saved": f"plan.save({tup}, {outs})"},
                                         only=AFTER_OUTPUTS),
              "    if _anomaly.enabled:",
              "        _trace(node)"]
    return lines


def _promote_check(opdef, names: list, data: list) -> list:
    """Skip promotion when every tensor argument is an array of one (float, if needed) dtype."""
    ds = [data[i] for i in opdef.tensor_idx]
    conds = [f"{d}.__class__ is _nd" for d in ds]
    conds += [f"{ds[0]}.dtype is {d}.dtype" for d in ds[1:]]
    if opdef.promote == "float":
        conds.append(f"{ds[0]}.dtype.kind == 'f'")
    test = " and ".join(conds)
    if len(ds) == 2:
        # a float array with a Python float or int: NumPy's weak scalars give torch's dtype
        test = (f"{test} or ({ds[0]}.__class__ is _nd and {ds[0]}.dtype.kind == 'f' and "
                f"({ds[1]}.__class__ is float or {ds[1]}.__class__ is int))")
    all_names = "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"
    lines = [f"    if not ({test}):",
             f"        _call = list({all_names})"]
    for i in opdef.tensor_idx:
        lines.append(f"        _call[{i}] = {data[i]}")
    lines.append(f"        _promote(_op, {all_names}, _call)")
    for i in opdef.tensor_idx:
        lines.append(f"        {data[i]} = _call[{i}]")
    return lines


def record_trace(node) -> None:
    """Anomaly mode: remember where the node was created."""
    from retrograd._autograd.anomaly_report import record_forward_trace

    record_forward_trace(node)
