"""torch.lstm / gru / rnn_tanh / rnn_relu (and their _VF names) against torch: the same weights
(float64) give the same outputs, final states and gradients, padded (either batch layout) and
packed; keyword calls; torch's errors; a module whose forward calls _VF directly, as code copied
from torch's RNNBase.forward does; gradcheck of the recurrences."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck
from tests.parity.harness import error_of

torch = pytest.importorskip("torch")

MODULES = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN", "rnn_relu": "RNN"}
CASES = [
    ("lstm", dict(num_layers=1)),
    ("lstm", dict(num_layers=2, bidirectional=True)),
    ("lstm", dict(num_layers=2, bidirectional=True, proj_size=2)),
    ("lstm", dict(num_layers=1, bias=False, proj_size=3)),
    ("gru", dict(num_layers=2, bidirectional=True)),
    ("gru", dict(num_layers=1, bias=False)),
    ("rnn_tanh", dict(num_layers=2)),
    ("rnn_relu", dict(num_layers=1, bidirectional=True)),
]
IN, HID, T, B = 3, 4, 5, 3


def _weights(name, cfg, seed):
    """torch's parameters of the matching module (float64), and a copy for retrograd."""
    torch.manual_seed(seed)
    kw = {k: v for k, v in cfg.items()}
    if name.startswith("rnn_"):
        kw["nonlinearity"] = name[4:]
    module = getattr(torch.nn, MODULES[name])(IN, HID, dtype=torch.float64, **kw)
    theirs = [w.detach().clone().requires_grad_() for w in module._flat_weights]
    ours = [retrograd.tensor(w.detach().numpy(), requires_grad=True) for w in theirs]
    return theirs, ours, module


def _state(name, cfg, batch, rng):
    dirs = 2 if cfg.get("bidirectional") else 1
    h_size = cfg.get("proj_size") or HID
    h = rng.standard_normal((cfg["num_layers"] * dirs, batch, h_size))
    if name != "lstm":
        return [h]
    return [h, rng.standard_normal((cfg["num_layers"] * dirs, batch, HID))]


def _call(lib, name, x, state, params, cfg, packed_sizes=None, batch_first=False):
    hx = tuple(state) if name == "lstm" else state[0]
    run = (params, cfg.get("bias", True), cfg["num_layers"], 0.0, True,
           cfg.get("bidirectional", False))
    fn = getattr(lib, name)
    if packed_sizes is not None:
        return fn(x, packed_sizes, hx, *run)
    return fn(x, hx, *run, batch_first)


def _compare(name, cfg, packed, batch_first, seed):
    rng = np.random.default_rng(seed)
    theirs_w, ours_w, _ = _weights(name, cfg, seed)
    if packed:
        sizes = np.array([3, 3, 2, 1, 1])
        x_np = rng.standard_normal((int(sizes.sum()), IN))
        batch = int(sizes[0])
    else:
        x_np = rng.standard_normal((B, T, IN) if batch_first else (T, B, IN))
        batch = B
    state_np = _state(name, cfg, batch, rng)
    results = []
    for lib, weights in ((torch, theirs_w), (retrograd, ours_w)):
        x = lib.tensor(x_np, requires_grad=True)
        state = [lib.tensor(s, requires_grad=True) for s in state_np]
        sizes_t = lib.tensor(sizes) if packed else None
        outs = _call(lib, name, x, state, weights, cfg, sizes_t, batch_first)
        assert isinstance(outs, tuple) and len(outs) == (3 if name == "lstm" else 2)
        loss = sum((o * (i + 1.5)).sin().sum() for i, o in enumerate(outs))
        loss.backward()
        results.append(([o.detach().numpy() for o in outs],
                        [t.grad.numpy() for t in [x, *state, *weights]]))
    (t_out, t_grads), (o_out, o_grads) = results
    for a, b in zip(t_out + t_grads, o_out + o_grads):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,cfg", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
@pytest.mark.parametrize("layout", ["padded", "batch_first", "packed"])
def test_recurrence_matches_torch(name, cfg, layout):
    _compare(name, cfg, layout == "packed", layout == "batch_first", seed=len(layout))


def test_keyword_call_and_vf_name_as_torch():
    theirs_w, ours_w, _ = _weights("gru", dict(num_layers=1), 0)
    x = np.random.default_rng(1).standard_normal((T, B, IN))
    outs = []
    for lib, w in ((torch, theirs_w), (retrograd, ours_w)):
        out = lib._VF.gru(input=lib.tensor(x), hx=lib.zeros(1, B, HID, dtype=lib.float64),
                          params=w, has_biases=True, num_layers=1, dropout=0.0, train=False,
                          bidirectional=False, batch_first=False)
        outs.append([o.detach().numpy() for o in out])
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    assert retrograd._VF.lstm is retrograd.lstm and retrograd._VF.lstm_cell is retrograd.lstm_cell


@pytest.mark.parametrize("case", ["params", "lstm_hx"])
def test_errors_as_torch(case):
    x64 = np.random.default_rng(0).standard_normal((T, B, IN))
    errors = []
    for lib in (torch, retrograd):
        module = lib.nn.LSTM(IN, HID, dtype=lib.float64)
        h = lib.zeros(1, B, HID, dtype=lib.float64)
        weights = module._flat_weights
        x = lib.tensor(x64)
        params, hx = (weights[:3], (h, h)) if case == "params" else (weights, (h,))
        errors.append(error_of(lambda lib=lib, x=x, hx=hx, params=params: lib.lstm(
            x, hx, params, True, 1, 0.0, False, False, False)))
    assert errors[0] == errors[1] and errors[0] is not None


def test_a_forward_copied_from_torch_calls_vf_directly():
    """A subclass whose forward is torch's own call of _VF.lstm gives the module's results."""

    def make(lib):
        class CopiedForward(lib.nn.LSTM):
            def forward(self, input, hx):
                result = lib._VF.lstm(input, hx, self._flat_weights, self.bias,
                                      self.num_layers, self.dropout, self.training,
                                      self.bidirectional, self.batch_first)
                return result[0], result[1:]

        return CopiedForward

    lib = retrograd
    retrograd.manual_seed(0)
    plain = lib.nn.LSTM(IN, HID, num_layers=2, bidirectional=True, batch_first=True)
    copied = make(lib)(IN, HID, num_layers=2, bidirectional=True, batch_first=True)
    copied.load_state_dict(plain.state_dict())
    x = retrograd.randn(B, T, IN)
    h = (retrograd.randn(4, B, HID), retrograd.randn(4, B, HID))
    out_a, (h_a, c_a) = plain(x, h)
    out_b, (h_b, c_b) = copied(x, h)
    for a, b in ((out_a, out_b), (h_a, h_b), (c_a, c_b)):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    out_b.sum().backward()
    assert copied.weight_hh_l1_reverse.grad is not None
    assert float(copied.weight_hh_l1_reverse.grad.abs().sum()) > 0


def test_module_dropout_between_layers_runs_through_the_recurrence():
    """dropout applies between layers only in training, as the flag passed says."""
    retrograd.manual_seed(0)
    module = retrograd.nn.GRU(IN, HID, num_layers=2, dropout=0.5)
    x = retrograd.randn(T, B, IN)
    module.eval()
    a, _ = module(x)
    b, _ = module(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    module.train()
    c, _ = module(x)
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn_tanh"])
def test_gradcheck_recurrence(name):
    cfg = dict(num_layers=1, bidirectional=True)
    _, weights, _ = _weights(name, cfg, 3)
    rng = np.random.default_rng(3)
    x = retrograd.tensor(rng.standard_normal((3, 2, IN)), requires_grad=True)
    state = [retrograd.tensor(s, requires_grad=True) for s in _state(name, cfg, 2, rng)]

    def fn(x, *rest):
        st, ws = rest[:len(state)], list(rest[len(state):])
        return _call(retrograd, name, x, st, ws, cfg)

    inputs = (x, *state, *weights)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)
