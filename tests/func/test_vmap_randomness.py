"""vmap's randomness for samplers called inside it, against torch.func.vmap on the same
programs: "different" draws per batch member (rows differ, the batch has the sampler's
distribution), "same" draws once for the whole batch (rows equal), "error" raises torch's
error. Samplers on unbatched arguments (rand(3), randn_like of an unbatched tensor, dropout of
one) as well as on batched ones (in-place samplers, rand_like of the batched input)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

PROGRAMS = {
    "rand": lambda lib, y: lib.rand(5) + y[:1],
    "randn_2d": lambda lib, y: lib.randn(2, 5) + y,
    "randint": lambda lib, y: lib.randint(0, 1000, (5,)) + y.long(),
    "randn_like_unbatched": lambda lib, y: lib.randn_like(lib.ones(5)) + y,
    "rand_like_batched": lambda lib, y: lib.rand_like(y),
    "normal_float": lambda lib, y: lib.normal(2.0, 3.0, (5,)) + y,
    "normal_unbatched_mean": lambda lib, y: lib.normal(lib.zeros(5), 1.0) + y,
    "bernoulli_unbatched": lambda lib, y: lib.bernoulli(lib.full((64,), 0.5)) + y.sum(),
    "dropout_unbatched": lambda lib, y: lib.nn.functional.dropout(lib.ones(64), 0.5) + y.sum(),
    "dropout_batched": lambda lib, y: lib.nn.functional.dropout(y.repeat(8) + 1, 0.5),
    "uniform_inplace": lambda lib, y: y.clone().uniform_(),
    "normal_inplace": lambda lib, y: (y * 0).normal_(),
}


def _run(lib, name, randomness, batch=8):
    lib.manual_seed(0)
    y = lib.zeros(batch, 5)
    return lib.func.vmap(lambda r: PROGRAMS[name](lib, r), randomness=randomness)(y)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_different_draws_per_member(name):
    ours = _run(retrograd, name, "different")
    theirs = _run(torch, name, "different")
    assert tuple(ours.shape) == tuple(theirs.shape)
    rows = ours.reshape(ours.shape[0], -1).double().numpy()
    distinct = {tuple(r) for r in rows}
    assert len(distinct) == len(rows), "two batch members drew the same values"


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_draws_once(name):
    ours = _run(retrograd, name, "same")
    theirs = _run(torch, name, "same")
    assert tuple(ours.shape) == tuple(theirs.shape)
    rows = ours.reshape(ours.shape[0], -1).numpy()
    assert (rows == rows[:1]).all()
    assert len({tuple(r) for r in rows[0:1]}) == 1


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_error_mode_as_torch(name):
    got = []
    for lib in (retrograd, torch):
        with pytest.raises(RuntimeError) as e:
            _run(lib, name, "error")
        got.append(str(e.value))
    assert got[0] == got[1]


def test_different_has_the_samplers_distribution():
    retrograd.manual_seed(0)
    n = 4000
    u = retrograd.func.vmap(lambda r: retrograd.rand(3) + r, randomness="different")(
        retrograd.zeros(n, 3)).numpy()
    assert abs(u.mean() - 0.5) < 0.02 and abs(u.std() - np.sqrt(1 / 12)) < 0.01
    z = retrograd.func.vmap(lambda r: retrograd.randn_like(retrograd.ones(3)) + r,
                            randomness="different")(retrograd.zeros(n, 3)).numpy()
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05
    # each column is its own sample across the batch, not one value repeated
    assert (z.std(axis=0) > 0.9).all()
    d = retrograd.func.vmap(lambda r: retrograd.nn.functional.dropout(retrograd.ones(3), 0.25)
                            + r, randomness="different")(retrograd.zeros(n, 3)).numpy()
    assert np.isclose(d[d != 0], 1 / 0.75).all()
    assert abs((d == 0).mean() - 0.25) < 0.02


def test_nested_different_levels_draw_independently():
    out = retrograd.func.vmap(retrograd.func.vmap(lambda r: retrograd.rand(()) + r,
                                                  randomness="different"),
                              randomness="different")(retrograd.zeros(3, 4))
    assert tuple(out.shape) == (3, 4)
    assert len(set(out.reshape(-1).tolist())) == 12


def test_outside_vmap_samplers_are_unchanged():
    retrograd.manual_seed(3)
    a = retrograd.rand(4)
    retrograd.manual_seed(3)
    retrograd.func.vmap(lambda r: r * 2)(retrograd.zeros(2, 2))
    b = retrograd.rand(4)
    assert (a == b).all()


# samplers whose distribution argument is batched
BATCHED_INPUT = {
    "bernoulli_p": lambda lib, p: lib.bernoulli(p),
    "bernoulli_inplace_p": lambda lib, p: p.clone().bernoulli_(p),
    "multinomial": lambda lib, p: lib.multinomial(p, 3),
    "multinomial_rows": lambda lib, p: lib.multinomial(p.reshape(2, 4), 3, replacement=True),
}


def _probs(lib, batch=16):
    return lib.tensor(np.random.RandomState(1).rand(batch, 8) * 0.9 + 0.05)


@pytest.mark.parametrize("name", sorted(BATCHED_INPUT))
def test_same_randomness_with_a_batched_input_is_refused_as_torch(name):
    messages = []
    for lib in (retrograd, torch):
        with pytest.raises(RuntimeError) as info:
            lib.func.vmap(lambda p, lib=lib: BATCHED_INPUT[name](lib, p),
                          randomness="same")(_probs(lib))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("Vmap does not currently support same randomness")


@pytest.mark.parametrize("name", sorted(BATCHED_INPUT))
def test_different_randomness_with_a_batched_input_draws_per_member(name):
    outs = []
    for lib in (retrograd, torch):
        lib.manual_seed(0)
        outs.append(lib.func.vmap(lambda p, lib=lib: BATCHED_INPUT[name](lib, p),
                                  randomness="different")(_probs(lib)))
    ours, theirs = outs
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    values = ours.numpy()
    assert len({row.tobytes() for row in values}) > 1  # members draw their own samples
    if name == "multinomial":  # without replacement: distinct categories in each row
        assert all(len(set(row)) == 3 for row in values) and values.max() < 8


def test_multinomial_in_error_mode_raises_torch_error():
    messages = []
    for lib in (retrograd, torch):
        with pytest.raises(RuntimeError) as info:
            lib.func.vmap(lambda p, lib=lib: lib.multinomial(p, 2))(_probs(lib))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
