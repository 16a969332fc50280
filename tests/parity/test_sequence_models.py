"""Small sequence-model programs of the kind tutorials write, run on torch and on retrograd
from the same initial weights: a character-level LSTM language model, a GRU encoder-decoder
over packed batches with teacher forcing, and a causal transformer language model. A few Adam
steps each; losses, final weights and predictions must agree."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.parity.harness import assert_same, torch_or_skip

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

TEXT = "hello world, hello retrograd. the quick brown fox jumps over the lazy dog."
CHARS = sorted(set(TEXT))
IDS = np.array([CHARS.index(c) for c in TEXT], dtype=np.int64)


def _train(lib, model, batches, loss_fn, sgd, steps=4):
    opt = (lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if sgd
           else lib.optim.Adam(model.parameters(), lr=0.01))
    losses = []
    for step in range(steps):
        opt.zero_grad()
        loss = loss_fn(model, *batches[step % len(batches)])
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return losses


def _run_both(make, batches, loss_fn, predict, sgd=False):
    """Weights made once on torch, loaded into both; returns both libraries' results."""
    import retrograd
    torch = torch_or_skip()
    torch.manual_seed(0)
    state = {k: v.detach().numpy().copy() for k, v in make(torch).state_dict().items()}
    results = []
    for lib in (retrograd, torch):
        model = make(lib)
        model.load_state_dict({k: lib.from_numpy(v.copy()) for k, v in state.items()})
        lib_batches = [[lib.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a
                        for a in batch] for batch in batches]
        losses = _train(lib, model, lib_batches, loss_fn, sgd)
        model.eval()
        with lib.no_grad():
            out = predict(lib, model, *lib_batches[0])
        results.append([losses, out, {k: v for k, v in model.state_dict().items()}])
    assert_same(results[0], results[1], rtol=1e-4, atol=1e-5)


def test_char_lstm_language_model_trains_like_torch():
    vocab, seq = len(CHARS), 12

    def make(lib):
        class CharLM(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = lib.nn.Embedding(vocab, 8)
                self.lstm = lib.nn.LSTM(8, 16, num_layers=2, batch_first=True, dropout=0.0)
                self.head = lib.nn.Linear(16, vocab)

            def forward(self, x, state=None):
                out, state = self.lstm(self.embed(x), state)
                return self.head(out), state

        return CharLM()

    starts = [0, 13, 29, 41]
    x = np.stack([IDS[s:s + seq] for s in starts])
    y = np.stack([IDS[s + 1:s + seq + 1] for s in starts])

    def loss_fn(model, x, y):
        logits, _ = model(x)
        return _ce(logits, y)

    def predict(lib, model, x, y):
        # greedy generation, feeding back the hidden state one character at a time
        state, token, out = None, x[:1, :1], []
        for _ in range(6):
            logits, state = model(token, state)
            token = logits[:, -1:].argmax(-1)
            out.append(token)
        return [lib.cat(out, 1), state]

    _run_both(make, [(x, y)], loss_fn, predict)


def _ce(logits, target):
    return logits.reshape(-1, logits.shape[-1]).log_softmax(-1).gather(
        1, target.reshape(-1, 1)).mean().neg()


def test_gru_seq2seq_with_packed_batches_trains_like_torch():
    vocab, hidden = len(CHARS), 12
    lengths = [7, 5, 3]
    src = np.zeros((3, 7), dtype=np.int64)
    for i, (s, n) in enumerate(zip([3, 20, 40], lengths)):
        src[i, :n] = IDS[s:s + n]
    tgt = np.stack([IDS[s:s + 4][::-1] for s in (3, 20, 40)]).copy()

    def make(lib):
        class Seq2Seq(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = lib.nn.Embedding(vocab, 6)
                self.encoder = lib.nn.GRU(6, hidden, batch_first=True, bidirectional=True)
                self.bridge = lib.nn.Linear(2 * hidden, hidden)
                self.decoder = lib.nn.GRUCell(6, hidden)
                self.out = lib.nn.Linear(hidden, vocab)

            def forward(self, src, tgt):
                packed = lib.nn.utils.rnn.pack_padded_sequence(
                    self.embed(src), lengths, batch_first=True, enforce_sorted=False)
                _, h = self.encoder(packed)
                h = lib.tanh(self.bridge(lib.cat([h[0], h[1]], -1)))
                logits, token = [], tgt[:, 0]
                for t in range(1, tgt.shape[1]):  # teacher forcing
                    h = self.decoder(self.embed(token), h)
                    logits.append(self.out(h))
                    token = tgt[:, t]
                return lib.stack(logits, 1)

        return Seq2Seq()

    def loss_fn(model, src, tgt):
        return _ce(model(src, tgt), tgt[:, 1:])

    def predict(lib, model, src, tgt):
        return model(src, tgt).argmax(-1)

    _run_both(make, [(src, tgt)], loss_fn, predict)


def test_transformer_language_model_trains_like_torch():
    vocab, d_model, seq = len(CHARS), 8, 10

    def make(lib):
        class TransformerLM(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = lib.nn.Embedding(vocab, d_model)
                layer = lib.nn.TransformerEncoderLayer(d_model, 2, 16, dropout=0.0,
                                                       batch_first=True, norm_first=True)
                self.encoder = lib.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.head = lib.nn.Linear(d_model, vocab)
                position = lib.arange(seq).unsqueeze(1).double()
                div = lib.exp(lib.arange(0, d_model, 2).double() * (-math.log(1e4) / d_model))
                pe = lib.zeros(seq, d_model, dtype=lib.float64)
                pe[:, 0::2] = lib.sin(position * div)
                pe[:, 1::2] = lib.cos(position * div)
                self.register_buffer("pe", pe.float())

            def forward(self, x):
                n = x.shape[1]
                mask = lib.nn.Transformer.generate_square_subsequent_mask(n)
                h = self.embed(x) * math.sqrt(d_model) + self.pe[:n]
                return self.head(self.encoder(h, mask=mask, is_causal=True))

        return TransformerLM()

    starts = [2, 17, 33]
    x = np.stack([IDS[s:s + seq] for s in starts])
    y = np.stack([IDS[s + 1:s + seq + 1] for s in starts])

    def loss_fn(model, x, y):
        return _ce(model(x), y)

    def predict(lib, model, x, y):
        return model(x).argmax(-1)

    # SGD: the key projection's bias has a gradient that is zero up to rounding (softmax does not
    # see a shift shared by all keys), which Adam would blow up into rounding-sized steps
    _run_both(make, [(x, y)], loss_fn, predict, sgd=True)

