"""Random draws inside a compiled function are part of its graph (NOTE [Random draws in compiled
graphs]): under one seed compiled and eager draw the same numbers in the same order, the
backward reuses the forward's dropout noise, and nothing runs eagerly."""

from __future__ import annotations

import copy
import logging

import numpy as np
import pytest

import retrograd
from retrograd import nn
from retrograd.compiler import counters


class _DropNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 32)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(32, 32)
        self.drop2 = nn.Dropout(0.5)
        self.fc3 = nn.Linear(32, 3)

    def forward(self, x):
        h = self.drop(nn.functional.relu(self.fc1(x)))
        h = self.drop2(self.fc2(h).tanh())
        return self.fc3(h)


def _train(model, steps: int = 20) -> list:
    opt = retrograd.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    retrograd.manual_seed(123)
    losses = []
    for step in range(steps):
        rng = np.random.default_rng(step)
        x = retrograd.tensor(rng.standard_normal((8, 6)).astype(np.float32))
        y = retrograd.tensor(rng.integers(0, 3, size=8))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_dropout_training_compiled_matches_eager(caplog):
    retrograd.manual_seed(0)
    eager = _DropNet()
    compiled = copy.deepcopy(eager)
    retrograd.compile(compiled)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        expected = _train(eager)
        state_eager = retrograd.get_rng_state().numpy()
        got = _train(compiled)
        state_compiled = retrograd.get_rng_state().numpy()
    assert not [r for r in caplog.records if "eagerly" in r.getMessage()]
    assert counters["compiles"] == 1
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    for (name, p), q in zip(eager.named_parameters(), compiled.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    # the generator moved as far as eager moved it
    np.testing.assert_array_equal(state_compiled, state_eager)


def test_dropout_generator_state_and_mask_reuse():
    x = retrograd.randn(5, 7, requires_grad=True)

    def f(x):
        return nn.functional.dropout(x * 2, 0.4, training=True)

    cf = retrograd.compile(f)
    cf(x)  # compile
    for _ in range(3):
        retrograd.manual_seed(7)
        e = f(x)
        state_e = retrograd.get_rng_state()
        retrograd.manual_seed(7)
        c = cf(x)
        assert np.array_equal(retrograd.get_rng_state().numpy(), state_e.numpy())
        np.testing.assert_array_equal(c.detach().numpy(), e.detach().numpy())
        ge, = retrograd.autograd.grad(e.sum(), x)
        gc, = retrograd.autograd.grad(c.sum(), x)
        # the gradient is 2 * noise: the mask the forward drew, not a new one
        np.testing.assert_array_equal(gc.numpy(), ge.numpy())
        assert np.array_equal(gc.numpy() != 0, c.detach().numpy() != 0)
    assert all(getattr(v, "eager_reason", None) is None for v in cf.variants.values())
    # consecutive calls draw new masks, as eager does
    retrograd.manual_seed(7)
    a, b = cf(x), cf(x)
    assert not np.array_equal(a.detach().numpy(), b.detach().numpy())
    assert counters["compiles"] == 1


def _compiled_draws_match_eager(f, x) -> tuple:
    """Compile f, then for two seeds: the compiled call draws the numbers eager draws, moves the
    generator as far, and gives the same gradient. Returns the compiled function and its
    outputs."""
    cf = retrograd.compile(f, fullgraph=True)
    retrograd.manual_seed(3)
    cf(x)
    outs = []
    for seed in (4, 5):
        retrograd.manual_seed(seed)
        e = f(x)
        state_e = retrograd.get_rng_state().numpy()
        retrograd.manual_seed(seed)
        c = cf(x)
        np.testing.assert_array_equal(retrograd.get_rng_state().numpy(), state_e)
        np.testing.assert_array_equal(c.detach().numpy(), e.detach().numpy())
        ge, = retrograd.autograd.grad(e.sum(), x)
        gc, = retrograd.autograd.grad(c.sum(), x)
        np.testing.assert_array_equal(gc.numpy(), ge.numpy())
        outs.append(c.detach().numpy())
    return cf, outs


@pytest.mark.parametrize("kind", ["rand", "randn", "randint", "randperm", "alpha_dropout",
                                  "feature_dropout", "unused"])
def test_random_factories_compiled_match_eager(kind):
    def f(x):
        if kind == "rand":
            return x * retrograd.rand(x.shape) + retrograd.rand(3, dtype=retrograd.float64).sum()
        if kind == "randn":
            return x + retrograd.randn(*x.shape)
        if kind == "randint":
            return x + retrograd.randint(0, 5, x.shape)
        if kind == "randperm":
            return x[retrograd.randperm(x.shape[0])]
        if kind == "alpha_dropout":
            return nn.functional.alpha_dropout(x, 0.3, training=True)
        if kind == "feature_dropout":
            return nn.functional.dropout2d(x.reshape(2, 3, 2, 1), 0.5, training=True)
        retrograd.rand(4)  # drawn and dropped: the next draw must still match
        return x * retrograd.rand(x.shape)

    _compiled_draws_match_eager(f, retrograd.randn(6, 2, requires_grad=True))
    assert counters["compiles"] == 1


def test_explicit_generator_draws_match_eager():
    outside = retrograd.Generator().manual_seed(11)
    outside_eager = retrograd.Generator().manual_seed(11)

    def made_inside(x):
        g = retrograd.Generator().manual_seed(5)
        return x + retrograd.rand(x.shape, generator=g)

    def read_from(g):
        return lambda x: x * retrograd.randn(x.shape, generator=g)

    x = retrograd.ones(4)
    cf, cg = retrograd.compile(made_inside), retrograd.compile(read_from(outside))
    for _ in range(3):
        np.testing.assert_array_equal(cf(x).numpy(), made_inside(x).numpy())
        np.testing.assert_array_equal(cg(x).numpy(), read_from(outside_eager)(x).numpy())


@pytest.mark.parametrize("kind", ["rand_like", "randn_like", "randint_like", "randint_like_high",
                                  "rand_like_dtype", "rand_like_transposed", "normal_floats",
                                  "multinomial", "multinomial_replacement"])
def test_random_like_draws_compiled_match_eager(kind):
    def f(x):
        if kind == "rand_like":
            return x * retrograd.rand_like(x)
        if kind == "randn_like":
            return x + retrograd.randn_like(x * 2)
        if kind == "randint_like":
            return x + retrograd.randint_like(x, 3, 9)
        if kind == "randint_like_high":
            return x * retrograd.randint_like(x, 4, dtype=retrograd.int32)
        if kind == "rand_like_dtype":
            return x + retrograd.rand_like(x, dtype=retrograd.float64)
        if kind == "rand_like_transposed":
            # the draw is laid out as the input: a transposed input gives a transposed result
            r = retrograd.rand_like(x.t())
            return x * r.t() + r.t().view(-1)[:1].sum()
        if kind == "normal_floats":
            return x * retrograd.normal(0.5, 2.0, (6, 2))
        p = x.detach().abs() + 0.1
        return x[retrograd.multinomial(p[:, 0], 4, replacement=kind.endswith("replacement"))]

    cf, _ = _compiled_draws_match_eager(f, retrograd.randn(6, 2, requires_grad=True))
    assert all(getattr(v, "eager_reason", None) is None for v in cf.variants.values())
    assert counters["compiles"] == 1


def test_random_like_layout_and_errors_match_eager():
    base = retrograd.randn(3, 4).t()  # strides (1, 4)
    for fn in (retrograd.rand_like, retrograd.randn_like,
               lambda t: retrograd.randint_like(t, 5)):
        out = fn(base)
        assert out.stride() == base.stride()
        assert out.shape == base.shape
    # requires_grad results are leaves, drawn as before
    leaf = retrograd.rand_like(base, requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf

    def bad(p):
        return retrograd.multinomial(p, 2)

    cf = retrograd.compile(bad)
    cf(retrograd.tensor([0.2, 0.8]))
    # the value checks run at every compiled call, with eager's message
    with pytest.raises(RuntimeError, match="probability tensor contains"):
        cf(retrograd.tensor([0.2, -0.8]))


@pytest.mark.parametrize("kind", ["empty_like.normal_", "zeros.bernoulli_", "empty.uniform_",
                                  "ones_like.exponential_", "full_like.add_"])
def test_in_place_samplers_on_fresh_factories_compiled_match_eager(kind):
    # the factory is a node of the graph (NOTE [Factories in compiled graphs]): the function may
    # write it in place, and the sampler draws at every call as eager's does
    def f(x):
        if kind == "empty_like.normal_":
            noise = retrograd.empty_like(x).normal_(0.0, 0.5)
        elif kind == "zeros.bernoulli_":
            noise = retrograd.zeros(6, 2).bernoulli_(0.4)
        elif kind == "empty.uniform_":
            noise = retrograd.empty(6, 2, dtype=retrograd.float64).uniform_(-1, 1).float()
        elif kind == "ones_like.exponential_":
            noise = retrograd.ones_like(x.t()).exponential_().t()
        else:
            noise = retrograd.full_like(x, 2.5).add_(retrograd.rand_like(x))
        return x * noise

    cf, outs = _compiled_draws_match_eager(f, retrograd.randn(6, 2, requires_grad=True))
    assert not np.array_equal(outs[0], outs[1])
    assert all(getattr(v, "eager_reason", None) is None for v in cf.variants.values())
    assert counters["compiles"] == 1
