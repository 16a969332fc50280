"""mkldnn_rnn_layer: one float32 LSTM layer and direction as one op, with torch's node
MkldnnRnnLayerBackward0 (NOTE [Fused LSTM layer]), and `fused_lstm`, the stacked LSTM built
from it as torch builds its oneDNN path: layers and directions in turn, directions
concatenated, dropout between layers, final states stacked.

The backward runs the NumPy arithmetic of kernels/lstm_layer.py on the gates the forward kept
in its workspace output; a backward that is itself differentiated recomputes the layer with
retrograd's ops and runs the same arithmetic on Tensors.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from retrograd._autograd import op_seam
from retrograd._ops import dispatch
from retrograd._ops import normalization as _norm
from retrograd._ops.creation import zeros_like
from retrograd._ops.dropout import dropout as _dropout
from retrograd._ops.kernels import lstm_layer as K
from retrograd._ops.pointwise import sigmoid, tanh
from retrograd._ops.registry import op
from retrograd._ops.shape import cat, stack
from retrograd._ops.torch_function import takes_part
from retrograd._tensor import Tensor, _is_wrapper

_TENSORS = SimpleNamespace(sigmoid=sigmoid, tanh=tanh, stack=stack,
                           cat=lambda parts: cat(parts, 1),
                           zeros_like=zeros_like)

_INPUTS = "input, weight0, weight1, weight2, weight3, hx_, cx_"


def _layer_forward(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes,
                   mode, hidden_size, num_layers, has_biases, bidirectional, batch_first,
                   train):
    out, hy, cy, acts, cells = K.forward(K.NUMPY, input, weight0, weight1, weight2 + weight3,
                                         hx_, cx_, reverse)
    return out, hy, cy, K.pack_workspace(acts, cells)


def _per_input(layer_grads: tuple, output_mask) -> tuple:
    """K.backward's gradients as the op's inputs take them (the one bias gradient for both
    b_ih and b_hh), None for an input that needs none."""
    gx, gw_ih, gw_hh, gb, ghx, gcx = layer_grads
    return tuple(v if m else None
                 for v, m in zip((gx, gw_ih, gw_hh, gb, gb, ghx, gcx), output_mask))


def _numpy_grads(grads, input, weight0, weight1, hx_, cx_, result0, result3, reverse,
                 output_mask) -> tuple:
    acts, cells = K.unpack_workspace(result3)
    return _per_input(K.backward(K.NUMPY, input, weight0, weight1, hx_, cx_, result0, acts,
                                 cells, grads[0], grads[1], grads[2], reverse), output_mask)


def _backward_forward(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output, hy_, cy_,
                      grad_output, grad_hy, grad_cy, reverse, mode, hidden_size, num_layers,
                      has_biases, train, bidirectional, batch_sizes, batch_first, workspace):
    return _numpy_grads((grad_output, grad_hy, grad_cy), input, weight1, weight2, hx_, cx_tmp,
                        output, workspace, reverse, (True,) * 7)


mkldnn_rnn_layer_backward = op(
    "mkldnn_rnn_layer_backward(Tensor input, Tensor weight1, Tensor weight2, Tensor weight3, "
    "Tensor weight4, Tensor hx_, Tensor cx_tmp, Tensor output, Tensor hy_, Tensor cy_, "
    "Tensor? grad_output, Tensor? grad_hy, Tensor? grad_cy, bool reverse, int mode, "
    "int hidden_size, int num_layers, bool has_biases, bool train, bool bidirectional, "
    "int[] batch_sizes, bool batch_first, Tensor workspace) -> (Tensor, Tensor, Tensor, Tensor, "
    "Tensor, Tensor, Tensor)", _backward_forward, function=False, method=False)


def _grads(grads, input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes,
           mode, hidden_size, num_layers, has_biases, bidirectional, batch_first, train,
           result0, result1, result2, result3, output_mask):
    if _norm._fused_wanted():
        values = mkldnn_rnn_layer_backward(
            input, weight0, weight1, weight2, weight3, hx_, cx_, result0, result1, result2,
            grads[0], grads[1], grads[2], reverse, mode, hidden_size, num_layers, has_biases,
            train, bidirectional, batch_sizes, batch_first, result3)
        return tuple(v if m else None for v, m in zip(values, output_mask))
    # a graph of the gradients: the layer again in ops, then the same arithmetic
    out, _, _, acts, cells = K.forward(_TENSORS, input, weight0, weight1, weight2 + weight3,
                                       hx_, cx_, reverse)
    return _per_input(K.backward(_TENSORS, input, weight0, weight1, hx_, cx_, out, acts, cells,
                                 grads[0], grads[1], grads[2], reverse), output_mask)


mkldnn_rnn_layer = op(
    "mkldnn_rnn_layer(Tensor input, Tensor weight0, Tensor weight1, Tensor weight2, "
    "Tensor weight3, Tensor hx_, Tensor cx_, bool reverse, int[] batch_sizes, int mode, "
    "int hidden_size, int num_layers, bool has_biases, bool bidirectional, bool batch_first, "
    "bool train) -> (Tensor, Tensor, Tensor, Tensor)", _layer_forward,
    grads={_INPUTS: _grads},
    array_grads={_INPUTS: lambda grads, input, weight0, weight1, weight2, weight3, hx_, cx_,
                 reverse, batch_sizes, mode, hidden_size, num_layers, has_biases,
                 bidirectional, batch_first, train, result0, result1, result2, result3,
                 output_mask: _numpy_grads(grads, input, weight0, weight1, hx_, cx_, result0,
                                           result3, reverse, output_mask)},
    differentiable_outputs=(True, True, True, False), method=False)

_LSTM_MODE = 2  # oneDNN's algorithm number for an LSTM, as torch passes it


def fused_lstm(x: Tensor, hx: tuple, params, has_biases: bool, num_layers: int, dropout: float,
               train: bool, bidirectional: bool) -> tuple:
    """A stacked LSTM on a padded (T, N, I) input through mkldnn_rnn_layer, as torch's oneDNN
    path runs it; returns (output, h_n, c_n)."""
    directions = 2 if bidirectional else 1
    stride = 4 if has_biases else 2
    h0, c0 = hx
    hidden = h0.shape[-1]
    hy, cy = [], []
    layer_input = x.contiguous()  # (a batch-first input arrives transposed; torch copies it)
    for layer in range(num_layers):
        outs = []
        for direction in range(directions):
            idx = layer * directions + direction
            w = params[idx * stride:(idx + 1) * stride]
            if has_biases:
                b_ih, b_hh = w[2], w[3]
            else:
                b_ih = b_hh = w[0].new_zeros((w[0].shape[0],))
            out, h, c, _ = mkldnn_rnn_layer(
                layer_input, w[0], w[1], b_ih, b_hh, h0[idx], c0[idx], direction == 1,
                [], _LSTM_MODE, hidden, num_layers, has_biases, bidirectional, False, train)
            outs.append(out)
            hy.append(h)
            cy.append(c)
        layer_input = outs[0] if directions == 1 else cat(outs, -1)
        if dropout and train and layer < num_layers - 1:
            layer_input = _dropout(layer_input, dropout, True)
    return layer_input, stack(hy, 0), stack(cy, 0)


def takes_fused_lstm(x: Tensor, hx: tuple, params, projects: bool) -> bool:
    """Whether torch would run this LSTM through oneDNN (float32, no projection, a padded
    non-empty input) and retrograd can run it as plain Tensors (no subclass, no mode, no
    forward-mode level: those see the per-step ops)."""
    if projects or x.dtype.np != np.float32 or x.numel() == 0:
        return False
    if dispatch.mode_stack or op_seam.forward_ad_levels:
        return False
    return all(t.__class__ is Tensor or (not takes_part(t.__class__) and not _is_wrapper(t))
               for t in (x, *hx, *params))  # plain tensors and Parameters
