"""retrograd.export.save / load: an ExportedProgram in one file.

The file is a retrograd.save archive of plain data: the graph as JSON (each node's opcode,
name, target and arguments; an op is written as its name, `aten.addmm.default`, and read back
by looking that name up in retrograd.ops.aten, never by running code), the signature, the
input structure and guards, and the tensors (state_dict, constants, example inputs). Loading
reads it with weights_only=True, so a file cannot make load run anything.
"""

from __future__ import annotations

import json
import math
import operator
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd._tensor import Tensor, _wrap
from retrograd.export.dynamic_shapes import Dim, DimHint
from retrograd.export.exported_program import ExportedProgram, InputGuards, make_parameters
from retrograd.export.graph_signature import (
    ConstantArgument,
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)
from retrograd.fx.experimental.proxy_tensor import TensorMetadata
from retrograd.fx.graph import Graph
from retrograd.fx.graph_module import GraphModule
from retrograd.fx.node import Node
from retrograd.nn.modules.module import Module
from retrograd.utils._pytree import TreeSpec

FORMAT = "retrograd.export"
VERSION = 1
_CONTAINERS = {"tuple": tuple, "list": list, "dict": dict}


# --- values ---------------------------------------------------------------------------------


def _encode(value: Any) -> Any:
    if isinstance(value, Node):
        return {"node": value.name}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {"dict": [[k, _encode(v)] for k, v in value.items()]}
    if isinstance(value, D.dtype):
        return {"dtype": str(value).removeprefix("retrograd.")}
    raise ValueError(f"retrograd.export.save: cannot save a graph argument of type "
                     f"{type(value).__name__} ({value!r})")


def _decode(value: Any, nodes: dict) -> Any:
    if isinstance(value, list):
        return [_decode(v, nodes) for v in value]
    if not isinstance(value, dict):
        return value
    (kind, payload), = value.items()
    if kind == "node":
        return nodes[payload]
    if kind == "float":
        return float(payload)
    if kind == "tuple":
        return tuple(_decode(v, nodes) for v in payload)
    if kind == "dict":
        return {k: _decode(v, nodes) for k, v in payload}
    if kind == "dtype":
        return getattr(D, payload)
    raise ValueError(f"retrograd.export.load: unknown value kind {kind!r}")


def _target_name(node: Node) -> Any:
    if node.op != "call_function":
        return node.target
    if node.target is operator.getitem:
        return "getitem"
    return str(node.target)  # aten.<name>.<overload>


def _resolve(name: str) -> Any:
    """An op from its printed name, by attribute lookup in retrograd.ops (no code runs)."""
    if name == "getitem":
        return operator.getitem
    from retrograd import ops

    namespace, _, rest = name.partition(".")
    if namespace != "aten":
        raise ValueError(f"retrograd.export.load: unknown op {name!r}")
    packet, _, overload = rest.partition(".")
    try:
        return getattr(getattr(ops.aten, packet), overload)
    except AttributeError:
        raise ValueError(f"retrograd.export.load: unknown op {name!r}") from None


def _meta(node: Node) -> Any:
    val = node.meta.get("val")
    if isinstance(val, Tensor):
        return {"shape": list(val.shape), "dtype": str(val.dtype).removeprefix("retrograd.")}
    return None


def _restore_meta(node: Node, meta: Any) -> None:
    if meta is None:
        return
    dtype = getattr(D, meta["dtype"])
    shape = tuple(meta["shape"])
    # the geometry only: a read-only broadcast of one zero
    node.meta["val"] = _wrap(np.broadcast_to(np.zeros((), dtype.np), shape))
    node.meta["tensor_meta"] = TensorMetadata(shape, dtype, False, ())


def _graph_json(graph: Graph) -> str:
    nodes = [{"op": n.op, "name": n.name, "target": _target_name(n),
              "args": _encode(n.args), "kwargs": _encode(n.kwargs), "meta": _meta(n)}
             for n in graph.nodes]
    return json.dumps(nodes)


def _graph_from_json(text: str) -> Graph:
    graph = Graph()
    nodes: dict = {}
    for entry in json.loads(text):
        op = entry["op"]
        args = _decode(entry["args"], nodes)
        kwargs = _decode(entry["kwargs"], nodes)
        if op == "placeholder":
            node = graph.placeholder(entry["target"])
        elif op == "output":
            node = graph.output(args[0])
        elif op == "call_function":
            node = graph.create_node(op, _resolve(entry["target"]), tuple(args), kwargs,
                                     name=entry["name"])
        else:
            raise ValueError(f"retrograd.export.load: unexpected node kind {op!r}")
        _restore_meta(node, entry["meta"])
        nodes[entry["name"]] = node
    return graph


# --- structure ------------------------------------------------------------------------------


def _spec_data(spec: TreeSpec) -> Any:
    if spec.type is None:
        return None
    name = next((k for k, v in _CONTAINERS.items() if v is spec.type), None)
    if name is None:
        raise ValueError(f"retrograd.export.save: cannot save inputs or outputs held in a "
                         f"{spec.type.__name__}; use a tuple, list or dict")
    return [name, list(spec.context) if spec.context is not None else None,
            [_spec_data(c) for c in spec.children_specs]]


def _spec_from(data: Any) -> TreeSpec:
    if data is None:
        return TreeSpec(None, None, [])
    name, context, children = data
    return TreeSpec(_CONTAINERS[name], context, [_spec_from(c) for c in children])


def _hint_data(hint: Any) -> Any:
    if isinstance(hint, Dim):
        return ["Dim", hint.__name__, hint.min, None if hint.max == math.inf else hint.max]
    return ["hint", hint.value]


def _hint_from(data: list) -> Any:
    if data[0] == "Dim":
        return Dim(data[1], min=data[2], max=data[3])
    return DimHint(data[1])


def _arg_data(arg: Any) -> list:
    if isinstance(arg, TensorArgument):
        return ["tensor", arg.name]
    return ["constant", arg.name, _encode(arg.value)]


def _arg_from(data: list) -> Any:
    if data[0] == "tensor":
        return TensorArgument(data[1])
    return ConstantArgument(data[1], _decode(data[2], {}))


# --- the file -------------------------------------------------------------------------------


def save(ep: ExportedProgram, f: Any, *, extra_files: dict | None = None,
         opset_version: dict | None = None, pickle_protocol: int = 2) -> None:
    """Write `ep` to a path or a binary file object."""
    from retrograd.serialization import save as save_archive

    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"The 'ep' parameter must be an instance of 'ExportedProgram', got "
                        f"'{type(ep).__name__}' instead.")
    sig = ep.graph_signature
    guards = ep._guards
    payload = {
        "format": FORMAT, "version": VERSION,
        "graph": _graph_json(ep.graph),
        "inputs": [[s.kind.name, _arg_data(s.arg), s.target, s.persistent]
                   for s in sig.input_specs],
        "outputs": [[s.kind.name, _arg_data(s.arg), s.target] for s in sig.output_specs],
        "in_spec": json.dumps(_spec_data(guards.in_spec)),
        "out_spec": json.dumps(_spec_data(ep._out_spec)),
        "guards": json.dumps([[path, _encode(constant), shape, [[d, _hint_data(h)]
                                                                for d, h in dynamic.items()]]
                              for path, constant, shape, dynamic in guards.leaves]),
        "state_dict": {k: v.detach() for k, v in ep.state_dict.items()},
        "requires_grad": [k for k, v in ep.state_dict.items() if v.requires_grad],
        "constants": dict(ep.constants),
        "example_inputs": ep.example_inputs,
        "extra_files": dict(extra_files or {}),
    }
    save_archive(payload, f)


def load(f: Any, *, extra_files: dict | None = None,
         expected_opset_version: dict | None = None) -> ExportedProgram:
    """Read an ExportedProgram written by save."""
    from retrograd.serialization import load as load_archive

    payload = load_archive(f, weights_only=True)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise RuntimeError("retrograd.export.load: the file is not an exported program "
                           "written by retrograd.export.save")
    if payload["version"] != VERSION:
        raise RuntimeError(f"retrograd.export.load: format version {payload['version']} is "
                           f"not supported (this retrograd reads version {VERSION})")
    graph = _graph_from_json(payload["graph"])
    inputs = [InputSpec(InputKind[k], _arg_from(a), t, p) for k, a, t, p in payload["inputs"]]
    outputs = [OutputSpec(OutputKind[k], _arg_from(a), t) for k, a, t in payload["outputs"]]
    signature = ExportGraphSignature(inputs, outputs)
    state = dict(payload["state_dict"])
    for name in payload["requires_grad"]:
        state[name].requires_grad_(True)
    make_parameters(state, list(signature.parameters))
    guards = InputGuards(_spec_from(json.loads(payload["in_spec"])), [
        (path, _decode(constant, {}), None if shape is None else tuple(shape),
         {d: _hint_from(h) for d, h in dynamic})
        for path, constant, shape, dynamic in json.loads(payload["guards"])])
    if extra_files is not None:
        for k in extra_files:
            extra_files[k] = payload["extra_files"].get(k, "")
    gm = GraphModule(Module(), graph)
    return ExportedProgram(gm, signature, state, dict(payload["constants"]), guards,
                           _spec_from(json.loads(payload["out_spec"])),
                           payload["example_inputs"])
