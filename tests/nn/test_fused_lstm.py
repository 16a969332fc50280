"""float32 LSTMs run one fused op per layer and direction, as torch's oneDNN path does
(NOTE [Fused LSTM layer]): values, gradients, double backward and the graph's nodes against
torch, gradcheck of the layer op (float64, first and second order), and the cases that keep the
per-step ops (float64, projections, packed input, vmap)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

CONFIGS = [  # (layers, bidirectional, batch_first, dropout, bias)
    (1, False, False, 0.0, True), (1, False, True, 0.0, False), (2, True, False, 0.0, True),
    (2, True, True, 0.4, True), (3, False, False, 0.3, False),
]


def _chain(t, depth=3) -> list:
    names, fn = [], t.grad_fn
    while fn is not None and len(names) < depth:
        names.append(type(fn).__name__)
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return names


def _run(lib, layers, bidirectional, batch_first, dropout, bias):
    lib.manual_seed(0)
    lstm = lib.nn.LSTM(5, 6, num_layers=layers, bidirectional=bidirectional,
                       batch_first=batch_first, dropout=dropout, bias=bias)
    x = lib.randn(3, 4, 5, requires_grad=True)
    states = layers * (2 if bidirectional else 1)
    h0 = lib.randn(states, 3 if batch_first else 4, 6, requires_grad=True)
    c0 = lib.randn(states, 3 if batch_first else 4, 6, requires_grad=True)
    y, (h, c) = lstm(x, (h0, c0))
    (y.pow(2).sum() + (h * c).sum() + c.mean()).backward()
    values = [y, h, c, x.grad, h0.grad, c0.grad, *(p.grad for p in lstm.parameters())]
    return [v.detach().numpy().copy() for v in values], (_chain(y), _chain(h, 1))


@pytest.mark.parametrize("config", CONFIGS, ids=str)
def test_lstm_matches_torch_values_gradients_and_nodes(config):
    ours, our_nodes = _run(retrograd, *config)
    theirs, their_nodes = _run(torch, *config)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert our_nodes == their_nodes
    assert "MkldnnRnnLayerBackward0" in our_nodes[0]


def test_layer_node_saves_what_torch_saves():
    nodes = []
    for lib in (torch, retrograd):
        lstm = lib.nn.LSTM(3, 4)
        y, _ = lstm(lib.randn(2, 2, 3, requires_grad=True))
        fn = y.grad_fn
        assert type(fn).__name__ == "MkldnnRnnLayerBackward0"
        facts = (fn._saved_reverse, fn._saved_mode, fn._saved_hidden_size, fn._saved_num_layers,
                 fn._saved_has_biases, fn._saved_bidirectional, fn._saved_batch_first,
                 fn._saved_train, tuple(fn._saved_input.shape), tuple(fn._saved_hx_.shape),
                 tuple(fn._saved_result0.shape), tuple(fn._saved_result1.shape))
        nodes.append(facts)
    assert nodes[0] == nodes[1]


def test_double_backward_matches_torch():
    results = []
    for lib in (torch, retrograd):
        lib.manual_seed(0)
        lstm = lib.nn.LSTM(3, 4, num_layers=2)
        x = lib.randn(2, 2, 3, requires_grad=True)
        y, _ = lstm(x)
        g, = lib.autograd.grad(y.pow(2).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x)
        results.append((g.detach().numpy(), gg.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_layer_op_gradcheck(reverse):
    rng = np.random.default_rng(0)

    def t(*shape):
        return retrograd.tensor(rng.standard_normal(shape), requires_grad=True)

    args = (t(3, 2, 4), t(12, 4), t(12, 3), t(12), t(12), t(2, 3), t(2, 3))

    def layer(*a):
        out, hy, cy, _ = retrograd.mkldnn_rnn_layer(*a, reverse, [], 2, 3, 1, True, False,
                                                    False, True)
        return out, hy, cy

    assert gradcheck(layer, args)
    assert gradgradcheck(layer, args)


def test_saved_input_modified_in_place_is_refused():
    for lib in (torch, retrograd):
        lstm = lib.nn.LSTM(3, 4)
        x = lib.randn(2, 2, 3, requires_grad=True)
        h = x * 1
        y, _ = lstm(h)
        h.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_the_per_step_ops_remain_where_torch_keeps_them():
    retrograd.manual_seed(0)
    x = retrograd.randn(3, 2, 4, requires_grad=True)
    for lstm, data in ((retrograd.nn.LSTM(4, 5).double(), x.double()),
                       (retrograd.nn.LSTM(4, 5, proj_size=2), x)):
        y, _ = lstm(data)
        assert "MkldnnRnnLayerBackward0" not in _chain(y, 6)
    packed = retrograd.nn.utils.rnn.pack_padded_sequence(x, [3, 2])
    out, _ = retrograd.nn.LSTM(4, 5)(packed)
    assert "MkldnnRnnLayerBackward0" not in _chain(out.data, 6)


def test_per_example_gradients_of_an_lstm_under_vmap():
    from retrograd.func import functional_call, grad, vmap

    retrograd.manual_seed(0)
    lstm = retrograd.nn.LSTM(3, 4, batch_first=True)
    params = {k: v.detach() for k, v in lstm.named_parameters()}
    xs = retrograd.randn(5, 2, 3)

    def loss(p, x):
        return functional_call(lstm, p, (x[None],))[0].pow(2).sum()

    per_example = vmap(grad(loss), in_dims=(None, 0))(params, xs)
    for i in range(5):
        one = grad(loss)(params, xs[i])
        for k in params:
            np.testing.assert_allclose(per_example[k][i].numpy(), one[k].numpy(), rtol=1e-5,
                                       atol=1e-6)
