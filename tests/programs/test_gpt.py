"""A small GPT in the style of the popular minimal implementations, trained on torch and retrograd
from the same weights: causal attention written out (register_buffer + tril + masked_fill +
softmax) and through scaled_dot_product_attention, tied embeddings, decay/no-decay parameter
groups from named_modules/named_parameters, AdamW, gradient clipping, and no_grad sampling."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from tests.programs.program_harness import assert_close, batches, run_both

VOCAB, CONTEXT, WIDTH, HEADS, LAYERS = 13, 8, 16, 4, 2


def _gpt(lib, fused_attention: bool, activation: str):
    nn, F = lib.nn, lib.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
            self.out = nn.Linear(WIDTH, WIDTH)
            self.register_buffer("causal", lib.tril(lib.ones(CONTEXT, CONTEXT))
                                 .view(1, 1, CONTEXT, CONTEXT))

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.qkv(x).split(WIDTH, dim=2)
            q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
            if fused_attention:
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, is_causal=True)
            else:
                scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                scores = scores.masked_fill(self.causal[:, :, :t, :t] == 0, float("-inf"))
                y = F.softmax(scores, dim=-1) @ v
            return self.out(y.transpose(1, 2).contiguous().view(b, t, c))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
            self.attn = Attention()
            act = nn.GELU(approximate="tanh") if activation == "gelu_tanh" else nn.GELU()
            self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), act, nn.Linear(4 * WIDTH, WIDTH),
                                     nn.Dropout(0.0))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.ModuleDict(dict(
                tokens=nn.Embedding(VOCAB, WIDTH), positions=nn.Embedding(CONTEXT, WIDTH),
                blocks=nn.ModuleList([Block() for _ in range(LAYERS)]), norm=nn.LayerNorm(WIDTH)))
            self.head = nn.Linear(WIDTH, VOCAB, bias=False)
            self.body.tokens.weight = self.head.weight  # tied
            self.apply(self._init)
            for name, p in self.named_parameters():
                if name.endswith("out.weight"):
                    nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * LAYERS))

        def _init(self, module):
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if getattr(module, "bias", None) is not None:
                    nn.init.zeros_(module.bias)

        def forward(self, idx, targets=None):
            _, t = idx.size()
            pos = lib.arange(0, t, dtype=lib.long, device=idx.device)
            x = self.body.tokens(idx) + self.body.positions(pos)
            for block in self.body.blocks:
                x = block(x)
            logits = self.head(self.body.norm(x))
            if targets is None:
                return logits, None
            return logits, F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1),
                                           ignore_index=-1)

        def optimizer(self, decay: float, lr: float):
            # walk the modules as the minimal GPTs do; the tied tensor is met twice
            seen = {}
            for mn, m in self.named_modules():
                for pn, p in m.named_parameters(recurse=False):
                    seen.setdefault(id(p), []).append(f"{mn}.{pn}" if mn else pn)
            assert sorted(seen[id(self.head.weight)]) == ["body.tokens.weight", "head.weight"]
            params = {n: p for n, p in self.named_parameters() if p.requires_grad}
            groups = [{"params": [p for p in params.values() if p.dim() >= 2],
                       "weight_decay": decay},
                      {"params": [p for p in params.values() if p.dim() < 2],
                       "weight_decay": 0.0}]
            extra = {"fused": False} if "fused" in inspect.signature(lib.optim.AdamW).parameters \
                else {}
            return lib.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), **extra)

        @lib.no_grad()
        def generate(self, idx, steps: int, top_k: int):
            for _ in range(steps):
                logits, _ = self(idx[:, -CONTEXT:])
                logits = logits[:, -1, :] / 0.7
                v, _ = lib.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("inf")
                nxt = lib.multinomial(F.softmax(logits, dim=-1), num_samples=1)
                idx = lib.cat((idx, nxt), dim=1)
            return idx

    return GPT()


@pytest.mark.parametrize("fused_attention,activation", [(True, "gelu_tanh"), (False, "gelu")])
def test_gpt_trains_like_torch(fused_attention, activation):
    data = batches(0, 3, (3, CONTEXT + 1), high=VOCAB)

    def run(lib, sync):
        model = sync(_gpt(lib, fused_attention, activation))
        opt = model.optimizer(0.1, 3e-3)
        losses, norms = [], []
        for chunk in data:
            x = lib.from_numpy(chunk[:, :-1].copy())
            y = lib.from_numpy(chunk[:, 1:].copy())
            y[0, :2] = -1  # ignored positions
            _, loss = model(x, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            norms.append(lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5))
            opt.step()
            losses.append(loss.item())
        model.eval()
        # top-1 sampling is deterministic, so both libraries must draw the same tokens
        out = model.generate(lib.zeros((2, 1), dtype=lib.long), 10, top_k=1)
        return {"losses": losses, "norms": norms, "state": model.state_dict(),
                "tokens": out.tolist(), "groups": [len(g["params"]) for g in opt.param_groups],
                "tied": model.body.tokens.weight is model.head.weight}

    ours, theirs = run_both(run)
    # the key bias of attention has a zero true gradient: AdamW turns its rounding noise
    # into steps of size lr, so it is left out of the comparison
    for result in (ours, theirs):
        for name in [n for n in result["state"] if n.endswith("qkv.bias")]:
            result["state"][name] = result["state"][name][:WIDTH]  # query part only
            result["state"][name] = np.asarray(result["state"][name].detach().numpy())
    assert_close(ours, theirs)
    # decayed: the tied embedding, the position table, 4 matrices per block
    assert ours["tied"] and ours["groups"] == [2 + 4 * LAYERS, 8 * LAYERS + 2]
