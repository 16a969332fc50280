"""RNN, LSTM, GRU and their cells against torch (same weights, float64): outputs, final states
and every gradient; gradcheck of the recurrences; parameter names, repr and errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck
from tests.nn.nn_harness import module_parity, randn
from tests.parity.harness import both, error_of

pytest.importorskip("torch")


def _layer(cls_name, kwargs, with_state=False):
    """A wrapper that calls the layer on (x,) or (x, h0[, c0]) and returns all outputs."""

    def make(lib):
        class Wrap(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = getattr(lib.nn, cls_name)(**kwargs)

            def forward(self, x, *state):
                if not state:
                    out, hidden = self.rnn(x)
                elif cls_name == "LSTM":
                    out, hidden = self.rnn(x, tuple(state))
                else:
                    out, hidden = self.rnn(x, state[0])
                return [out, *(hidden if isinstance(hidden, tuple) else (hidden,))]

        return Wrap()

    return make


LAYERS = {
    "rnn_tanh": ("RNN", dict(input_size=3, hidden_size=4)),
    "rnn_relu_2layers": ("RNN", dict(input_size=3, hidden_size=4, num_layers=2,
                                     nonlinearity="relu")),
    "rnn_bidir_batch_first": ("RNN", dict(input_size=3, hidden_size=4, bidirectional=True,
                                          batch_first=True)),
    "lstm": ("LSTM", dict(input_size=3, hidden_size=4)),
    "lstm_2layers_bidir": ("LSTM", dict(input_size=3, hidden_size=4, num_layers=2,
                                        bidirectional=True)),
    "lstm_proj": ("LSTM", dict(input_size=3, hidden_size=5, proj_size=2, num_layers=2,
                               bidirectional=True)),
    "lstm_no_bias_batch_first": ("LSTM", dict(input_size=3, hidden_size=4, bias=False,
                                              batch_first=True)),
    "gru": ("GRU", dict(input_size=3, hidden_size=4)),
    "gru_2layers_bidir": ("GRU", dict(input_size=3, hidden_size=4, num_layers=2,
                                      bidirectional=True, batch_first=True)),
    "gru_no_bias": ("GRU", dict(input_size=3, hidden_size=4, bias=False)),
}

T, B = 5, 2


def _state_shapes(cls_name, kw, batched=True):
    dirs = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    h = kw.get("proj_size") or kw["hidden_size"]
    lead = (layers * dirs, B) if batched else (layers * dirs,)
    shapes = [lead + (h,)]
    if cls_name == "LSTM":
        shapes.append(lead + (kw["hidden_size"],))
    return shapes


@pytest.mark.parametrize("case", list(LAYERS))
def test_layer_matches_torch(case):
    cls_name, kw = LAYERS[case]
    x = randn(B, T, 3) if kw.get("batch_first") else randn(T, B, 3)
    module_parity(_layer(cls_name, kw), [x])
    states = [randn(*s, seed=i + 1) for i, s in enumerate(_state_shapes(cls_name, kw))]
    module_parity(_layer(cls_name, kw, True), [x, *states])


@pytest.mark.parametrize("case", ["rnn_tanh", "lstm_proj", "gru_2layers_bidir"])
def test_unbatched_input_matches_torch(case):
    cls_name, kw = LAYERS[case]
    module_parity(_layer(cls_name, kw), [randn(T, 3)])
    states = [randn(*s, seed=i + 1) for i, s in enumerate(_state_shapes(cls_name, kw, False))]
    module_parity(_layer(cls_name, kw, True), [randn(T, 3), *states])


@pytest.mark.parametrize("cls_name", ["RNN", "LSTM", "GRU"])
def test_layer_gradcheck(cls_name):
    retrograd.manual_seed(0)
    kw = dict(input_size=2, hidden_size=2, num_layers=2, bidirectional=True)
    if cls_name == "LSTM":
        kw["proj_size"] = 1
    rnn = getattr(retrograd.nn, cls_name)(**kw).double()
    x = retrograd.randn(2, 2, 2, dtype=retrograd.float64, requires_grad=True)
    h0 = retrograd.randn(4, 2, 1 if cls_name == "LSTM" else 2, dtype=retrograd.float64,
                         requires_grad=True)
    c0 = retrograd.randn(4, 2, 2, dtype=retrograd.float64, requires_grad=True)

    # gradcheck perturbs its inputs in place, so the module's own parameters can be inputs
    def fn(x, h0, c0, *weights):
        out, hidden = rnn(x, (h0, c0) if cls_name == "LSTM" else h0)
        return (out, *(hidden if isinstance(hidden, tuple) else (hidden,)))

    assert gradcheck(fn, (x, h0, c0, *rnn.parameters()))


@pytest.mark.parametrize("cls_name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_gradcheck(cls_name):
    retrograd.manual_seed(0)
    cell = getattr(retrograd.nn, cls_name)(2, 3).double()
    x = retrograd.randn(2, 2, dtype=retrograd.float64, requires_grad=True)
    h = retrograd.randn(2, 3, dtype=retrograd.float64, requires_grad=True)
    def fn(x, h, *weights):
        return cell(x, (h, h * 0.5) if cls_name == "LSTMCell" else h)

    assert gradcheck(fn, (x, h, *cell.parameters()))
    assert gradgradcheck(fn, (x, h))


def _cell(cls_name, kwargs, n_state):
    def make(lib):
        class Wrap(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = getattr(lib.nn, cls_name)(**kwargs)

            def forward(self, x, *state):
                if not state:
                    return self.cell(x)
                return self.cell(x, tuple(state) if n_state == 2 else state[0])

        return Wrap()

    return make


CELLS = {
    "rnn_cell": ("RNNCell", dict(input_size=3, hidden_size=4), 1),
    "rnn_cell_relu_no_bias": ("RNNCell", dict(input_size=3, hidden_size=4, bias=False,
                                              nonlinearity="relu"), 1),
    "lstm_cell": ("LSTMCell", dict(input_size=3, hidden_size=4), 2),
    "gru_cell": ("GRUCell", dict(input_size=3, hidden_size=4), 1),
    "gru_cell_no_bias": ("GRUCell", dict(input_size=3, hidden_size=4, bias=False), 1),
}


@pytest.mark.parametrize("case", list(CELLS))
def test_cell_matches_torch(case):
    cls_name, kw, n_state = CELLS[case]
    make = _cell(cls_name, kw, n_state)
    module_parity(make, [randn(B, 3)])
    module_parity(make, [randn(B, 3), *[randn(B, 4, seed=i + 1) for i in range(n_state)]])
    module_parity(make, [randn(3), *[randn(4, seed=i + 1) for i in range(n_state)]])


def test_parameter_names_shapes_and_repr_match_torch():
    def prog(lib):
        nn = lib.nn
        mods = [nn.RNN(3, 4, 2, nonlinearity="relu", bidirectional=True, dropout=0.5),
                nn.LSTM(3, 5, num_layers=2, proj_size=2, batch_first=True, bias=False),
                nn.GRU(3, 4, bidirectional=True), nn.RNNCell(3, 4, nonlinearity="relu"),
                nn.LSTMCell(3, 4, bias=False), nn.GRUCell(3, 4)]
        return [(repr(m), [(k, tuple(v.shape)) for k, v in m.state_dict().items()],
                 [tuple(p.shape) for p in m.parameters()]) for m in mods]

    both(prog)


def test_init_is_uniform_in_inverse_sqrt_hidden():
    retrograd.manual_seed(0)
    m = retrograd.nn.LSTM(8, 16, num_layers=2)
    for p in m.parameters():
        a = p.detach().numpy()
        assert np.abs(a).max() <= 0.25 and np.abs(a).max() > 0.2
    m.flatten_parameters()
    assert [len(w) for w in m.all_weights] == [4, 4]
    assert m._flat_weights[0] is m.weight_ih_l0


def test_errors_match_torch():
    def prog(lib):
        nn = lib.nn
        rnn, lstm, gru = nn.RNN(3, 4), nn.LSTM(3, 4), nn.GRU(3, 4)
        x = lib.zeros(2, 2, 3)
        return [
            error_of(nn.RNN, 3, 4, dropout=2), error_of(nn.RNN, 3, 4, nonlinearity="gelu"),
            error_of(nn.GRU, 3, 4, proj_size=1), error_of(nn.LSTM, 3, 4, proj_size=4),
            error_of(nn.LSTM, 3, 4, proj_size=-1), error_of(nn.LSTM, 0, 4),
            error_of(nn.LSTM, 3, 4.0), error_of(nn.LSTM, 3, 4, 0), error_of(nn.LSTM, 3, 4, bias=1),
            error_of(rnn, lib.zeros(3)), error_of(lstm, lib.zeros(3)), error_of(gru, lib.zeros(3)),
            error_of(rnn, lib.zeros(2, 2, 5)), error_of(rnn, x, lib.zeros(1, 3, 4)),
            error_of(rnn, x, lib.zeros(3, 4)), error_of(rnn, lib.zeros(2, 3), lib.zeros(1, 1, 4)),
            error_of(lstm, x, (lib.zeros(1, 3, 4), lib.zeros(1, 2, 4))),
            error_of(lstm, x, (lib.zeros(1, 2, 4), lib.zeros(1, 3, 4))),
            error_of(lstm, x, (lib.zeros(2, 4), lib.zeros(2, 4))),
            error_of(rnn, x.double()),
            error_of(nn.RNNCell(3, 4), lib.zeros(2, 5)),
            error_of(nn.RNNCell(3, 4), lib.zeros(2, 3), lib.zeros(3, 4)),
            error_of(nn.GRUCell(3, 4), lib.zeros(2, 3), lib.zeros(2, 5)),
            error_of(nn.LSTMCell(3, 4), lib.zeros(2, 2, 3)),
            error_of(nn.RNNCell(3, 4, nonlinearity="gelu"), lib.zeros(2, 3)),
        ]

    both(prog)


def test_dropout_warning_and_train_mode_dropout():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        retrograd.nn.GRU(3, 4, dropout=0.3)
    retrograd.manual_seed(0)
    m = retrograd.nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = retrograd.randn(4, 2, 3)
    a, b = m(x)[0], m(x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    m.eval()
    np.testing.assert_array_equal(m(x)[0].detach().numpy(), m(x)[0].detach().numpy())


# --- packed sequences ------------------------------------------------------------------------
LENGTHS = [2, 5, 3]


def _packed(cls_name, kwargs, enforce_sorted, with_state):
    """pack_padded_sequence -> layer -> pad_packed_sequence; returns the padded output, lengths
    (as floats, so they compare as values) and the final states."""

    def make(lib):
        rnn_utils = lib.nn.utils.rnn

        class Wrap(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = getattr(lib.nn, cls_name)(**kwargs)

            def forward(self, x, *state):
                lengths = LENGTHS if not enforce_sorted else sorted(LENGTHS, reverse=True)
                packed = rnn_utils.pack_padded_sequence(
                    x, lib.tensor(lengths), batch_first=kwargs.get("batch_first", False),
                    enforce_sorted=enforce_sorted)
                if not state:
                    out, hidden = self.rnn(packed)
                else:
                    out, hidden = self.rnn(packed, tuple(state) if cls_name == "LSTM"
                                           else state[0])
                assert isinstance(out, rnn_utils.PackedSequence)
                padded, lens = rnn_utils.pad_packed_sequence(
                    out, batch_first=kwargs.get("batch_first", False), total_length=6)
                hidden = hidden if isinstance(hidden, tuple) else (hidden,)
                return [padded, lens.double(), *hidden]

        return Wrap()

    return make


PACKED = {
    "rnn": ("RNN", dict(input_size=3, hidden_size=4)),
    "lstm_bidir_2layers": ("LSTM", dict(input_size=3, hidden_size=4, num_layers=2,
                                        bidirectional=True)),
    "lstm_proj_batch_first": ("LSTM", dict(input_size=3, hidden_size=4, proj_size=2,
                                           bidirectional=True, batch_first=True)),
    "gru_bidir": ("GRU", dict(input_size=3, hidden_size=4, bidirectional=True)),
}


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("case", list(PACKED))
def test_packed_layer_matches_torch(case, enforce_sorted):
    cls_name, kw = PACKED[case]
    x = randn(3, 5, 3) if kw.get("batch_first") else randn(5, 3, 3)
    module_parity(_packed(cls_name, kw, enforce_sorted, False), [x])
    shapes = [(s[0], 3) + s[2:] for s in _state_shapes(cls_name, kw)]
    states = [randn(*s, seed=i + 1) for i, s in enumerate(shapes)]
    module_parity(_packed(cls_name, kw, enforce_sorted, True), [x, *states])


def test_pack_pad_round_trip_and_pad_sequence_match_torch():
    def prog(lib):
        u = lib.nn.utils.rnn
        seqs = [lib.arange(n * 2, dtype=lib.float64).view(n, 2) + n for n in (2, 4, 1)]
        for s in seqs:
            s.requires_grad_()
        padded = u.pad_sequence(seqs)
        left = u.pad_sequence(seqs, batch_first=True, padding_value=-1.0, padding_side="left")
        packed = u.pack_sequence(seqs, enforce_sorted=False)
        back, lengths = u.pad_packed_sequence(packed, batch_first=True, padding_value=9.0)
        (back * lib.arange(1.0, 1 + back.numel(), dtype=lib.float64).view(back.shape)
         ).sum().backward()
        unpacked = u.unpack_sequence(packed)
        # torch's unpad_sequence transposes its input in place; retrograd leaves it alone
        unpadded = u.unpad_sequence(padded.clone(), lengths)
        return [padded, left, packed.data, packed.batch_sizes, packed.sorted_indices,
                packed.unsorted_indices, back, lengths, [s.grad for s in seqs], unpacked,
                unpadded, u.invert_permutation(lib.tensor([2, 0, 1]))]

    both(prog)


def test_packing_errors_match_torch():
    def prog(lib):
        u = lib.nn.utils.rnn
        x = lib.zeros(3, 2, 1)
        packed = u.pack_padded_sequence(x, [3, 1])
        return [error_of(u.pack_padded_sequence, x, [1, 2]),
                error_of(u.pack_padded_sequence, x, [0, 0], enforce_sorted=False),
                error_of(u.pack_padded_sequence, x, [3]),
                error_of(u.pad_packed_sequence, packed, total_length=2),
                error_of(u.pad_sequence, 3)]

    both(prog)


def test_unpad_sequence_leaves_its_input_alone():
    padded = retrograd.zeros(4, 3, 2)
    parts = retrograd.nn.utils.rnn.unpad_sequence(padded, retrograd.tensor([2, 4, 1]))
    assert tuple(padded.shape) == (4, 3, 2)
    assert [tuple(p.shape) for p in parts] == [(2, 2), (4, 2), (1, 2)]


def test_classes_are_importable_from_torchs_module_paths():
    from retrograd.nn.modules.rnn import GRUCell, LSTMCell, RNNBase, RNNCell
    from retrograd.nn.modules.transformer import Transformer, TransformerDecoderLayer

    nn = retrograd.nn
    assert (RNNCell, LSTMCell, GRUCell, RNNBase) == (nn.RNNCell, nn.LSTMCell, nn.GRUCell,
                                                     nn.RNNBase)
    assert (Transformer, TransformerDecoderLayer) == (nn.Transformer, nn.TransformerDecoderLayer)
