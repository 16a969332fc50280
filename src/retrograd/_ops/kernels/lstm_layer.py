"""One LSTM layer in one direction over a padded sequence: the forward pass and its backward
(backpropagation through time), written once for NumPy arrays and for Tensors.

NOTE [Fused LSTM layer]
torch runs a float32 LSTM on the CPU one layer and direction at a time through oneDNN
(mkldnn_rnn_layer, whose node is MkldnnRnnLayerBackward0): the whole sequence is one op and one
node. retrograd does the same (ops/rnn_layer.py), with the arithmetic here: the input's
projection for all steps is one matrix product, each step adds the hidden state's product and
applies the gates, and the backward gathers the gates' gradients of every step so that the
input's and both weights' gradients are again one matrix product each. A step is

    gates = x_t W_ih^T + b_ih + b_hh + h W_hh^T;  i, f, o = sigmoid, g = tanh (of the quarters)
    c = f c + i g;  h = o tanh(c)

`B` is the backend: NUMPY here, and one made of retrograd's ops for a backward that is itself
differentiated (the functions below use only arithmetic, matrix products, slicing and B's
functions). The forward returns the gates' activations and cell states of every step, which
the NumPy backward reads back from the op's workspace output.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from retrograd._ops.kernels.pointwise import _sigmoid

NUMPY = SimpleNamespace(sigmoid=_sigmoid, tanh=np.tanh, stack=np.stack,
                        cat=lambda parts: np.concatenate(parts, axis=1),
                        zeros_like=np.zeros_like)


def _steps(n: int, reverse: bool) -> range:
    return range(n - 1, -1, -1) if reverse else range(n)


def forward(B, x, w_ih, w_hh, bias, h0, c0, reverse: bool) -> tuple:
    """(output (T, N, H), h_n, c_n, gate activations per step, cell state per step) for input
    x (T, N, I); bias is b_ih + b_hh (or None)."""
    hidden = h0.shape[-1]
    projected = x @ w_ih.T
    if bias is not None:
        projected = projected + bias
    w_hh_t = w_hh.T
    n = x.shape[0]
    outs: list = [None] * n
    acts: list = [None] * n
    cells: list = [None] * n
    h, c = h0, c0
    for t in _steps(n, reverse):
        gates = projected[t] + h @ w_hh_t
        s = B.sigmoid(gates)  # (one call for i, f and o; the g quarter is not used)
        i, f, o = s[:, :hidden], s[:, hidden:2 * hidden], s[:, 3 * hidden:]
        g = B.tanh(gates[:, 2 * hidden:3 * hidden])
        c = f * c + i * g
        h = o * B.tanh(c)
        outs[t], acts[t], cells[t] = h, (i, f, g, o), c
    return B.stack(outs), h, c, acts, cells


def backward(B, x, w_ih, w_hh, h0, c0, out, acts: list, cells: list, grad_out, grad_hy,
             grad_cy, reverse: bool) -> tuple:
    """Gradients (input, w_ih, w_hh, bias, h0, c0) from those of (output, h_n, c_n), any of
    which may be None; `bias` stands for b_ih and b_hh alike."""
    n = len(acts)
    back = 1 if reverse else -1  # from a step to the one taken before it
    dh, dc = grad_hy, grad_cy
    dgates: list = [None] * n
    for t in _steps(n, not reverse):  # the steps backwards
        i, f, g, o = acts[t]
        c = cells[t]
        c_prev = cells[t + back] if 0 <= t + back < n else c0
        if grad_out is not None:
            dh = grad_out[t] if dh is None else dh + grad_out[t]
        if dh is None:
            dh = B.zeros_like(h0)
        tc = B.tanh(c)
        d_o = dh * tc
        dc_t = dh * o * (1 - tc * tc)
        dc = dc_t if dc is None else dc + dc_t
        dgates[t] = B.cat([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                           dc * i * (1 - g * g), d_o * o * (1 - o)])
        dh = dgates[t] @ w_hh
        dc = dc * f
    d_all = B.stack(dgates)  # (T, N, 4H)
    flat = d_all.reshape(-1, d_all.shape[-1])
    hidden = h0.shape[-1]
    # the hidden state each step read: h0 at the first step taken, else the step before's
    before = [out[t + back] if 0 <= t + back < n else h0 for t in range(n)]
    h_prev = B.stack(before).reshape(-1, hidden)
    grad_x = d_all @ w_ih
    grad_w_ih = flat.T @ x.reshape(-1, x.shape[-1])
    grad_w_hh = flat.T @ h_prev
    grad_bias = flat.sum(0)
    return grad_x, grad_w_ih, grad_w_hh, grad_bias, dh, dc


def pack_workspace(acts: list, cells: list) -> np.ndarray:
    """The steps' activations and cell states as one (T, N, 5H) array: i, f, g, o, c."""
    return np.stack([np.concatenate([*a, c], axis=1) for a, c in zip(acts, cells)])


def unpack_workspace(workspace: np.ndarray) -> tuple:
    """pack_workspace's lists back (views into the workspace)."""
    hidden = workspace.shape[-1] // 5
    acts, cells = [], []
    for step in workspace:
        acts.append(tuple(step[:, k * hidden:(k + 1) * hidden] for k in range(4)))
        cells.append(step[:, 4 * hidden:])
    return acts, cells
