"""retrograd.export.graph_signature: what each input and output of an exported graph is
(torch.export.graph_signature's names and printing)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto
from typing import Any

__all__ = ["ConstantArgument", "ExportGraphSignature", "InputKind", "InputSpec", "OutputKind",
           "OutputSpec", "TensorArgument"]


class InputKind(Enum):
    USER_INPUT = auto()
    PARAMETER = auto()
    BUFFER = auto()
    CONSTANT_TENSOR = auto()
    CUSTOM_OBJ = auto()
    TOKEN = auto()


class OutputKind(Enum):
    USER_OUTPUT = auto()
    LOSS_OUTPUT = auto()
    BUFFER_MUTATION = auto()
    PARAMETER_MUTATION = auto()
    GRADIENT_TO_PARAMETER = auto()
    GRADIENT_TO_USER_INPUT = auto()
    USER_INPUT_MUTATION = auto()
    TOKEN = auto()


@dataclass
class TensorArgument:
    name: str


@dataclass
class ConstantArgument:
    name: str
    value: Any


@dataclass
class InputSpec:
    kind: InputKind
    arg: TensorArgument | ConstantArgument
    target: str | None
    persistent: bool | None = None

    def __str__(self) -> str:
        text = f"{self.arg.name}: {self.kind.name}"
        if self.target is not None:
            text += f" target='{self.target}'"
        if self.persistent is not None:
            text += f" persistent={self.persistent}"
        return text


@dataclass
class OutputSpec:
    kind: OutputKind
    arg: TensorArgument | ConstantArgument
    target: str | None

    def __str__(self) -> str:
        text = f"{self.arg.name}: {self.kind.name}"
        return text if self.target is None else f"{text} target='{self.target}'"


@dataclass
class ExportGraphSignature:
    """The graph's placeholders in order (parameters, buffers, lifted constants, then the
    user's inputs flattened) and its outputs."""

    input_specs: list[InputSpec]
    output_specs: list[OutputSpec]

    def _names(self, kind: Any, specs: list) -> tuple:
        """The specs of one kind: a user value by its name (its value for a constant), state
        by its target."""
        return tuple((s.arg.name if isinstance(s.arg, TensorArgument) else s.arg.value)
                     if s.kind in (InputKind.USER_INPUT, OutputKind.USER_OUTPUT) else s.target
                     for s in specs if s.kind is kind)

    @property
    def parameters(self) -> tuple:
        return self._names(InputKind.PARAMETER, self.input_specs)

    @property
    def buffers(self) -> tuple:
        return self._names(InputKind.BUFFER, self.input_specs)

    @property
    def non_persistent_buffers(self) -> tuple:
        return tuple(s.target for s in self.input_specs
                     if s.kind is InputKind.BUFFER and s.persistent is False)

    @property
    def lifted_tensor_constants(self) -> tuple:
        return self._names(InputKind.CONSTANT_TENSOR, self.input_specs)

    @property
    def user_inputs(self) -> tuple:
        return self._names(InputKind.USER_INPUT, self.input_specs)

    @property
    def user_outputs(self) -> tuple:
        return self._names(OutputKind.USER_OUTPUT, self.output_specs)

    def _to_target(self, kind: InputKind) -> dict:
        return {s.arg.name: s.target for s in self.input_specs if s.kind is kind}

    @property
    def inputs_to_parameters(self) -> dict:
        return self._to_target(InputKind.PARAMETER)

    @property
    def inputs_to_buffers(self) -> dict:
        return self._to_target(InputKind.BUFFER)

    @property
    def inputs_to_lifted_tensor_constants(self) -> dict:
        return self._to_target(InputKind.CONSTANT_TENSOR)

    @property
    def buffers_to_mutate(self) -> dict:
        # in-place writes to buffers stay in-place ops of the graph, as in torch's
        # training-level graphs, so no output stands for one
        return {}

    def __str__(self) -> str:
        inputs = "\n".join(f"    {s}" for s in self.input_specs)
        outputs = "\n".join(f"    {s}" for s in self.output_specs)
        return f"\n    # inputs\n{inputs}\n\n    # outputs\n{outputs}\n"
