"""retrograd.quasirandom.SobolEngine against torch.quasirandom.SobolEngine: the direction
numbers and the scrambling arithmetic equal torch's kernels, unscrambled draws equal torch's
bit for bit, scrambled ones are nets with torch's state arithmetic."""

import numpy as np
import pytest

import retrograd
from retrograd import quasirandom as Q
from tests.parity.harness import error_of, torch_or_skip


@pytest.mark.parametrize("dimension", [1, 2, 7, 300, 21201])
def test_direction_numbers_are_torchs(dimension):
    torch = torch_or_skip()
    ref = torch.zeros(dimension, 30, dtype=torch.long)
    torch._sobol_engine_initialize_state_(ref, dimension)
    np.testing.assert_array_equal(Q._initial_state(dimension), ref.numpy())


def test_scrambling_arithmetic_is_torchs():
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    state = Q._initial_state(40)
    ltm = np.tril(rng.integers(0, 2, (40, 30, 30)))
    ref = torch.from_numpy(state.copy())
    torch._sobol_engine_scramble_(ref, torch.from_numpy(ltm), 40)
    np.testing.assert_array_equal(Q._scrambled(state, ltm), ref.numpy())


def _session(lib, engine, float64):
    dt = lib.float64 if float64 else None
    out = [engine.draw(dtype=dt), engine.draw(5, dtype=dt), engine.draw(1, dtype=dt)]
    engine.fast_forward(6)
    out.append(engine.draw(4, dtype=dt))
    engine.reset()
    engine.fast_forward(1)
    out.append(engine.draw(3, dtype=dt))
    engine.reset()
    out.append(engine.draw_base2(3, dtype=dt))
    out.append(engine.draw_base2(3, dtype=dt))
    buf = lib.empty(0, dtype=dt or lib.float32)
    engine.draw(2, out=buf, dtype=dt)
    out.append(buf)
    out.append(error_of(engine.draw_base2, 2))
    return out, engine.num_generated, repr(engine)


def _same(ours, theirs):
    (a, na, ra), (b, nb, rb) = ours, theirs
    assert na == nb and ra == rb
    for x, y in zip(a[:-1], b[:-1]):
        assert str(x.dtype).split(".")[1] == str(y.dtype).split(".")[1]
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert a[-1] == b[-1]


@pytest.mark.parametrize("dimension", [1, 5, 40])
@pytest.mark.parametrize("float64", [False, True])
def test_unscrambled_draws_are_torchs(dimension, float64):
    torch = torch_or_skip()
    _same(_session(retrograd, Q.SobolEngine(dimension), float64),
          _session(torch, torch.quasirandom.SobolEngine(dimension), float64))


def test_scrambled_states_draw_as_torchs():
    """Given torch's scrambled direction numbers and shift, the draws are torch's: the random
    bits differ between the libraries, the arithmetic on them does not."""
    torch = torch_or_skip()
    theirs = torch.quasirandom.SobolEngine(6, scramble=True, seed=11)
    ours = Q.SobolEngine(6, scramble=True, seed=11)
    ours.sobolstate = retrograd.from_numpy(theirs.sobolstate.numpy().copy())
    ours.shift = retrograd.from_numpy(theirs.shift.numpy().copy())
    ours.quasi = retrograd.from_numpy(theirs.quasi.numpy().copy())
    ours._first_point = retrograd.from_numpy(theirs._first_point.numpy().copy())
    for float64 in (False, True):
        ours.reset()
        theirs.reset()
        _same(_session(retrograd, ours, float64), _session(torch, theirs, float64))


def test_scrambled_sequences_are_seeded_nets():
    a = Q.SobolEngine(3, scramble=True, seed=5).draw_base2(4, dtype=retrograd.float64).numpy()
    b = Q.SobolEngine(3, scramble=True, seed=5).draw_base2(4, dtype=retrograd.float64).numpy()
    c = Q.SobolEngine(3, scramble=True, seed=6).draw_base2(4, dtype=retrograd.float64).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert ((a >= 0) & (a < 1)).all()
    # a (t, m, s)-net in base 2: the first 16 points put one point in each 1/16 of every axis
    for column in a.T:
        assert sorted((column * 16).astype(int).tolist()) == list(range(16))
    retrograd.manual_seed(0)
    d1 = Q.SobolEngine(2, scramble=True).draw(4).numpy()
    retrograd.manual_seed(0)
    np.testing.assert_array_equal(Q.SobolEngine(2, scramble=True).draw(4).numpy(), d1)


def test_errors_and_repr_are_torchs():
    torch = torch_or_skip()
    for dim in (0, 21202):
        assert error_of(Q.SobolEngine, dim) == error_of(torch.quasirandom.SobolEngine, dim)
    assert repr(Q.SobolEngine(3, scramble=True, seed=2)) == \
        repr(torch.quasirandom.SobolEngine(3, scramble=True, seed=2))
    assert retrograd.quasirandom.SobolEngine.MAXDIM == torch.quasirandom.SobolEngine.MAXDIM


def test_scrambled_draws_are_torchs_from_the_seed():
    # the scrambling bits are drawn with torch's randint (NOTE [torch's random streams])
    torch = torch_or_skip()
    for float64 in (False, True):
        _same(_session(retrograd, Q.SobolEngine(5, scramble=True, seed=7), float64),
              _session(torch, torch.quasirandom.SobolEngine(5, scramble=True, seed=7), float64))
