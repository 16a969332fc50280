"""Sequence programs in the style of the classic examples, trained on torch and retrograd from the
same weights: a word-level RNN language model (LSTM/GRU/RNN, tied weights, detached hidden state
between chunks, clip_grad_norm_, hand-written SGD through p.data), character models built from
cells (torch.roll, cat, stack, expand), a sine-wave LSTMCell predictor trained with LBFGS in
float64, and a char-RNN fed through autograd.Variable."""

from __future__ import annotations

import numpy as np
import pytest

from tests.programs.program_harness import assert_close, batches, run_both

pytest.importorskip("torch")

TOKENS = 17


def _word_model(lib, kind: str, tied: bool):
    nn, F = lib.nn, lib.nn.functional

    class WordModel(nn.Module):
        def __init__(self, width=8, layers=2):
            super().__init__()
            self.embed = nn.Embedding(TOKENS, width)
            if kind in ("LSTM", "GRU"):
                self.rnn = getattr(nn, kind)(width, width, layers, dropout=0.0)
            else:
                self.rnn = nn.RNN(width, width, layers, nonlinearity=kind, dropout=0.0)
            self.out = nn.Linear(width, TOKENS)
            if tied:
                self.out.weight = self.embed.weight
            nn.init.uniform_(self.embed.weight, -0.1, 0.1)
            nn.init.zeros_(self.out.bias)
            self.kind, self.width, self.layers = kind, width, layers

        def forward(self, x, hidden):
            y, hidden = self.rnn(self.embed(x), hidden)
            return F.log_softmax(self.out(y).view(-1, TOKENS), dim=1), hidden

        def fresh_state(self, batch):
            w = next(self.parameters())
            if self.kind == "LSTM":
                return (w.new_zeros(self.layers, batch, self.width),
                        w.new_zeros(self.layers, batch, self.width))
            return w.new_zeros(self.layers, batch, self.width)

    return WordModel()


def _detach(lib, h):
    return h.detach() if isinstance(h, lib.Tensor) else tuple(_detach(lib, v) for v in h)


@pytest.mark.parametrize("kind,tied", [("LSTM", False), ("GRU", True), ("tanh", False),
                                       ("relu", True)])
def test_word_language_model_trains_like_torch(kind, tied):
    corpus = np.random.default_rng(0).integers(0, TOKENS, 61)

    def run(lib, sync):
        model = sync(_word_model(lib, kind, tied))
        data = lib.from_numpy(corpus.copy())
        n = data.size(0) // 4
        data = data.narrow(0, 0, n * 4).view(4, -1).t().contiguous()  # (time, batch)
        loss_fn = lib.nn.NLLLoss()
        hidden = model.fresh_state(4)
        losses = []
        for i in range(0, data.size(0) - 1, 5):
            seq = min(5, data.size(0) - 1 - i)
            x, y = data[i:i + seq], data[i + 1:i + 1 + seq].reshape(-1)
            model.zero_grad()
            hidden = _detach(lib, hidden)
            out, hidden = model(x, hidden)
            loss = loss_fn(out, y)
            loss.backward()
            lib.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-5.0)
            losses.append(loss.item())
        model.eval()
        with lib.no_grad():
            h = model.fresh_state(1)
            tok = lib.zeros((1, 1), dtype=lib.long)
            words = []
            for _ in range(6):
                out, h = model(tok, h)
                nxt = lib.argmax(out.squeeze().div(0.9).exp())
                tok.fill_(nxt)
                words.append(int(nxt))
        return {"losses": losses, "words": words, "state": model.state_dict()}

    ours, theirs = run_both(run)
    assert_close(ours, theirs)


def _char_models(lib, block: int, vocab: int):
    nn, F = lib.nn, lib.nn.functional
    width = 8

    class Cell(nn.Module):
        def __init__(self, gated: bool):
            super().__init__()
            self.gated = gated
            self.h = nn.Linear(2 * width, width)
            if gated:
                self.z, self.r = nn.Linear(2 * width, width), nn.Linear(2 * width, width)

        def forward(self, x, h):
            xh = lib.cat([x, h], dim=1)
            if not self.gated:
                return F.tanh(self.h(xh))
            reset = F.sigmoid(self.r(xh)) * h
            cand = F.tanh(self.h(lib.cat([x, reset], dim=1)))
            z = F.sigmoid(self.z(xh))
            return (1 - z) * h + z * cand

    class Recurrent(nn.Module):
        def __init__(self, gated: bool):
            super().__init__()
            self.start = nn.Parameter(lib.zeros(1, width))
            self.embed = nn.Embedding(vocab, width)
            self.cell = Cell(gated)
            self.head = nn.Linear(width, vocab)

        def forward(self, idx):
            b, t = idx.size()
            e = self.embed(idx)
            h = self.start.expand((b, -1))
            states = []
            for i in range(t):
                h = self.cell(e[:, i, :], h)
                states.append(h)
            return self.head(lib.stack(states, 1))

    class Window(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab + 1, width)
            self.mlp = nn.Sequential(nn.Linear(block * width, 16), nn.Tanh(), nn.Linear(16, vocab))

        def forward(self, idx):
            parts = []
            for _ in range(block):
                parts.append(self.embed(idx))
                idx = lib.roll(idx, 1, 1)
                idx[:, 0] = vocab
            return self.mlp(lib.cat(parts, -1))

    class Bigram(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Parameter(lib.zeros((vocab, vocab)))

        def forward(self, idx):
            return self.table[idx]

    return {"rnn": lambda: Recurrent(False), "gru": lambda: Recurrent(True),
            "window": Window, "bigram": Bigram}


@pytest.mark.parametrize("kind", ["rnn", "gru", "window", "bigram"])
def test_character_models_train_like_torch(kind):
    block, vocab = 6, 9
    data = batches(1, 3, (4, block + 1), high=vocab)

    def run(lib, sync):
        model = sync(_char_models(lib, block, vocab)[kind]())
        opt = lib.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01, betas=(0.9, 0.99),
                              eps=1e-8)
        losses = []
        for chunk in data:
            x = lib.from_numpy(chunk[:, :-1].copy())
            y = lib.from_numpy(chunk[:, 1:].copy())
            y[:, -2:] = -1
            logits = model(x)
            loss = lib.nn.functional.cross_entropy(logits.view(-1, vocab), y.view(-1),
                                                   ignore_index=-1)
            model.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        with lib.inference_mode():
            idx = lib.zeros(2, 1, dtype=lib.long)
            for _ in range(block - 1):
                logits = model(idx)[:, -1, :]
                _, nxt = lib.topk(lib.softmax(logits, dim=-1), k=1, dim=-1)
                idx = lib.cat((idx, nxt), dim=1)
        return {"losses": losses, "samples": idx.tolist(), "state": model.state_dict()}

    ours, theirs = run_both(run)
    assert_close(ours, theirs)


def test_sine_wave_lstm_cells_with_lbfgs_like_torch():
    rng = np.random.default_rng(2)
    steps = np.arange(30) + rng.integers(-40, 40, 5).reshape(5, 1)
    waves = np.sin(steps / 20.0)

    def run(lib, sync):
        nn = lib.nn

        class Predictor(nn.Module):
            def __init__(self):
                super().__init__()
                self.first, self.second = nn.LSTMCell(1, 12), nn.LSTMCell(12, 12)
                self.out = nn.Linear(12, 1)

            def forward(self, x, future=0):
                z = lambda: lib.zeros(x.size(0), 12, dtype=lib.double)  # noqa: E731
                h1, c1, h2, c2 = z(), z(), z(), z()
                outs = []
                for col in x.split(1, dim=1):
                    h1, c1 = self.first(col, (h1, c1))
                    h2, c2 = self.second(h1, (h2, c2))
                    outs.append(self.out(h2))
                for _ in range(future):
                    h1, c1 = self.first(outs[-1], (h1, c1))
                    h2, c2 = self.second(h1, (h2, c2))
                    outs.append(self.out(h2))
                return lib.cat(outs, dim=1)

        model = sync(Predictor().double())
        data = lib.from_numpy(waves.copy())
        x, y = data[2:, :-1], data[2:, 1:]
        loss_fn = nn.MSELoss()
        opt = lib.optim.LBFGS(model.parameters(), lr=0.8)
        losses = []

        def closure():
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            losses.append(loss.item())
            loss.backward()
            return loss

        for _ in range(2):
            opt.step(closure)
        with lib.no_grad():
            pred = model(data[:2, :-1], future=5)
        return {"losses": losses, "pred": pred, "state": model.state_dict()}

    ours, theirs = run_both(run)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-8)


def test_char_rnn_through_variable_like_torch():
    text = "the quick brown fox jumps over the lazy dog " * 2
    chars = sorted(set(text))
    starts = np.random.default_rng(3).integers(0, len(text) - 9, (2, 3))

    def run(lib, sync):
        from_lib = lib.autograd.Variable
        nn = lib.nn
        n = len(chars)

        class CharRNN(nn.Module):
            def __init__(self, kind):
                super().__init__()
                self.kind = kind
                self.encoder = nn.Embedding(n, 8)
                self.rnn = (nn.GRU if kind == "gru" else nn.LSTM)(8, 8, 2)
                self.decoder = nn.Linear(8, n)

            def forward(self, x, hidden):
                out, hidden = self.rnn(self.encoder(x).view(1, x.size(0), -1), hidden)
                return self.decoder(out.view(x.size(0), -1)), hidden

            def init_hidden(self, batch):
                zero = lambda: from_lib(lib.zeros(2, batch, 8))  # noqa: E731
                return (zero(), zero()) if self.kind == "lstm" else zero()

        def encode(s):
            t = lib.zeros(len(s)).long()
            for i, c in enumerate(s):
                t[i] = chars.index(c)
            return from_lib(t)

        result = {}
        for kind in ("gru", "lstm"):
            model = sync(CharRNN(kind))
            opt = lib.optim.Adam(model.parameters(), lr=0.01)
            loss_fn = nn.CrossEntropyLoss()
            losses = []
            for row in starts:
                inp = lib.stack([encode(text[s:s + 8]) for s in row])
                tgt = lib.stack([encode(text[s + 1:s + 9]) for s in row])
                hidden = model.init_hidden(len(row))
                model.zero_grad()
                loss = 0
                for c in range(8):
                    out, hidden = model(inp[:, c], hidden)
                    loss += loss_fn(out.view(len(row), -1), tgt[:, c])
                loss.backward()
                opt.step()
                losses.append(loss.data.item() / 8)
            result[kind] = {"losses": losses, "state": model.state_dict()}
        return result

    ours, theirs = run_both(run)
    assert_close(ours, theirs)
