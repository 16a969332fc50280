"""RNN, LSTM and GRU: stacked, optionally bidirectional recurrent layers.

Parameters, their names (weight_ih_l0, bias_hh_l1_reverse, weight_hr_l0 ...), shapes, order and
init are torch's, so torch state_dicts load. The recurrence is composed from retrograd ops one
time step at a time (rnn_cell's steps); the input projection of a whole layer is one matmul.

The layers run through torch.lstm / torch.gru / torch.rnn_tanh / torch.rnn_relu
(modules/recurrence.py), as torch's run through _VF: padded and packed inputs alike
(NOTE [Packed recurrence]).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn import init
from retrograd.nn.modules.module import Module
from retrograd.nn.modules.rnn_cell import (  # the cells live beside the layers, as in torch
    GRUCell,
    LSTMCell,
    RNNCell,
    RNNCellBase,
)
from retrograd.nn.parameter import Parameter
from retrograd.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

F = nn.functional
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_RECURRENCES = {"RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu", "LSTM": "lstm", "GRU": "gru"}


class RNNBase(Module):
    """The stack of recurrent layers shared by RNN, LSTM and GRU."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first",
                     "dropout", "bidirectional", "proj_size"]

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        _check_args(dropout, num_layers, bias, batch_first, input_size, hidden_size, proj_size)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(retrograd.empty(shape, device=device,
                                                                  dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op: there is no fused weight buffer to compact."""

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # --- argument checks (torch's messages) ---
    def check_input(self, input: Tensor, batch_sizes: Any) -> None:
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Any) -> tuple[int, int, int]:
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * directions, batch, size)

    def check_hidden_size(self, hx: Tensor, expected: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected):
            raise RuntimeError(msg.format(expected, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Any) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    # --- the computation ---
    def _zeros_state(self, batch: int, dtype: Any) -> tuple:
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        h = retrograd.zeros(self.num_layers * directions, batch, size, dtype=dtype)
        if self.mode != "LSTM":
            return (h,)
        return h, retrograd.zeros(self.num_layers * directions, batch, self.hidden_size,
                                  dtype=dtype)

    def _run(self, *leading: Any, hx: tuple, tail: tuple = ()) -> tuple[Any, tuple]:
        """All layers through the namespace's recurrence, as torch's modules call _VF: leading
        is (input,) or, packed, (data, batch_sizes); hx is (h0,) or (h0, c0), each (L*D, B, H).
        Returns the output and the final states."""
        recurrence = getattr(retrograd, _RECURRENCES[self.mode])
        out, *final = recurrence(*leading, hx if self.mode == "LSTM" else hx[0],
                                 self._flat_weights, self.bias, self.num_layers,
                                 float(self.dropout), self.training, self.bidirectional, *tail)
        return out, tuple(final)

    def _forward(self, input: Any, hx: Any) -> tuple[Any, Any]:
        lstm = self.mode == "LSTM"
        if isinstance(input, PackedSequence):
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            if hx is None:
                state = self._zeros_state(int(batch_sizes_t[0]), data.dtype)
            else:
                state = self.permute_hidden(hx if lstm else (hx,), sorted_indices)
            self._check_state(data, state, batch_sizes_t)
            out, final = self._run(data, batch_sizes_t, hx=state)
            final = self.permute_hidden(final, unsorted_indices)
            packed = PackedSequence(out, batch_sizes_t, sorted_indices, unsorted_indices)
            return packed, (final if lstm else final[0])
        if input.dim() not in (2, 3):
            name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
            suffix = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{suffix}")
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
        state = self._given_state(hx, batched, lstm)
        if state is None:
            batch = input.size(0) if self.batch_first else input.size(1)
            state = self._zeros_state(batch, input.dtype)
        self._check_state(input, state, None)
        out, final = self._run(input, hx=state, tail=(self.batch_first,))
        if not batched:
            out = out.squeeze(batch_dim)
            final = tuple(f.squeeze(1) for f in final)
        return out, (final if lstm else final[0])

    def _given_state(self, hx: Any, batched: bool, lstm: bool) -> tuple | None:
        """hx as a tuple of 3-D tensors (after torch's dimension checks), or None."""
        if hx is None:
            return None
        want = 3 if batched else 2
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if lstm:
            if hx[0].dim() != want or hx[1].dim() != want:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            state = tuple(hx)
        else:
            if hx.dim() != want:
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                   f"{hx.dim()}-D tensor")
            state = (hx,)
        return state if batched else tuple(h.unsqueeze(1) for h in state)

    def _check_state(self, input: Tensor, state: tuple, batch_sizes: Any) -> None:
        if self.mode != "LSTM":
            self.check_forward_args(input, state[0], batch_sizes)
            return
        self.check_input(input, batch_sizes)
        expected = self.get_expected_hidden_size(input, batch_sizes)
        self.check_hidden_size(state[0], expected, "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(state[1], expected[:2] + (self.hidden_size,),
                               "Expected hidden[1] size {}, got {}")


def _check_args(dropout: Any, num_layers: int, bias: Any, batch_first: Any, input_size: Any,
                hidden_size: Any, proj_size: int) -> None:
    if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
            or not 0 <= dropout <= 1):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        _ws.warn("dropout option adds dropout after all but last recurrent layer, so "
                 "non-zero dropout expects num_layers greater than 1, but got "
                 f"dropout={dropout} and num_layers={num_layers}", stacklevel=4)
    for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                              ("input_size", input_size, int),
                              ("hidden_size", hidden_size, int)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                            f"{type(value).__name__}")
        if kind is int and value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).
    forward(input, h0=None) -> (output, h_n)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        return self._forward(input, hx)


class LSTM(RNNBase):
    """Long short-term memory; forward(input, (h0, c0)=None) -> (output, (h_n, c_n)).
    With proj_size > 0, h is projected by weight_hr_l<k> to proj_size."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input: Any,
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Any, tuple[Tensor, Tensor]]:
        return self._forward(input, hx)


class GRU(RNNBase):
    """Gated recurrent unit; forward(input, h0=None) -> (output, h_n)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        return self._forward(input, hx)
