"""ExportedProgram: the traced graph of a module with its state, signature and input guards
(torch.export.ExportedProgram; NOTE [Exported programs] in retrograd.export._trace)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from retrograd._tensor import Tensor
from retrograd.export.dynamic_shapes import Dim, ValueRange, bounds
from retrograd.export.graph_signature import (
    ExportGraphSignature,
    InputKind,
    OutputSpec,
    TensorArgument,
)
from retrograd.fx.graph import Graph
from retrograd.fx.graph_module import GraphModule
from retrograd.nn.parameter import Parameter
from retrograd.utils._pytree import TreeSpec, tree_flatten, tree_unflatten

CALL_DIRECTLY = ("Unable to call ExportedProgram directly. You should use "
                 "`exported_program.module()` instead.")


def spec_key(spec: TreeSpec) -> Any:
    """A TreeSpec as a comparable value (the structure of a call's inputs)."""
    if spec.type is None:
        return None
    context = tuple(spec.context) if isinstance(spec.context, list) else spec.context
    return (spec.type, context, tuple(spec_key(c) for c in spec.children_specs))


class InputGuards:
    """What every call of the exported module must satisfy: the traced input structure, each
    tensor's static sizes and dynamic ranges, each non-tensor input's traced value."""

    def __init__(self, in_spec: TreeSpec, leaves: list) -> None:
        """leaves: per flattened input, (guard path, traced value of a non-tensor, traced
        shape of a tensor, its dynamic dimensions {dim: Dim or DimHint})."""
        self.in_spec = in_spec
        self.leaves = leaves

    @classmethod
    def of_leaves(cls, in_spec: TreeSpec, leaves: list) -> InputGuards:
        """The guards of export's Leaf records."""
        entries = []
        for lf in leaves:
            tensor = isinstance(lf.value, Tensor)
            entries.append((lf.path, None if tensor else lf.value,
                            tuple(lf.value.shape) if tensor else None, dict(lf.dynamic)))
        return cls(in_spec, entries)

    def flatten(self, args: tuple, kwargs: dict) -> list:
        if set(kwargs) == set(self.in_spec.children_specs[1].context or ()):
            kwargs = {k: kwargs[k] for k in self.in_spec.children_specs[1].context}
        flat, spec = tree_flatten((args, kwargs))
        if spec_key(spec) != spec_key(self.in_spec):
            raise ValueError(
                f"Trying to flatten user inputs with exported input tree spec: \n"
                f"{self.in_spec}\nbut actually got inputs with tree spec of: \n{spec}.\n"
                f"Please check that the inputs have the same number and type of args and "
                f"kwargs as the ones you used when tracing.")
        for value, (path, constant, shape, dynamic) in zip(flat, self.leaves):
            if shape is None:
                if not (type(value) is type(constant) and value == constant):
                    raise AssertionError(f"Guard failed: {path} == {constant!r}")
                continue
            if not isinstance(value, Tensor):
                raise AssertionError(f"Guard failed: {path} is a Tensor")
            if value.dim() != len(shape):
                raise AssertionError(f"Guard failed: {path}.dim() == {len(shape)}")
            for d, size in enumerate(shape):
                got = value.shape[d]
                hint = dynamic.get(d)
                if hint is None:
                    if got != size:
                        raise AssertionError(f"Guard failed: {path}.size()[{d}] == {size}")
                    continue
                lo, hi = bounds(hint)
                if got < max(lo, 2):  # (a dimension kept dynamic was traced at 2 or more)
                    raise AssertionError(f"Guard failed: {path}.size()[{d}] >= {max(lo, 2)}")
                if got > hi:
                    raise AssertionError(f"Guard failed: {path}.size()[{d}] <= {hi}")
        return flat

    def range_constraints(self) -> dict:
        out: dict = {}
        for _, _, _, dynamic in self.leaves:
            for hint in dynamic.values():
                name = hint.__name__ if isinstance(hint, Dim) else f"s{len(out)}"
                lo, hi = bounds(hint)
                out.setdefault(name, ValueRange(max(lo, 2), hi))
        return out


class ExportedProgram:
    """A module's forward as one graph of retrograd ops, its parameters and buffers lifted to
    inputs (see `graph_signature`); `module()` gives back a callable Module."""

    def __init__(self, graph_module: GraphModule, signature: ExportGraphSignature,
                 state_dict: dict, constants: dict, guards: InputGuards, out_spec: TreeSpec,
                 example_inputs: tuple) -> None:
        self._graph_module = graph_module
        self._graph_signature = signature
        self._state_dict = state_dict
        self._constants = constants
        self._guards = guards
        self._out_spec = out_spec
        self._example_inputs = example_inputs

    # the parts torch's ExportedProgram exposes
    @property
    def graph_module(self) -> GraphModule:
        return self._graph_module

    @property
    def graph(self) -> Graph:
        return self._graph_module.graph

    @property
    def graph_signature(self) -> ExportGraphSignature:
        return self._graph_signature

    @property
    def state_dict(self) -> dict:
        return self._state_dict

    @property
    def constants(self) -> dict:
        return self._constants

    @property
    def example_inputs(self) -> tuple:
        return self._example_inputs

    @property
    def range_constraints(self) -> dict:
        return self._guards.range_constraints()

    @property
    def call_spec(self) -> tuple:
        return self._guards.in_spec, self._out_spec

    def parameters(self) -> Iterator[Tensor]:
        for _, p in self.named_parameters():
            yield p

    def named_parameters(self) -> Iterator[tuple[str, Tensor]]:
        for name in self._graph_signature.parameters:
            yield name, self._state_dict[name]

    def buffers(self) -> Iterator[Tensor]:
        for _, b in self.named_buffers():
            yield b

    def named_buffers(self) -> Iterator[tuple[str, Tensor]]:
        for spec in self._graph_signature.input_specs:
            if spec.kind is InputKind.BUFFER and spec.target is not None:
                yield spec.target, self._value_of(spec)

    def _value_of(self, spec: Any) -> Tensor:
        """A lifted input's tensor: parameters and persistent buffers are state, non-persistent
        buffers and lifted tensors are constants (as torch keeps them)."""
        if spec.kind is InputKind.PARAMETER or (spec.kind is InputKind.BUFFER
                                                and spec.persistent):
            return self._state_dict[spec.target]
        return self._constants[spec.target]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(CALL_DIRECTLY)

    def _lifted_values(self) -> list:
        """The values of the placeholders before the user's inputs, in order."""
        return [self._value_of(spec) for spec in self._graph_signature.input_specs
                if spec.kind is not InputKind.USER_INPUT]

    def module(self) -> GraphModule:
        """A GraphModule that holds the state (the same tensors as `state_dict`) and takes the
        module's own inputs: they are checked against the guards, flattened, run through the
        graph, and the outputs rebuilt in forward's structure."""
        graph = Graph()
        env: dict = {}
        attrs: dict = {}
        specs = {s.arg.name: s for s in self._graph_signature.input_specs}
        for node in self.graph.nodes:
            spec = specs.get(node.target) if node.op == "placeholder" else None
            if spec is not None and spec.target is not None:  # lifted state or a constant
                # a lifted tensor is held as `_lifted_tensor_<i>`, state by its own name
                target = f"_{spec.target}" if spec.kind is InputKind.CONSTANT_TENSOR \
                    else spec.target
                attrs[target] = self._value_of(spec)
                env[node] = graph.get_attr(target)
                env[node].meta.update(node.meta)
            else:
                env[node] = graph.node_copy(node, lambda n: env[n])
        gm = _ExportedModule(attrs, graph)
        for name in self._graph_signature.lifted_tensor_constants:
            # a lifted tensor is an attribute, not state (as in torch)
            value = gm._buffers.pop(f"_{name}")
            object.__setattr__(gm, f"_{name}", value)
        gm._guards = self._guards
        gm._out_spec = self._out_spec
        for spec in self._graph_signature.input_specs:
            if spec.kind is InputKind.BUFFER and spec.persistent is False and spec.target:
                *path, field = spec.target.split(".")
                owner = gm.get_submodule(".".join(path))
                owner._non_persistent_buffers_set.add(field)
        return gm

    def run_decompositions(self, decomp_table: dict | None = None,
                           decompose_custom_triton_ops: bool = False) -> ExportedProgram:
        """A new ExportedProgram whose ops given in decomp_table are replaced by the ops of
        their decompositions. retrograd's graphs are already made of its registry's ops, so
        without a table the graph is the same."""
        from retrograd.export._trace import retrace

        gm = self._graph_module
        if decomp_table:
            values = self._lifted_values() + tree_flatten(self._example_inputs)[0]
            gm = retrace(gm, values, dict(decomp_table))
        else:
            gm = copy.deepcopy(gm)
        outputs = [OutputSpec(s.kind, TensorArgument(n.name) if isinstance(
            s.arg, TensorArgument) else s.arg, s.target) for s, n in zip(
            self._graph_signature.output_specs, gm.graph.output_node().args[0])]
        signature = ExportGraphSignature(list(self._graph_signature.input_specs), outputs)
        return ExportedProgram(gm, signature, self._state_dict, self._constants,
                               self._guards, self._out_spec, self._example_inputs)

    def validate(self) -> None:
        placeholders = [n.target for n in self.graph.nodes if n.op == "placeholder"]
        expected = [s.arg.name for s in self._graph_signature.input_specs]
        if placeholders != expected:
            raise AssertionError(f"graph inputs {placeholders} do not match the signature's "
                                 f"{expected}")

    def __str__(self) -> str:
        code = self._graph_module.print_readable(print_output=False)
        body = "\n".join(("    " + line) if line else line for line in code.split("\n"))
        return (f"ExportedProgram:\n{body}\nGraph signature: {self._graph_signature}\n"
                f"Range constraints: {self.range_constraints}\n")

    def __repr__(self) -> str:
        return self.__str__()


class _ExportedModule(GraphModule):
    """ExportedProgram.module(): the graph with the state as attributes, called with forward's
    own inputs."""

    _guards: InputGuards
    _out_spec: TreeSpec

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        flat = self._guards.flatten(args, kwargs)
        out = super().__call__(*flat)
        return tree_unflatten(list(out), self._out_spec)

    def __deepcopy__(self, memo: dict) -> GraphModule:
        new = super().__deepcopy__(memo)
        new._guards, new._out_spec = self._guards, self._out_spec
        return new


def make_parameters(state: dict, params: list) -> None:
    """The values state holds for parameter names are Parameters (as loaded from a file)."""
    for name in params:
        t = state[name]
        if not isinstance(t, Parameter):
            state[name] = Parameter(t, requires_grad=t.requires_grad)
