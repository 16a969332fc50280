"""RNNCell, LSTMCell and GRUCell, and the one-step recurrences the full layers reuse.

Each step takes the input projection `gi` (x W_ih^T + b_ih, computed for a whole sequence at
once by the layers) and the previous state, and returns the new state as a tuple whose first
element is the hidden output. Gate order is torch's: LSTM (i, f, g, o), GRU (r, z, n).
"""

from __future__ import annotations

import math
from typing import Any

import retrograd
from retrograd import nn
from retrograd._tensor import Tensor
from retrograd.nn import init
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

F = nn.functional
State = tuple  # (h,) or (h, c)


def tanh_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None,
              w_hr: Tensor | None = None) -> State:
    return (retrograd.tanh(gi + F.linear(state[0], w_hh, b_hh)),)


def relu_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None,
              w_hr: Tensor | None = None) -> State:
    return (F.relu(gi + F.linear(state[0], w_hh, b_hh)),)


def lstm_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None,
              w_hr: Tensor | None = None) -> State:
    h, c = state
    i, f, g, o = (gi + F.linear(h, w_hh, b_hh)).chunk(4, 1)
    c = retrograd.sigmoid(f) * c + retrograd.sigmoid(i) * retrograd.tanh(g)
    h = retrograd.sigmoid(o) * retrograd.tanh(c)
    if w_hr is not None:  # LSTM with projections: h is projected to proj_size
        h = F.linear(h, w_hr)
    return h, c


def gru_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None,
             w_hr: Tensor | None = None) -> State:
    h = state[0]
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = retrograd.sigmoid(i_r + h_r)
    z = retrograd.sigmoid(i_z + h_z)
    n = retrograd.tanh(i_n + r * h_n)
    return (n + z * (h - n),)  # (1 - z) * n + z * h


# torch's functional cells (torch.lstm_cell, ...): one step on explicit weights, the modules'
# own arithmetic
def lstm_cell(input: Tensor, hx: Any, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
              b_hh: Tensor | None = None) -> tuple:
    """torch.lstm_cell: (h', c') from input and hx = (h, c)."""
    h, c = lstm_step(F.linear(input, w_ih, b_ih), tuple(hx), w_hh, b_hh)
    return h, c


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """torch.gru_cell: h' from input and hx."""
    return gru_step(F.linear(input, w_ih, b_ih), (hx,), w_hh, b_hh)[0]


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """torch.rnn_tanh_cell: tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    return tanh_step(F.linear(input, w_ih, b_ih), (hx,), w_hh, b_hh)[0]


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """torch.rnn_relu_cell: relu(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    return relu_step(F.linear(input, w_ih, b_ih), (hx,), w_hh, b_hh)[0]


class RNNCellBase(Module):
    """weight_ih (chunks*hidden, input), weight_hh (chunks*hidden, hidden), bias_ih, bias_hh."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias

        def param(*shape: int) -> Parameter:
            return Parameter(retrograd.empty(shape, device=device, dtype=dtype))

        self.weight_ih = param(num_chunks * hidden_size, input_size)
        self.weight_hh = param(num_chunks * hidden_size, hidden_size)
        if bias:
            self.bias_ih = param(num_chunks * hidden_size)
            self.bias_hh = param(num_chunks * hidden_size)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, name: str, input: Tensor) -> Tensor:
        """The input as (batch, input_size); unbatched 1-D input gets a batch of one."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        return input if input.dim() == 2 else input.unsqueeze(0)

    def _zeros(self, input: Tensor) -> Tensor:
        return retrograd.zeros(input.size(0), self.hidden_size, dtype=input.dtype)

    def _check(self, input: Tensor, hxs: tuple) -> None:
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for i, hx in enumerate(hxs):
            if hx.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                                   f"batch size {hx.size(0)}")
            if hx.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {hx.size(1)}, "
                                   f"expected {self.hidden_size}")

    def _step(self, step: Any, input: Tensor, state: State) -> State:
        self._check(input, state)
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        return step(gi, state, self.weight_hh, self.bias_hh)


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        batched = input.dim() == 2
        input = self._batched("RNNCell", input)
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        hx = self._zeros(input) if hx is None else (hx if batched else hx.unsqueeze(0))
        if self.nonlinearity == "tanh":
            step = tanh_step
        elif self.nonlinearity == "relu":
            step = relu_step
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        h = self._step(step, input, (hx,))[0]
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor,
                hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        batched = input.dim() == 2
        input = self._batched("LSTMCell", input)
        if hx is not None:
            for i, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{i}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = self._step(lstm_step, input, tuple(hx))
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: returns h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        batched = input.dim() == 2
        input = self._batched("GRUCell", input)
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        hx = self._zeros(input) if hx is None else (hx if batched else hx.unsqueeze(0))
        h = self._step(gru_step, input, (hx,))[0]
        return h if batched else h.squeeze(0)
