"""The op registry: each op is declared once, forward and derivatives together.

    exp = op("exp(Tensor self) -> Tensor", np.exp,
             grads={"self": lambda grad, result: grad * result})

NOTE [Formulas]
A formula's parameter names say what it needs, and so what the node saves:
  grad / grads          gradient of output 0 / of every output (None where none arrived)
  <tensor arg>          the input, saved as a SavedVariable (a Python scalar stays a number)
  result, result<i>     the op's output(s), saved without a reference cycle
  <return name>         a named output, e.g. `indices` of max.dim
  <tensor arg>_shape    the input's shape only (nothing is kept alive)
  <tensor arg>_dtype    the input's dtype
  <other arg>           a non-tensor argument (dim, keepdim, ...)
  output_mask           which inputs need a gradient (for joint formulas)
The registry reads these names once, here; only the names used by the formulas of inputs that
require grad are saved at run time. A key "self, weight" declares one joint formula returning a
tuple. Formulas are written with retrograd ops, so double backward needs no extra code. Gradients
for broadcast inputs are summed back to the input's shape by the engine (as PyTorch's
validate_outputs does), not in formulas.

From the declaration the registry makes the namespace function, the Tensor method (unless told
otherwise) and the Node subclass with PyTorch's name ("ExpBackward0"). Declarations of one name
(pow.Tensor_Scalar, pow.Tensor_Tensor, pow.Scalar) share a generated public function and are
numbered PowBackward0, 1, 2 (NOTE [Overloads]).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from retrograd import _dtype as D
from retrograd._autograd.accumulate_grad import gradient_edge
from retrograd._autograd.anomaly import anomaly
from retrograd._autograd.node import FROM_TASK, NODE_FIELDS, Node
from retrograd._autograd.saved import (
    SAVED_ARRAY_FIELDS,
    SAVED_TENSOR_FIELDS,
    SavedVariable,
    release_text,
    unpack_lines,
)
from retrograd._autograd.state import state
from retrograd._autograd.views import make_views
from retrograd._ops import dispatch, overloads, reference_backward
from retrograd._ops.arg_check import PLAIN, check_tensor_arg, check_tensor_list
from retrograd._ops.codegen import compile_function, wrap_lines
from retrograd._ops.forward_ad import rule_for as jvp_rule_for
from retrograd._ops.op_doc import document_overloads, op_doc
from retrograd._ops.schema import Schema, parse_schema
from retrograd._tensor import Tensor, VersionCounter, _wrap

OPS: dict = {}  # full schema name -> OpDef
_FLOAT_KINDS = "fV"  # NumPy kinds of differentiable dtypes (V: ml_dtypes' bfloat16 / float8)


class OpDef:
    """Everything the runner needs about one op, computed once at declaration."""

    def __init__(self, schema: Schema, forward: Callable, grads: dict, node: str | None,
                 promote: str | None, differentiable_outputs: tuple | None,
                 array_grads: dict | None = None, jvp: Callable | None = None) -> None:
        self.schema = schema
        self.name = schema.full_name
        self.forward = forward
        self.promote = promote
        self.arg_names = tuple(a.name for a in schema.args)
        self.tensor_idx = tuple(i for i, a in enumerate(schema.args)
                                if a.is_tensor or a.is_tensor_list)
        self.list_idx = frozenset(i for i, a in enumerate(schema.args) if a.is_tensor_list)
        self.n_outputs = len(schema.returns)
        self.multi = self.n_outputs > 1 or (
            self.n_outputs == 1 and schema.returns[0].type == "Tensor[]")
        self.is_view = schema.is_view
        self.inplace_idx = tuple(i for i, a in enumerate(schema.args)
                                 if a.is_written and not a.kwarg_only)
        # lists written in place (the _foreach_*_ / _fused_*_ ops): inplace.run_list_inplace
        self.written_lists = tuple(i for i in self.inplace_idx if i in self.list_idx)
        self.differentiable_outputs = differentiable_outputs
        self.node_name = node or "".join(p.title() for p in schema.name.split("_")) + "Backward0"
        self.formulas = _compile_formulas(self, grads)
        self.array_formulas = _compile_array_formulas(self, grads, array_grads)
        base = CppFormulaNode if self.node_name in CPP_NODE_NAMES else FormulaNode
        self.node_cls = None if not self.formulas else type(
            self.node_name, (base,), {"__slots__": (), "_op": self,
                                      "_reads_ownership": self.is_view or self.name in PASS_ON})
        self._saved_plan: dict = {}
        # how tangents go through this op (NOTE [Forward-mode derivatives])
        self.jvp = jvp
        self.jvp_rule = jvp_rule_for(self.name, self.is_view, bool(self.formulas), jvp)

    def __repr__(self) -> str:
        return f"<op {self.name}>"

    def saved_plan(self, mask: tuple) -> SavePlan:
        """What to save for a requires-grad mask over the tensor inputs, and how backward then
        calls the formulas (cached per mask). Only what the formulas of inputs that need a
        gradient read is saved."""
        plan = self._saved_plan.get(mask)
        if plan is None:
            names = []
            for f in self.formulas:
                if any(mask[i] for i in f.inputs):
                    names.extend(n for n in f.params if n not in names)
            # NOTE [Saved order]: values are saved, and unpacked in backward, in the order the
            # formulas first read them, formulas taken in input order -- PyTorch 2.13's order
            # (mul saves `other`, read by self's formula, before `self`). Pack/unpack hooks can
            # rely on it.
            names = tuple(n for n in names if n not in ("grad", "grads", "output_mask"))
            plan = self._saved_plan[mask] = SavePlan(self, names, mask)
        return plan

    def _how_to_save(self, name: str) -> tuple:
        """(kind, index): how to save a formula parameter; see _save."""
        if name in self.arg_names:
            i = self.arg_names.index(name)
            return (_ARG_TENSOR if i in self.tensor_idx else _ARG_RAW, i)
        if name == "result":
            return (_OUTPUT, 0)
        if name.startswith("result") and name[6:].isdigit():
            return (_OUTPUT, int(name[6:]))
        for i, r in enumerate(self.schema.returns):
            if r.name == name:
                return (_OUTPUT, i)
        base, _, what = name.rpartition("_")
        return ({"shape": _SHAPE, "dtype": _DTYPE, "strides": _STRIDES}[what],
                self.arg_names.index(base))



class SavePlan:
    """For one op and requires-grad mask: the saved names, a generated function that saves
    them, each formula with the positions of its arguments among [*saved values, grad, grads,
    output_mask], and the generated backward that calls them (NOTE [Fast backward])."""

    __slots__ = ("names", "save", "calls", "mask", "uses_grads", "backward", "backward_array",
                 "outputs_saved")

    def __init__(self, op: OpDef, names: tuple, mask: tuple) -> None:
        self.names = names
        self.mask = mask
        how = [op._how_to_save(n) for n in names]
        # (position among the saved values, output index) of each saved output
        self.outputs_saved = tuple((j, i) for j, (kind, i) in enumerate(how) if kind == _OUTPUT)
        where = f"{op.name} {{}} mask={tuple(int(m) for m in mask)}"
        self.save = _compile_save(how, (where.format("save"), f"{op.name}.save"))
        index = {n: i for i, n in enumerate(names)}
        k = len(names)
        index.update(grad=k, grads=k + 1, output_mask=k + 2)
        self.calls = tuple((f, tuple(index.get(p, -1) for p in f.params)) for f in op.formulas)
        self.uses_grads = any("grads" in f.params for f in op.formulas)
        kinds = [kind for kind, _ in how]
        backward = f"{op.node_name}.backward"
        self.backward = _compile_backward(self, kinds, bool(op.list_idx), self.calls,
                                          label=(where.format(backward), backward))
        # NOTE [Array formulas]: FormulaNode._run picks this one when backward builds no graph
        self.backward_array = None
        if op.array_formulas is not None and not op.list_idx:
            calls = tuple((f, tuple(index.get(p, -1) for p in f.params))
                          for f in op.array_formulas)
            self.backward_array = _compile_backward(
                self, kinds, False, calls, True, self.backward,
                (where.format(backward + "_array"), backward + "_array"))


def _compile_backward(plan: SavePlan, kinds: list, has_lists: bool, calls: tuple,
                      arrays: bool = False, fallback=None, label: tuple = ("backward", None)):
    """backward(node, grads, release, needed) -> per-edge gradients: the engine's hot path for
    op nodes (NOTE [Fast backward]); with `arrays`, the variant that runs the array formulas
    (NOTE [Array formulas]) and hands to `fallback` under a dispatch mode. `label`: the
    filename label and qualified name it gets (NOTE [Visible generated code]).

    NOTE [Fast backward]
    One function per op and requires-grad mask does what FormulaNode.apply plus
    release_variables do, without their generic loops: each saved value is unpacked inline
    (an input saved as itself, unmodified, is used directly; anything else goes through
    SavedVariable.unpack, which raises the errors users know), the formulas of the inputs that
    need a gradient are called with their arguments in local variables, and, unless the graph
    is retained, the saved values are freed after the formulas ran. `needed` is None (every
    connected input), FROM_TASK (ask the running graph task, for `inputs=`), or per-edge flags.
    The engine does not know of plans: it calls Node._run, which FormulaNode implements by
    calling its plan's backward (or backward_array).
    """
    if reference_backward.ENABLED:  # NOTE [Reference backward]
        return reference_backward.reference_backward(plan, has_lists, calls, arrays, fallback,
                                                     label[1])
    k = len(kinds)
    lines = ["def backward(node, grads, release, needed):"]
    if arrays:
        lines += ["    if _modes:", "        return _fallback(node, grads, release, needed)"]
    if k:
        lines.append(f"    {''.join(f's{j}, ' for j in range(k))}= node._saved")
    may_hold = [j for j, kind in enumerate(kinds) if kind in (_ARG_TENSOR, _OUTPUT)]
    for j in may_hold:
        lines += unpack_lines(j, arrays, kinds[j] == _ARG_TENSOR and has_lists)
    for j in range(k):
        if j not in may_hold:
            lines.append(f"    v{j} = s{j}")
    if arrays:
        # no gradient arrived at all: every input's gradient is undefined too (as PyTorch's
        # generated nodes do), so nothing is computed and no zeros reach the leaves
        lines += ["    G = grads[0]",
                  "    n = None",
                  "    if G is None:",
                  "        if _undefined(grads):",
                  "            n = _NONE",
                  "        else:",
                  "            G = _zeros(node._output_meta[0])",
                  "    g = None if G is None else G._data"]
    else:
        lines += ["    g = grads[0]",
                  "    n = None",
                  "    if g is None:",
                  "        if _undefined(grads):",
                  "            n = _NONE",
                  "        else:",
                  "            g = _zeros(node._output_meta[0])"]
    lines += ["    if n is None:",
              "        n = _MASK if needed is None else _needed(node, needed)"]
    names = [f"v{j}" for j in range(k)] + ["g", "_gs", "n"]
    if plan.uses_grads:
        lines.append("    _gs = tuple([None if x is None else x._data for x in grads])" if arrays
                     else "    _gs = tuple(grads)")
    n_inputs = len(plan.mask)
    for i in range(n_inputs):
        lines.append(f"    r{i} = None")
    ns = {"_SV": SavedVariable, "_zeros": _zeros_for, "_MASK": plan.mask,
          "_NONE": (False,) * len(plan.mask), "_undefined": _all_undefined,
          "_needed": _needed_for, "_flatten": _flatten_grads, "_release": _release_saved,
          "_modes": dispatch.mode_stack, "_fallback": fallback, "_arr": _array_of,
          "_nd": np.ndarray, "_asarray": np.asarray, "_new": object.__new__, "_T": Tensor,
          "_VC": VersionCounter, "_state": state}
    for c, (f, idx) in enumerate(calls):
        ns[f"f{c}"] = f.fn
        call = f"f{c}(" + ", ".join(names[j] for j in idx) + ")"
        if len(f.inputs) == 1:
            i = f.inputs[0]
            lines += [f"    if n[{i}]:", f"        r{i} = {call}"]
        else:
            cond = " or ".join(f"n[{i}]" for i in f.inputs)
            lines += [f"    if {cond}:", f"        t = {call}"]
            for pos, i in enumerate(f.inputs):
                lines += [f"        if n[{i}]:", f"            r{i} = t[{pos}]"]
    if arrays:
        # an array formula that returns the incoming gradient passes its Tensor on; other
        # results become fresh tensors (_wrap's field set-up, inline)
        for i in range(n_inputs):
            lines += [f"    if r{i} is not None:",
                      f"        if r{i} is g:",
                      f"            r{i} = G",
                      "        else:",
                      *wrap_lines(f"r{i}", "t", "            "),
                      f"            r{i} = t"]
    if may_hold:
        lines.append("    if release:")
        for j in may_hold:
            lines += [f"        if s{j}.__class__ is _SV:", "            " + release_text(f"s{j}")]
            if kinds[j] == _ARG_TENSOR and has_lists:
                lines += [f"        elif s{j}.__class__ is tuple:", f"            _release(s{j})"]
    result = "(" + "".join(f"r{i}, " for i in range(n_inputs)) + ")"
    if has_lists:
        lines.append(f"    return _flatten(node._mask, {result})")
    else:
        lines.append(f"    return {result}")
    return compile_function("backward", lines, ns, *label)


def _array_of(t):
    return None if t is None else t._data


def _all_undefined(grads: list) -> bool:
    for g in grads:
        if g is not None:
            return False
    return True


def _zeros_for(meta: tuple):
    from retrograd._autograd.engine import zeros_for

    return zeros_for(meta)


def _needed_for(node, needed) -> tuple:
    """Per-tensor-argument flags from FROM_TASK or per-edge flags (see _compile_backward)."""
    if needed is FROM_TASK:
        needed = _needed_edges(node.next_functions, state.graph_task)
    layout = node._mask
    return needed if layout is None else _needed_per_input(needed, layout)


def _flatten_grads(layout: tuple | None, result: tuple) -> tuple:
    """Per-argument gradients to per-edge ones (a Tensor[] argument has an edge per tensor)."""
    if layout is None:
        return result
    flat = []
    for count, value in zip(layout, result):
        if count is None:
            flat.append(value)
        else:
            flat.extend(value if value is not None else [None] * count)
    return tuple(flat)


def _release_saved(values: tuple) -> None:
    """Free the SavedVariables among saved values (a Tensor[] argument saves a tuple)."""
    for v in values:
        if v.__class__ is SavedVariable:
            v.release()
        elif v.__class__ is tuple:
            _release_saved(v)


_ARG_TENSOR, _ARG_RAW, _OUTPUT, _SHAPE, _DTYPE, _STRIDES = range(6)
_SAVE_EXPR = {_ARG_TENSOR: "(_SV(args[{0}], False) if args[{0}].__class__ is _T "
                           "else _arg(args[{0}]))", _ARG_RAW: "args[{0}]",
              _OUTPUT: "_SV(outs[{0}], True)", _SHAPE: "_shape(args[{0}])",
              _DTYPE: "_dtype(args[{0}])", _STRIDES: "_strides(args[{0}])"}


class Formula:
    __slots__ = ("fn", "inputs", "params", "joint")

    def __init__(self, fn: Callable, inputs: tuple, params: tuple, joint: bool) -> None:
        self.fn, self.inputs, self.params, self.joint = fn, inputs, params, joint


def _compile_formulas(opdef: OpDef, grads: dict) -> tuple:
    """Map each formula to the positions (among tensor inputs) of the inputs it differentiates."""
    tensor_names = [opdef.arg_names[i] for i in opdef.tensor_idx]
    known = set(opdef.arg_names) | {"grad", "grads", "result", "output_mask"}
    known |= {f"result{i}" for i in range(opdef.n_outputs)}
    known |= {r.name for r in opdef.schema.returns if r.name}
    for suffix in ("_shape", "_dtype", "_strides"):
        known |= {n + suffix for n in tensor_names}
    out = []
    for key, fn in grads.items():
        names = [k.strip() for k in key.split(",")]
        for n in names:
            if n not in tensor_names:
                raise ValueError(f"{opdef.name}: formula for unknown input {n!r}")
        params = tuple(inspect.signature(fn).parameters)
        for p in params:
            if p not in known:
                raise ValueError(f"{opdef.name}: formula parameter {p!r} is not a known name")
        out.append(Formula(fn, tuple(tensor_names.index(n) for n in names), params,
                           len(names) > 1))
    return tuple(out)


def _compile_array_formulas(opdef: OpDef, grads: dict, array_grads: dict | None):
    """NOTE [Array formulas]
    An op's formulas also exist on NumPy arrays: generated from the Tensor formulas for the ops
    in array_formulas.GENERATED (NOTE [Generated array formulas]), declared by hand (array_grads)
    for the few hot ops where that is measured faster. When backward builds no
    graph (no create_graph, no dispatch mode), the engine runs those: no Tensor is made for the
    formula's intermediate results and no op entry point runs, which is most of a small op's
    backward cost. The Tensor formulas stay the definition: they run for double backward, under
    dispatch modes and anomaly mode, and every op's gradcheck (array formulas) and gradgradcheck
    (Tensor formulas) compares both with finite differences. An array formula takes the same
    parameter names (tensors arrive as arrays), reads only what its Tensor formula reads, and may
    return any array the engine's validation accepts (it sums broadcast dims and casts to the
    input's dtype). Returning the incoming `grad` array itself passes the incoming gradient
    Tensor on unchanged, as the Tensor formula `lambda grad: grad` does."""
    if not array_grads:
        from retrograd._ops.array_formulas import generated_formulas

        return generated_formulas(opdef, Formula)
    if list(array_grads) != list(grads):
        raise ValueError(f"{opdef.name}: array_grads must have the keys of grads, in order")
    out = []
    for f, fn in zip(opdef.formulas, array_grads.values()):
        params = tuple(inspect.signature(fn).parameters)
        extra = set(params) - set(f.params) - {"grad", "grads", "output_mask"}
        if extra:
            raise ValueError(f"{opdef.name}: array formula reads {sorted(extra)}, which its "
                             "Tensor formula does not")
        out.append(Formula(fn, f.inputs, params, f.joint))
    return tuple(out)


class FormulaNode(Node):
    """A node whose backward is the op's declared formulas."""

    __slots__ = ("_saved", "_plan", "_mask")
    _op: OpDef
    _op_formulas = True

    def _run(self, grads: list, release: bool, needed: object, graph: bool) -> tuple:
        plan = self._plan
        if graph or plan.backward_array is None:
            return plan.backward(self, grads, release, needed)
        return plan.backward_array(self, grads, release, needed)

    def apply(self, grad_outputs: list, needed: tuple | None = None) -> tuple:
        if needed is None:
            task = state.graph_task
            if task is not None and task.exec_info is not None:
                needed = FROM_TASK
        return self._plan.backward(self, grad_outputs, False, needed)

    def release_variables(self) -> None:
        # the SavedVariables stay (their register_hooks reports the release); their data goes
        _release_saved(self._saved)

    def __getattr__(self, name: str):
        # grad_fn._saved_<name> / grad_fn._raw_saved_<name>, as PyTorch exposes them
        if name.startswith(("_saved_", "_raw_saved_")):
            from retrograd._ops.saved_attrs import saved_attribute

            return saved_attribute(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def _needed_edges(nexts: tuple, task) -> tuple:
    """Within `inputs=`, the edges whose gradient leads somewhere the current backward runs
    (so a weight-free input pass computes no weight grads)."""
    should = task.should_compute
    return tuple(nf is not None and should(nf) for nf, _ in nexts)


def _needed_per_input(needed: tuple, layout: tuple) -> tuple:
    """Collapse per-edge flags to per-tensor-argument flags (a Tensor[] arg has many edges)."""
    out, pos = [], 0
    for count in layout:
        width = 1 if count is None else count
        out.append(any(needed[pos:pos + width]))
        pos += width
    return tuple(out)


# NOTE [Field tables]: an op's node, as _build_node and the op entry points (fastpath) make it.
# _plan and _saved are written once the outputs carry the node (AFTER_OUTPUTS): saving an output
# must see it as this node's, to keep only its array.
FORMULA_NODE_FIELDS = NODE_FIELDS.extend(FormulaNode, "_cls", (
    ("_mask", "{mask}", "how many edges each Tensor[] argument has (None: no Tensor[] argument)"),
    ("_plan", "{plan}", "the SavePlan for this call's requires-grad mask: its generated backward"),
    ("_saved", "{saved}", "the values the plan saves, in its order (NOTE [Saved order])"),
), ("mask", "plan", "saved"))
AFTER_OUTPUTS = ("_plan", "_saved")
_new_node = FORMULA_NODE_FIELDS.constructor("new_node", "_cls, next_functions, output_meta, mask",
                                            later=AFTER_OUTPUTS)
_finish_node = FORMULA_NODE_FIELDS.constructor("finish_node", "node, plan, saved", target="node",
                                               only=AFTER_OUTPUTS)


# non-view ops whose formulas may hand on the incoming gradient itself: their nodes learn from
# the engine whether it is its own (NOTE [Gradient ownership]), so what they pass on to a leaf
# can become its .grad without a copy
PASS_ON = frozenset({"add.Tensor", "sub.Tensor", "clone", "_to_copy", "alias"})


# hand-written C++ nodes in PyTorch whose behaviour retrograd declares as formulas
CPP_NODE_NAMES = frozenset({"CopyBackwards", "Error"})


class CppFormulaNode(FormulaNode):
    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::" + type(self).__name__


def run_inplace(op, args, call, any_grad):
    from retrograd._ops.inplace import run_inplace as run

    return run(op, args, call, any_grad)


# --- running an op ---------------------------------------------------------------------------


def _as_array(x):
    return x if type(x) is np.ndarray else np.asarray(x)


def run(op: OpDef, args: tuple, public=None):
    """Run `op` on schema-ordered `args`: forward in NumPy, then the graph if anything needs it
    (`public`: the entry point called, for __torch_function__, NOTE [Torch function])."""
    if dispatch.mode_stack:
        return dispatch.dispatch(op, args, public)
    hook = dispatch.torch_function_hook[0]
    if hook is not None:  # a class that takes part in __torch_function__ exists
        out = hook(op, args, public)
        if out is not dispatch.NOT_HANDLED:
            return out
    return run_eager(op, args)


def run_eager(op: OpDef, args: tuple):
    call = list(args)
    any_grad = False
    for i in op.tensor_idx:
        a = args[i]
        if i in op.list_idx:
            if a.__class__ is not list and a.__class__ is not tuple or not all(
                    isinstance(t, (Tensor, np.ndarray)) or t is None for t in a):
                check_tensor_list(op.schema.name, a, op.schema.args[i], i + 1)
            call[i] = [t._data if isinstance(t, Tensor) else t for t in a]
            if not any_grad:
                any_grad = any(isinstance(t, Tensor) and t._requires_grad for t in a)
        elif isinstance(a, Tensor):
            call[i] = a._data
            if a._requires_grad:
                any_grad = True
        elif a.__class__ not in PLAIN or len(op.tensor_idx) == 1:
            check_tensor_arg(op, i, a)  # torch's TypeError for a non-Tensor
    if op.promote is not None:
        _promote(op, args, call)
    if op.inplace_idx:
        return run_inplace(op, args, call, any_grad)
    out = op.forward(*call)
    build = any_grad and state.grad_enabled and op.node_cls is not None
    if op.multi:
        outs = [_wrap(_as_array(o)) for o in out]
        if op.is_view:
            make_views(op, args, outs, build)
        if build:
            _build_node(op, args, outs)
        return outs if op.schema.returns[0].type == "Tensor[]" else tuple(outs)
    result = _wrap(out if type(out) is np.ndarray else np.asarray(out))
    if op.is_view:
        make_views(op, args, (result,), build)
    if build:
        _build_node(op, args, (result,))
    return result


_NO_EDGE = (None, 0)


def _edge_of(a) -> tuple:
    if a._view is None:
        fn = a._grad_fn
        if fn is not None:
            return (fn, a._output_nr)
    return gradient_edge(a)


def _build_node(op: OpDef, args: tuple, outs) -> None:
    """Create op's node for one call: edges, output metadata, saved values; attach outputs."""
    if outs.__class__ is Tensor:
        outs = (outs,)
    layout = None
    if op.list_idx:
        edges, layout, mask = [], [], []
        for i in op.tensor_idx:
            a = args[i]
            if i in op.list_idx:
                group = [_edge_of(t) if isinstance(t, Tensor) and t._requires_grad else _NO_EDGE
                         for t in a]
                edges.extend(group)
                layout.append(len(group))
                mask.append(any(e is not _NO_EDGE for e in group))
            else:
                e = _edge_of(a) if isinstance(a, Tensor) and a._requires_grad else _NO_EDGE
                edges.append(e)
                layout.append(None)
                mask.append(e is not _NO_EDGE)
        edges, layout, mask = tuple(edges), tuple(layout), tuple(mask)
    else:
        edges = tuple(_edge_of(a) if (a.__class__ is Tensor or isinstance(a, Tensor))
                      and a._requires_grad else _NO_EDGE
                      for a in [args[i] for i in op.tensor_idx])
        mask = tuple(e is not _NO_EDGE for e in edges)
    node = _new_node(op.node_cls, edges, tuple([(o._data.shape, o._data.dtype) for o in outs]),
                     layout)
    # outputs get their history first, so saving one of them sees it as an output of this node
    diff = op.differentiable_outputs
    for nr, o in enumerate(outs):
        if o._data.dtype.kind in _FLOAT_KINDS and (diff is None or diff[nr]):
            o._grad_fn = node
            o._output_nr = nr
            o._requires_grad = True
    plan = op.saved_plan(mask)
    _finish_node(node, plan, plan.save(args, outs))
    if anomaly.enabled:
        from retrograd._autograd.anomaly_report import record_forward_trace

        record_forward_trace(node)


def _save_arg(a):
    """A tensor argument is saved as a SavedVariable; a Python scalar (or list) as it is; a
    list holding tensors (Tensor[], Tensor?[]) as a tuple of SavedVariables, Nones included."""
    if isinstance(a, Tensor):
        return SavedVariable(a, False)
    if isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) for t in a):
        return tuple(SavedVariable(t if isinstance(t, Tensor) else None, False) for t in a)
    return a


def _shape_of(a):
    if isinstance(a, Tensor):
        return a._data.shape
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
        return tuple(t._data.shape for t in a)  # a Tensor[] argument: one shape per tensor
    return ()


def _strides_of(a):
    if a.__class__ is Tensor:
        arr = a._data
        if arr.size:
            size = arr.itemsize
            st = arr.strides
            if len(st) == 2:  # (a matrix, as mm and addmm save: no comprehension to run)
                return (st[0] // size, st[1] // size)
            return tuple([s // size for s in st])
    return a.stride() if isinstance(a, Tensor) else ()


def _dtype_of(a):
    return a.dtype if isinstance(a, Tensor) else D.result_type(a)


def _compile_save(how: list, label: tuple = ("save", None)):
    """save(args, outs) -> the values a node keeps, one per (kind, index) in `how`.

    With no saved-tensor hooks active (the common case) a tensor is saved by filling a
    SavedVariable's fields inline, from the field tables SavedVariable's constructor is made
    from (NOTE [Field tables]); the generic form (used under hooks, and for errors) calls it."""
    parts = [_SAVE_EXPR[kind].format(i) for kind, i in how]
    generic = "(" + "".join(p + ", " for p in parts) + ")"
    lines = ["def save(args, outs):",
             "    if _state.saved_hooks:",
             f"        return {generic}"]
    for j, (kind, i) in enumerate(how):
        if kind == _ARG_TENSOR:
            # an input is kept as the tensor itself
            lines += [f"    a = args[{i}]",
                      "    vc = a._version_counter if a.__class__ is _T else None",
                      "    if vc is not None:",
                      f"        s{j} = _new(_SV)",
                      *SAVED_TENSOR_FIELDS.lines(f"s{j}", _SAVED_INPUT, indent="        "),
                      "    else:",
                      f"        s{j} = {parts[j]}"]
        elif kind == _OUTPUT:
            # an output keeps its array and counter, not itself (NOTE [Saving without cycles])
            lines += [f"    a = outs[{i}]",
                      "    vc = a._version_counter",
                      "    if vc is not None and a._grad_fn is not None:",
                      f"        s{j} = _new(_SV)",
                      *SAVED_ARRAY_FIELDS.lines(f"s{j}", _SAVED_INPUT, indent="        "),
                      "    else:",
                      f"        s{j} = {parts[j]}"]
        elif kind == _SHAPE:
            lines += [f"    a = args[{i}]",
                      f"    s{j} = a._data.shape if a.__class__ is _T else _shape(a)"]
        else:
            lines.append(f"    s{j} = {parts[j]}")
    lines.append("    return (" + "".join(f"s{j}, " for j in range(len(how))) + ")")
    return compile_function("save", lines, dict(_SAVE_NS), *label)


# the inline save's locals for SAVED_TENSOR_FIELDS / SAVED_ARRAY_FIELDS (NOTE [Field tables])
_SAVED_INPUT = {"tensor": "a", "version": "vc.version", "is_leaf": "a._grad_fn is None",
                "vc": "vc"}


_SAVE_NS = {**SAVED_TENSOR_FIELDS.names, "_arg": _save_arg, "_T": Tensor,
            "_state": state, "_shape": _shape_of,
            "_strides": _strides_of, "_dtype": _dtype_of}


def _promote(op: OpDef, args: tuple, call: list) -> None:
    """Cast array arguments to torch's result dtype before NumPy sees them.

    op.promote is "all" (pointwise: common dtype), or "float" (common dtype, then integers and
    bool go to the default float dtype: true division, exp, sqrt, ...).
    """
    idx = op.tensor_idx
    first = None
    same = True
    scalars = False
    for i in idx:
        a = call[i]
        if type(a) is np.ndarray:
            if first is None:
                first = a.dtype
            elif a.dtype != first:
                same = False
        elif a is not None:
            scalars = True
    if first is None:
        return
    if same and not scalars and op.promote == "all":
        return
    # float arrays with Python int/float scalars: NumPy's weak scalars give torch's dtype
    # (not for ml_dtypes' bfloat16/float8, where NumPy would upcast to float32)
    if same and first.kind == "f" and (not scalars or _scalars_ok(args, idx)):
        return
    target = D.result_type(*[args[i] for i in idx if args[i] is not None])
    if op.promote == "float" and target.category != 2:
        target = D.get_default_dtype()
    np_target = target.np
    for i in idx:
        a = call[i]
        if type(a) is np.ndarray:
            if a.dtype != np_target:
                call[i] = a.astype(np_target)
        elif a is not None and not isinstance(a, (list, tuple)):
            call[i] = _scalar_for(a, np_target)


_WEAK_SCALARS = (int, float, bool)


def _scalars_ok(args: tuple, idx: tuple) -> bool:
    """Only Python's own scalars are weak in NumPy 2 (NEP 50): a NumPy float64 scalar (a float
    subclass) would upcast a float32 array, so it goes through promotion and is converted."""
    for i in idx:
        a = args[i]
        if a is None or type(a) in _WEAK_SCALARS or isinstance(a, Tensor):
            continue
        return False
    return True


def _scalar_for(value, np_dtype):
    """A scalar in the computation dtype (keeps NumPy from upcasting; see DESIGN section 4)."""
    if np_dtype.kind in "fV":
        return np_dtype.type(value) if np_dtype.kind == "V" else float(value)
    if np_dtype.kind == "b":
        return bool(value)
    return int(value)


# --- declaring ops ----------------------------------------------------------------------------

_NAMESPACE: dict = {}  # public name -> function, gathered into `retrograd` by __init__
_METHODS: dict = {}


def op(schema: str, forward: Callable, *, grads: dict | None = None, node: str | None = None,
       promote: str | None = None, differentiable_outputs: tuple | None = None,
       function: str | bool = True, method: str | bool = True,
       array_grads: dict | None = None, jvp: Callable | None = None) -> Callable:
    """Declare an op; returns the callable that runs it with schema-ordered arguments.

    array_grads: optionally, the same formulas written on NumPy arrays (NOTE [Array formulas]).
    jvp: the forward derivative, only where it cannot be derived from `grads`
    (NOTE [Forward-mode derivatives]).

    function/method: True to expose under the schema's name (method on Tensor, function in the
    `retrograd` namespace), a string to expose under another name, False to keep it internal.
    """
    s = parse_schema(schema)
    if node is None and grads:
        node = _number_node(s)
    elif node is not None:
        _count_node(node, s)
    opdef = OpDef(s, forward, grads or {}, node, promote, differentiable_outputs, array_grads,
                  jvp)
    if opdef.name in OPS:
        raise ValueError(f"op {opdef.name} declared twice")
    OPS[opdef.name] = opdef
    doc = op_doc(opdef)
    fn = _make_function(opdef, first_name="input")
    fn.__doc__ = doc
    if function:
        fn.__name__ = fn.__qualname__ = function if isinstance(function, str) else s.name
        overloads.expose(_NAMESPACE, fn.__name__, fn, opdef, False)
    if method and s.args and s.args[0].name == "self" and s.args[0].is_tensor:
        m = _make_function(opdef, "self")
        m.__doc__ = doc
        m.__name__ = method if isinstance(method, str) else s.name
        m.__qualname__ = "Tensor." + m.__name__
        m.opdef = opdef
        overloads.expose(_METHODS, m.__name__, m, opdef, True)
    fn.opdef = opdef
    return fn


# node class prefix ("PowBackward") -> the number the next declaration of that name gets
_NODE_NUMBERS: dict = {}


def _node_prefix(name: str) -> str:
    return "".join(p.title() for p in name.split("_")) + "Backward"


def _number_node(s: Schema) -> str:
    """The next node name for an op of this name, numbered in declaration order as torch
    numbers derivatives.yaml's entries (NOTE [Overloads])."""
    prefix = _node_prefix(s.name)
    n = _NODE_NUMBERS.get(prefix, 0)
    _NODE_NUMBERS[prefix] = n + 1
    return f"{prefix}{n}"


def _count_node(node: str, s: Schema) -> None:
    """An explicitly numbered node name of the op's own name: later declarations of the name
    number after it."""
    prefix = node.rstrip("0123456789")
    number = node[len(prefix):]
    if number and prefix == _node_prefix(s.name):
        _NODE_NUMBERS[prefix] = max(_NODE_NUMBERS.get(prefix, 0), int(number) + 1)


def _make_function(opdef: OpDef, first_name: str) -> Callable:
    from retrograd._ops.fastpath import make_function

    return make_function(opdef, first_name, run, _promote)


def register(name: str, fn: Callable, *, method: bool | str = False) -> Callable:
    """Expose a hand-written function (a composite of ops) like a declared op; overloads of a
    declared op need none (NOTE [Overloads])."""
    _NAMESPACE[name] = fn
    if method:
        _METHODS[method if isinstance(method, str) else name] = fn
    return fn


_FUNCTIONAL: dict = {}  # name -> function, gathered into retrograd.nn.functional


def register_functional(name: str, fn: Callable) -> Callable:
    """Expose a function as retrograd.nn.functional.<name>."""
    _FUNCTIONAL[name] = fn
    return fn


def register_method(name: str, fn: Callable) -> Callable:
    _METHODS[name] = fn
    return fn


def install_methods() -> None:
    overloads.finish(_NAMESPACE, _METHODS)
    from retrograd._ops.torch_function import wrap_entries

    # NOTE [Torch function entries]
    wrap_entries(((_NAMESPACE, False), (_METHODS, True), (_FUNCTIONAL, False)))
    for name, fn in _METHODS.items():
        setattr(Tensor, name, fn)
    document_overloads(OPS, (_NAMESPACE, _METHODS))
