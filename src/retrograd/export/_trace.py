"""Tracing an nn.Module into the graph of an ExportedProgram.

NOTE [Exported programs]
export runs the module once under make_fx's recording mode (NOTE [Op-level tracing]) on copies
of its parameters, buffers and inputs, so neither the module nor the caller's tensors change
(forward may write buffers in place: BatchNorm's running statistics). The graph's placeholders
are, in torch's order and with torch's names: the parameters (`p_<name>`), the buffers
(`b_<name>`), the tensors forward made from Python data (`c_lifted_tensor_<i>`, held in
`constants`), then the user's inputs flattened from (args, kwargs) (`x`, `xs_0`, `d_a`, ...).
In-place writes stay in-place ops of the graph, as in torch's training-level graphs. A
non-tensor input is a placeholder too; the graph holds the value it was traced with, so calls
must pass the same value (a guard, as torch's).

NOTE [Exported dynamic dimensions]
The recording runs real NumPy code and sees sizes as numbers, so an op that takes a size (a
view's shape) has the traced number written into the graph. A dimension marked dynamic is
therefore traced a second time at another size (one more than the example's, or one less,
within the Dim's range); when both graphs are the same, no op took that size and calls may
vary it within its range. When they differ, a Dim or Dim.DYNAMIC is refused with a
UserError naming the dimension (the graph would compute wrong values at other sizes: torch,
whose tracer reasons about symbols, would accept it), and Dim.AUTO keeps the size static, as
torch's AUTO does when a dimension specializes.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

import numpy as np

from retrograd._dynamo.exc import UserError
from retrograd._tensor import Tensor, _wrap
from retrograd.export.dynamic_shapes import Dim, DimHint, bounds
from retrograd.export.graph_signature import (
    ConstantArgument,
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from retrograd.fx.experimental.proxy_tensor import _bind_input, _ProxyMode
from retrograd.fx.graph import Graph
from retrograd.fx.graph_module import GraphModule
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter
from retrograd.utils._pytree import tree_flatten, tree_unflatten


class Leaf:
    """One flattened user input: its placeholder name, the name guards use, its example value
    and (for a tensor) its dynamic dimensions {dim: Dim or DimHint}."""

    __slots__ = ("name", "path", "value", "dynamic")

    def __init__(self, name: str, path: str, value: Any) -> None:
        self.name = name
        self.path = path
        self.value = value
        self.dynamic: dict = {}


def user_leaves(mod: Module, args: tuple, kwargs: dict) -> list[Leaf]:
    """The user's inputs flattened in (args, kwargs) order, named as torch names them."""
    tops = _arg_names(mod, len(args))
    leaves: list[Leaf] = []
    for (name, path), value in zip(tops, args):
        _leaves_of(value, name, path, leaves)
    for key, value in kwargs.items():
        _leaves_of(value, key, key, leaves)
    return leaves


def _leaves_of(value: Any, name: str, path: str, out: list) -> None:
    if type(value) in (list, tuple) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        for i, v in enumerate(value):
            _leaves_of(v, f"{name}_{i}", f"{path}[{i}]", out)
    elif type(value) is dict:
        for k, v in value.items():
            _leaves_of(v, f"{name}_{k}", f"{path}[{k!r}]", out)
    else:
        out.append(Leaf(name, path, value))


# --- dynamic_shapes ------------------------------------------------------------------------


def mark_dynamic(leaves: list[Leaf], mod: Module, args: tuple, kwargs: dict,
                 dynamic_shapes: Any) -> None:
    """Read torch's dynamic_shapes (by argument name or position, mirroring the inputs) into
    each leaf's `dynamic`."""
    if dynamic_shapes is None:
        return
    leaf_iter = iter(leaves)
    tops = list(args) + list(kwargs.values())
    names = [name for name, _ in _arg_names(mod, len(args))] + list(kwargs)
    if isinstance(dynamic_shapes, dict):
        unknown = [k for k in dynamic_shapes if k not in names]
        if unknown:
            raise UserError(f"When `dynamic_shapes` is specified as a dict, its top-level keys "
                            f"must be the arg names {names} of `inputs`, but here they are "
                            f"{list(dynamic_shapes)}.")
        specs = [dynamic_shapes.get(n) for n in names]
    elif isinstance(dynamic_shapes, (list, tuple)):
        if len(dynamic_shapes) != len(tops):
            raise UserError(f"dynamic_shapes has {len(dynamic_shapes)} entries but the inputs "
                            f"have {len(tops)}")
        specs = list(dynamic_shapes)
    else:
        raise UserError(f"dynamic_shapes must be a dict, tuple or list, got "
                        f"{type(dynamic_shapes).__name__}")
    for value, spec in zip(tops, specs):
        _apply_spec(value, spec, leaf_iter)


def _arg_names(mod: Module, n: int) -> list[tuple[str, str]]:
    """(placeholder name, guard path) of forward's first n positional arguments: the
    parameter's name, or `rest_0` / `rest[0]` past them (`args_0` with no *args)."""
    try:
        params = list(inspect.signature(mod.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    var = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), "args")
    return [(positional[i], positional[i]) if i < len(positional) else
            (f"{var}_{i - len(positional)}", f"{var}[{i - len(positional)}]")
            for i in range(n)]


def _apply_spec(value: Any, spec: Any, leaf_iter: Any) -> None:
    if isinstance(value, (list, tuple)) or type(value) is dict:
        items = list(value.values()) if type(value) is dict else list(value)
        if spec is None:
            subs: list = [None] * len(items)
        elif type(value) is dict and isinstance(spec, dict):
            subs = [spec.get(k) for k in value]
        elif isinstance(spec, (list, tuple)) and len(spec) == len(items):
            subs = list(spec)
        else:
            raise UserError(f"dynamic_shapes entry {spec!r} does not match the structure of "
                            f"its input")
        for v, s in zip(items, subs):
            _apply_spec(v, s, leaf_iter)
        return
    leaf = next(leaf_iter)
    if spec is None:
        return
    if not isinstance(value, Tensor):
        raise UserError(f"dynamic_shapes gives dimensions for {leaf.path}, which is not a "
                        f"tensor")
    per_dim = spec.items() if isinstance(spec, dict) else enumerate(spec)
    for d, hint in per_dim:
        if hint is None or hint is DimHint.STATIC:
            continue
        if not isinstance(hint, (Dim, DimHint)):
            raise UserError(f"Unexpected dimension spec {hint!r} for {leaf.path}: use a Dim, "
                            f"Dim.AUTO, Dim.DYNAMIC or Dim.STATIC")
        if not -value.dim() <= d < value.dim():
            raise UserError(f"dynamic_shapes names dimension {d} of {leaf.path}, which has "
                            f"{value.dim()} dimensions")
        leaf.dynamic[d % value.dim()] = hint


def check_examples(leaves: list[Leaf]) -> None:
    """An example size outside its Dim's range is an error, as in torch."""
    for leaf in leaves:
        for d, hint in leaf.dynamic.items():
            lo, hi = bounds(hint)
            size = leaf.value.shape[d]
            if not lo <= size <= hi:
                upper = "int_oo" if hi == math.inf else hi
                raise UserError(f"{size} not in range [{lo}, {upper}] for {leaf.path}.shape[{d}]")


def _groups(leaves: list[Leaf]) -> list:
    """The dynamic dimensions, grouped by the Dim they share: [(hint, [(leaf, dim), ...])]."""
    groups: list = []
    for leaf in leaves:
        for d, hint in leaf.dynamic.items():
            for g in groups:
                if isinstance(hint, Dim) and g[0] is hint:
                    g[1].append((leaf, d))
                    break
            else:
                groups.append((hint, [(leaf, d)]))
    return groups


def _probe_size(hint: Any, size: int) -> int | None:
    lo, hi = bounds(hint)
    for cand in (size + 1, size - 1):
        if max(lo, 2) <= cand <= hi:
            return cand
    return None


def _resized(t: Tensor, d: int, n: int) -> Tensor:
    """t with dimension d of size n, its slices repeated cyclically (valid indices stay valid)."""
    arr = np.take(t._data, np.arange(n) % t.shape[d], axis=d)
    return _wrap(arr).requires_grad_(t.requires_grad) if t.requires_grad else _wrap(arr)


def settle_dynamic(mod: Module, args: tuple, kwargs: dict, leaves: list[Leaf],
                   code: str) -> None:
    """Keep the dynamic dimensions the graph does not depend on (NOTE [Exported dynamic
    dimensions]); refuse a Dim the graph fixed, make an AUTO one static."""
    for hint, members in _groups(leaves):
        size = members[0][0].value.shape[members[0][1]]
        for leaf, d in members[1:]:
            if leaf.value.shape[d] != size:
                raise UserError(f"{members[0][0].path}.size()[{members[0][1]}] and "
                                f"{leaf.path}.size()[{d}] share a Dim but have sizes {size} "
                                f"and {leaf.value.shape[d]}")
        probe = _probe_size(hint, size) if size >= 2 else None
        same = False
        if probe is not None:
            values: dict = {}  # leaf index -> its value at the probe size
            for leaf, d in members:
                i = leaves.index(leaf)
                values[i] = _resized(values.get(i, leaf.value), d, probe)
            flat, spec = tree_flatten((args, kwargs))
            probe_args, probe_kwargs = tree_unflatten(
                [values.get(i, v) for i, v in enumerate(flat)], spec)
            try:
                same = trace(mod, probe_args, probe_kwargs, leaves)[0].code == code
            except Exception:  # noqa: BLE001 - a failure at the probe size is a fixed size
                same = False
        if same:
            continue
        if hint is DimHint.AUTO:
            for leaf, d in members:
                del leaf.dynamic[d]
            continue
        name = hint.__name__ if isinstance(hint, Dim) else "Dim.DYNAMIC"
        leaf, d = members[0]
        raise UserError(
            f"Constraints violated ({name})! retrograd.export traces with concrete sizes, "
            f"and the traced graph depends on {leaf.path}.size()[{d}] = {size}: it would "
            f"compute wrong values at other sizes. Mark it static (Dim.STATIC), or use "
            f"Dim.AUTO to let export keep it static where it must.")


# --- tracing ---------------------------------------------------------------------------------


def _copy(t: Tensor) -> Tensor:
    c = t.detach().clone()
    if isinstance(t, Parameter):
        return Parameter(c, requires_grad=t.requires_grad)
    return c.requires_grad_(t.requires_grad) if t.requires_grad else c


def non_persistent_buffers(mod: Module) -> set:
    names: set = set()
    for prefix, sub in mod.named_modules(remove_duplicate=False):
        for b in getattr(sub, "_non_persistent_buffers_set", ()):
            names.add(f"{prefix}.{b}" if prefix else b)
    return names


def trace(mod: Module, args: tuple, kwargs: dict, leaves: list[Leaf]) -> tuple:
    """(graph_module, signature, constants, in_spec, out_spec): NOTE [Exported programs].
    `leaves` names the user's inputs (user_leaves)."""
    from retrograd._functorch.functional_call import functional_call

    params = list(mod.named_parameters())
    buffers = list(mod.named_buffers())
    transient = non_persistent_buffers(mod)
    graph = Graph()
    root = Module()
    mode = _ProxyMode(graph, root, {})
    specs: list[InputSpec] = []
    copies: dict = {}
    for prefix, kind, named in (("p_", InputKind.PARAMETER, params),
                                ("b_", InputKind.BUFFER, buffers)):
        for name, t in named:
            c = copies[name] = _copy(t)
            node = graph.placeholder(prefix + name.replace(".", "_"))
            _bind_input(mode, graph, c, node)
            persistent = None if kind is InputKind.PARAMETER else name not in transient
            specs.append(InputSpec(kind, TensorArgument(node.target), name, persistent))
    flat, in_spec = tree_flatten((args, kwargs))
    flat = [_copy(v) if isinstance(v, Tensor) else v for v in flat]
    user_nodes = []
    for leaf, value in zip(leaves, flat):
        node = graph.placeholder(leaf.name)
        _bind_input(mode, graph, value, node)
        user_nodes.append(node)
        # (a placeholder's target is the argument's name; its node name may differ: `input`
        # is a builtin, so the code calls it input_1, as torch's does)
        specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(node.target)
                               if isinstance(value, Tensor) else
                               ConstantArgument(node.target, value), None))
    call_args, call_kwargs = tree_unflatten(flat, in_spec)
    with mode:
        out = functional_call(mod, copies, tuple(call_args), dict(call_kwargs))
    flat_out, out_spec = tree_flatten(out)
    graph.output(tuple(mode.to_arg(o) for o in flat_out))
    constants = _lift_constants(graph, root, specs, user_nodes)
    out_specs = []
    for node_arg, value in zip(graph.output_node().args[0], flat_out):
        arg = TensorArgument(node_arg.name) if isinstance(value, Tensor) else \
            ConstantArgument("", value)
        out_specs.append(OutputSpec(OutputKind.USER_OUTPUT, arg, None))
    gm = GraphModule(root, graph)
    return gm, ExportGraphSignature(specs, out_specs), constants, in_spec, out_spec


def _lift_constants(graph: Graph, root: Module, specs: list, user_nodes: list) -> dict:
    """Tensors forward made from Python data (get_attr constants of the recording) become
    placeholders before the user's inputs, as torch lifts them."""
    constants: dict = {}
    first_user = user_nodes[0] if user_nodes else graph.output_node()
    where = len(specs) - len(user_nodes)
    for node in list(graph.nodes):
        if node.op != "get_attr":
            continue
        name = f"lifted_tensor_{len(constants)}"
        constants[name] = getattr(root, node.target)
        with graph.inserting_before(first_user):
            ph = graph.placeholder(f"c_{name}")
        ph.meta.update(node.meta)
        node.replace_all_uses_with(ph)
        graph.erase_node(node)
        delattr(root, node.target)
        specs.insert(where, InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(ph.target),
                                      name))
        where += 1
    return constants


def retrace(gm: GraphModule, values: list, decompositions: dict) -> GraphModule:
    """gm's graph traced again on copies of `values` (one per placeholder, names kept), each
    op in `decompositions` replaced by the ops of its decomposition."""
    names = [n.target for n in gm.graph.nodes if n.op == "placeholder"]
    graph = Graph()
    root = Module()
    mode = _ProxyMode(graph, root, decompositions)
    copies = [_copy(v) if isinstance(v, Tensor) else v for v in values]
    for name, value in zip(names, copies):
        _bind_input(mode, graph, value, graph.placeholder(name))
    with mode:
        out = gm(*copies)
    graph.output(mode.to_arg(out))
    if any(n.op == "get_attr" for n in graph.nodes):
        raise RuntimeError("run_decompositions: a decomposition made a tensor from Python "
                           "data, which the exported graph cannot hold as an input")
    return GraphModule(root, graph)
