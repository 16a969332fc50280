"""torch.lstm, torch.gru, torch.rnn_tanh and torch.rnn_relu: whole stacked recurrences on an
explicit flat list of weights, padded or packed. RNN, LSTM and GRU run through them, as torch's
modules run through _VF, so code that calls them directly (a module subclass whose forward is
copied from torch's) gets the modules' own arithmetic.

The weights come per layer and direction, in the modules' order: w_ih, w_hh, then b_ih, b_hh
when has_biases, then w_hr when the LSTM projects its hidden state (known from the list's length,
as torch knows it).

NOTE [Packed recurrence]
Padded and packed inputs run through one loop over packed data: a padded (T, B, *) input is a
packed batch whose batch_sizes are all B. At step t only the first batch_sizes[t] rows run. Going
forward, rows that stop running leave their final state behind; going backward (the reverse
direction) rows join from their initial state as the batch grows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import retrograd
from retrograd import nn
from retrograd._ops.rnn_layer import fused_lstm, takes_fused_lstm
from retrograd._tensor import Tensor
from retrograd.nn.modules.rnn_cell import gru_step, lstm_step, relu_step, tanh_step

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu"]

F = nn.functional
STEPS = {"RNN_TANH": tanh_step, "RNN_RELU": relu_step, "LSTM": lstm_step, "GRU": gru_step}


def _run_direction(step: Any, gi: Tensor, batch_sizes: list[int], state0: tuple,
                   weights: tuple, reverse: bool) -> tuple[Tensor, tuple]:
    """One layer, one direction over packed rows (NOTE [Packed recurrence]).
    Returns the packed outputs and the final state (one row per sequence)."""
    offsets = [0]
    for b in batch_sizes:
        offsets.append(offsets[-1] + b)
    outputs: list = [None] * len(batch_sizes)
    if not reverse:
        state, finished = state0, []
        for t, b in enumerate(batch_sizes):
            running = state[0].size(0)
            if b < running:
                finished.append(tuple(s[b:] for s in state))
                state = tuple(s[:b] for s in state)
            state = step(gi[offsets[t]:offsets[t + 1]], state, *weights)
            outputs[t] = state[0]
        finished.append(state)
        final = state if len(finished) == 1 else tuple(
            retrograd.cat(parts) for parts in zip(*reversed(finished)))
    else:
        state = tuple(s[:batch_sizes[-1]] for s in state0)
        for t in range(len(batch_sizes) - 1, -1, -1):
            b, running = batch_sizes[t], state[0].size(0)
            if b > running:
                state = tuple(retrograd.cat([s, s0[running:b]]) for s, s0 in zip(state, state0))
            state = step(gi[offsets[t]:offsets[t + 1]], state, *weights)
            outputs[t] = state[0]
        final = state
    return retrograd.cat(outputs) if len(outputs) > 1 else outputs[0], final


def run_layers(mode: str, data: Tensor, batch_sizes: list[int], hx: tuple,
               params: Sequence[Tensor], has_biases: bool, num_layers: int, dropout: float,
               train: bool, bidirectional: bool) -> tuple[Tensor, tuple]:
    """All layers over packed rows `data`; hx is (h0,) or (h0, c0), each (L*D, B, H).
    Returns the packed output and the final states stacked like hx."""
    directions = 2 if bidirectional else 1
    # each group ends with its projection w_hr when an LSTM projects
    projects = mode == "LSTM" and _projects(params, has_biases, num_layers, bidirectional)
    stride = (4 if has_biases else 2) + projects
    if len(params) != num_layers * directions * stride:
        raise RuntimeError("got an incorrect number of RNN parameters")
    step = STEPS[mode]
    finals: list = []
    x = data
    for layer in range(num_layers):
        outs = []
        for direction in range(directions):
            idx = layer * directions + direction
            w = params[idx * stride:(idx + 1) * stride]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            gi = F.linear(x, w[0], b_ih)
            out, final = _run_direction(step, gi, batch_sizes, tuple(h[idx] for h in hx),
                                        (w[1], b_hh, w[-1] if projects else None),
                                        reverse=direction == 1)
            outs.append(out)
            finals.append(final)
        x = outs[0] if directions == 1 else retrograd.cat(outs, 1)
        if dropout and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    return x, tuple(retrograd.stack(parts) for parts in zip(*finals))


def _projects(params: Sequence[Tensor], has_biases: bool, num_layers: int,
              bidirectional: bool) -> bool:
    """Whether an LSTM's weights include projections (one more per layer and direction)."""
    groups = num_layers * (2 if bidirectional else 1)
    return len(params) == groups * ((4 if has_biases else 2) + 1)


def _recurrence(mode: str, args: tuple, kwargs: dict) -> tuple:
    """Both of torch's forms: (input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first) and, packed, (data, batch_sizes, hx, params, has_biases,
    num_layers, dropout, train, bidirectional). Returns (output, h_n) or (output, h_n, c_n)."""
    name = mode.lower()
    padded = ("input", "hx", "params", "has_biases", "num_layers", "dropout", "train",
              "bidirectional", "batch_first")
    packed = ("data", "batch_sizes", "hx", "params", "has_biases", "num_layers", "dropout",
              "train", "bidirectional")
    # the packed form has a tensor where the padded one has hx (LSTM) or the params list
    is_packed = "batch_sizes" in kwargs or (
        len(args) > 1 and isinstance(args[1], Tensor)
        and (mode == "LSTM" or (len(args) > 2 and isinstance(args[2], Tensor))))
    names = packed if is_packed else padded
    if len(args) > len(names):
        raise TypeError(f"{name}() takes {len(names)} arguments ({len(args)} given)")
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in bound:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        bound[key] = value
    missing = [n for n in names if n not in bound]
    if missing:
        raise TypeError(f"{name}() missing required argument '{missing[0]}'")
    hx = bound["hx"]
    if mode == "LSTM":
        if isinstance(hx, Tensor) or len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        state = tuple(hx)
    else:
        if not isinstance(hx, Tensor):
            raise TypeError(f"{name}(): argument 'hx' must be Tensor, not {type(hx).__name__}")
        state = (hx,)
    run = (bound["params"], bound["has_biases"], bound["num_layers"], bound["dropout"],
           bound["train"], bound["bidirectional"])
    if is_packed:
        data = bound["data"]
        sizes = [int(b) for b in bound["batch_sizes"].tolist()]
        out, final = run_layers(mode, data, sizes, state, *run)
        return (out, *final)
    x = bound["input"]
    if x.dim() != 3:
        raise RuntimeError(f"input must have 3 dimensions, got {x.dim()}")
    if bound["batch_first"]:
        x = x.transpose(0, 1)
    steps, batch = x.size(0), x.size(1)
    params = bound["params"]
    if mode == "LSTM" and takes_fused_lstm(x, state, params, _projects(
            params, bound["has_biases"], bound["num_layers"], bound["bidirectional"])):
        out, h_n, c_n = fused_lstm(x, state, *run)  # NOTE [Fused LSTM layer]
        final = (h_n, c_n)
    else:
        out, final = run_layers(mode, x.reshape(steps * batch, x.size(2)), [batch] * steps,
                                state, *run)
        out = out.view(steps, batch, out.size(1))
    if bound["batch_first"]:
        out = out.transpose(0, 1)
    return (out, *final)


def lstm(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor, Tensor]:
    """torch.lstm: a stacked LSTM over a padded or packed input; (output, h_n, c_n)."""
    return _recurrence("LSTM", args, kwargs)  # type: ignore[return-value]


def gru(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """torch.gru: a stacked GRU over a padded or packed input; (output, h_n)."""
    return _recurrence("GRU", args, kwargs)  # type: ignore[return-value]


def rnn_tanh(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """torch.rnn_tanh: a stacked tanh RNN over a padded or packed input; (output, h_n)."""
    return _recurrence("RNN_TANH", args, kwargs)  # type: ignore[return-value]


def rnn_relu(*args: Any, **kwargs: Any) -> tuple[Tensor, Tensor]:
    """torch.rnn_relu: a stacked relu RNN over a padded or packed input; (output, h_n)."""
    return _recurrence("RNN_RELU", args, kwargs)  # type: ignore[return-value]
