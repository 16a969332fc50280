"""Ordinary torch-style user code: `mypy tests/typing_sample` must pass with retrograd's stubs
(NOTE [Stubs]). tests/test_stubs.py also runs it."""

from __future__ import annotations

from typing import Any

import retrograd as torch
import retrograd.nn.functional as F
from retrograd import nn
from retrograd.autograd import Function


class MLP(nn.Module):
    def __init__(self, n_in: int, n_hidden: int, n_out: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.fc1(x))
        return self.fc2(self.drop(h))


class Square(Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return 2 * x * grad


def train(steps: int = 3) -> float:
    torch.manual_seed(0)
    model = MLP(4, 8, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(16, 4)
    y = torch.randint(0, 3, (16,))
    loss = torch.zeros(())
    for _ in range(steps):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y) + 0.01 * logits.pow(2).mean()
        loss.backward()
        opt.step()
    return loss.item()


def autograd_api() -> torch.Tensor:
    x = torch.ones(3, requires_grad=True)
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (torch.exp(x) * w).sum() + Square.apply(x).sum()
    (gx,) = torch.autograd.grad(y, [x], create_graph=True)
    seen: list[torch.Tensor] = []
    handle = x.register_hook(lambda g: seen.append(g))
    (gx.sum() / 2 - x.mean()).backward()
    handle.remove()
    with torch.no_grad():
        z = x * 2 + 1
        x.add_(-0.1 * x)
    with torch.enable_grad():
        z = z.detach().requires_grad_()
    assert x.grad is not None
    return x.grad + z.sin() @ w.t() - torch.matmul(w, w).abs()


def module_hooks() -> None:
    model = MLP(2, 4, 1)
    model.register_forward_hook(lambda mod, inp, out: None)
    out = model(torch.zeros(1, 2))
    out.sum().backward()
    for p in model.parameters():
        if p.grad is not None:
            p.grad.zero_()
    sd = model.state_dict()
    model.load_state_dict(sd)


def overloaded_functions() -> None:
    a, b = torch.rand(3), torch.rand(3)
    m = torch.max(a, b)  # max(input, other) and max(input, dim) share a position
    values, indices = torch.max(torch.rand(2, 3), 1)
    p = torch.pow(a, 2) + torch.pow(2.0, b) + torch.clamp(a, 0.1, 0.9) + m
    assert p.shape == (3,) and values.shape == (2,) and indices.shape == (2,)


def bound_overloads() -> None:
    # both forms of conv (int list or string padding) and of the random factories
    x, w = torch.ones(1, 1, 5, 5), torch.ones(1, 1, 3, 3)
    assert F.conv2d(x, w, padding=1).shape == F.conv2d(x, w, None, 1, "same").shape
    assert torch.conv1d(x[:, :, 0], w[:, :, 0], stride=(2,), padding="valid").shape == (1, 1, 2)
    g = torch.Generator().manual_seed(0)
    assert torch.randint(5, (3,)).shape == torch.randint(1, 5, (3,), generator=g).shape
    assert torch.normal(0.0, 1.0, (2,), dtype=torch.float64).dtype == torch.float64
    assert torch.normal(torch.zeros(2), 2.0).shape == torch.normal(1.0, torch.ones(2)).shape
    assert torch.bernoulli(torch.full((2,), 0.5), 0.5, generator=g).shape == (2,)
    assert torch.full((2,), 0.5).bernoulli().shape == (2,)


if __name__ == "__main__":
    train()
    autograd_api()
    module_hooks()
    overloaded_functions()
    bound_overloads()
