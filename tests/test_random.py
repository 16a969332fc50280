"""Random numbers: seeding and generator state, samplers' dtypes / shapes / ranges /
statistics, in-place samplers' autograd behaviour, and errors matching torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from retrograd._ops.random import DEFAULT_SEED

torch = pytest.importorskip("torch")


def same_error(build, exc=Exception):
    with pytest.raises(exc) as t_err:
        build(torch)
    with pytest.raises(exc) as o_err:
        build(retrograd)
    assert type(o_err.value) is type(t_err.value)
    assert str(o_err.value) == str(t_err.value).replace("torch.", "retrograd.")


def same_meta(build):
    """Same dtype, shape and requires_grad / grad_fn name as torch (values are random)."""
    o, t = build(retrograd), build(torch)
    assert o.dtype.name == str(t.dtype).replace("torch.", "")
    assert tuple(o.shape) == tuple(t.shape)
    assert o.requires_grad == t.requires_grad
    assert (o.grad_fn and o.grad_fn.name()) == (t.grad_fn and t.grad_fn.name())
    return o


@pytest.fixture(autouse=True)
def _restore_rng():
    state = retrograd.get_rng_state()
    yield
    retrograd.set_rng_state(state)


# --- seeding and state --------------------------------------------------------------------

SAMPLERS = {
    "rand": lambda g: retrograd.rand(3, 4, generator=g),
    "rand_f64": lambda g: retrograd.rand(5, dtype=retrograd.float64, generator=g),
    "rand_f16": lambda g: retrograd.rand(5, dtype=retrograd.float16, generator=g),
    "randn": lambda g: retrograd.randn(3, 4, generator=g),
    "randint": lambda g: retrograd.randint(0, 10, (6,), generator=g),
    "randperm": lambda g: retrograd.randperm(8, generator=g),
    "normal": lambda g: retrograd.normal(0.0, 2.0, (4,), generator=g),
    "normal_tensor": lambda g: retrograd.normal(retrograd.zeros(4), 1.0, generator=g),
    "bernoulli": lambda g: retrograd.bernoulli(retrograd.full((8,), 0.5), generator=g),
    "multinomial": lambda g: retrograd.multinomial(retrograd.ones(5), 3, generator=g),
    "normal_": lambda g: retrograd.empty(4).normal_(generator=g),
    "uniform_": lambda g: retrograd.empty(4).uniform_(-1, 1, generator=g),
    "bernoulli_": lambda g: retrograd.empty(4).bernoulli_(0.5, generator=g),
    "random_": lambda g: retrograd.empty(4).random_(100, generator=g),
    "exponential_": lambda g: retrograd.empty(4).exponential_(generator=g),
    "cauchy_": lambda g: retrograd.empty(4).cauchy_(generator=g),
    "log_normal_": lambda g: retrograd.empty(4).log_normal_(generator=g),
    "geometric_": lambda g: retrograd.empty(4).geometric_(0.5, generator=g),
    "rand_like": lambda g: retrograd.rand_like(retrograd.zeros(3), generator=g),
    "randn_like": lambda g: retrograd.randn_like(retrograd.zeros(3), generator=g),
    "randint_like": lambda g: retrograd.randint_like(retrograd.zeros(3), 9, generator=g),
}


@pytest.mark.parametrize("sample", SAMPLERS.values(), ids=SAMPLERS.keys())
def test_same_seed_same_numbers(sample):
    a = sample(retrograd.Generator().manual_seed(123))
    b = sample(retrograd.Generator().manual_seed(123))
    c = sample(retrograd.Generator().manual_seed(124))
    np.testing.assert_array_equal(a._data, b._data)
    assert a.dtype is b.dtype
    if a.numel() > 3 and sample is not SAMPLERS["multinomial"]:
        assert not np.array_equal(a._data, c._data)


@pytest.mark.parametrize("sample", SAMPLERS.values(), ids=SAMPLERS.keys())
def test_default_generator_follows_manual_seed(sample):
    retrograd.manual_seed(7)
    a = sample(None)
    retrograd.manual_seed(7)
    b = sample(None)
    np.testing.assert_array_equal(a._data, b._data)


def test_manual_seed_returns_default_generator():
    g = retrograd.manual_seed(3)
    assert g is retrograd.default_generator
    assert isinstance(g, retrograd.Generator)
    assert retrograd.initial_seed() == 3


def test_default_seed_is_torchs():
    assert retrograd.Generator().initial_seed() == torch.Generator().initial_seed() \
        == DEFAULT_SEED


@pytest.mark.parametrize("seed", [0, 1, -1, 2**64 - 1, -(2**63), 2**40])
def test_manual_seed_values_like_torch(seed):
    assert retrograd.Generator().manual_seed(seed).initial_seed() == \
        torch.Generator().manual_seed(seed).initial_seed()


@pytest.mark.parametrize("seed", [1.5, True, 7])
def test_module_manual_seed_converts_like_torch(seed):
    t_seed = torch.manual_seed(seed).initial_seed()
    assert retrograd.manual_seed(seed).initial_seed() == t_seed


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1, "a", 1.5, True])
def test_generator_manual_seed_errors_like_torch(seed):
    same_error(lambda L: L.Generator().manual_seed(seed))


@pytest.mark.parametrize("seed", [2**64, "a"])
def test_module_manual_seed_errors_like_torch(seed):
    same_error(lambda L: L.manual_seed(seed))


def test_seed_is_random_and_recorded():
    g = retrograd.Generator()
    s1 = g.seed()
    assert g.initial_seed() == s1 and 0 <= s1 < 2**64
    assert g.seed() != s1
    s = retrograd.seed()
    assert retrograd.initial_seed() == s


def test_generator_state_round_trip():
    g = retrograd.Generator().manual_seed(5)
    retrograd.randn(3, generator=g)  # advance
    state = g.get_state()
    assert state.dtype is retrograd.uint8 and state.dim() == 1
    a = retrograd.randn(10, generator=g)
    g.manual_seed(99)
    g.set_state(state)
    b = retrograd.randn(10, generator=g)
    np.testing.assert_array_equal(a._data, b._data)
    assert g.initial_seed() == 5
    # the state is a copy: drawing does not change it
    before = state._data.copy()
    retrograd.rand(3, generator=g)
    np.testing.assert_array_equal(state._data, before)


def test_state_includes_odd_uint32_buffer():
    g = retrograd.Generator().manual_seed(1)
    retrograd.rand(3, dtype=retrograd.float32, generator=g)  # leaves a buffered 32-bit word
    st = g.get_state()
    a = retrograd.rand(5, generator=g)
    g.set_state(st)
    np.testing.assert_array_equal(a._data, retrograd.rand(5, generator=g)._data)


def test_global_rng_state_functions():
    retrograd.manual_seed(11)
    st = retrograd.get_rng_state()
    a = retrograd.rand(4)
    retrograd.set_rng_state(st)
    np.testing.assert_array_equal(a._data, retrograd.rand(4)._data)


def test_fork_rng_restores_state():
    from retrograd._ops.random import fork_rng

    retrograd.manual_seed(2)
    with fork_rng():
        retrograd.rand(10)
    a = retrograd.rand(3)
    retrograd.manual_seed(2)
    np.testing.assert_array_equal(a._data, retrograd.rand(3)._data)


def test_generators_are_independent():
    g1 = retrograd.Generator().manual_seed(0)
    g2 = retrograd.Generator().manual_seed(0)
    retrograd.rand(5, generator=g1)
    a = retrograd.rand(5, generator=g1)
    retrograd.manual_seed(0)
    retrograd.rand(100)
    b = retrograd.rand(5, generator=g2)
    assert not np.array_equal(a._data, b._data)
    assert retrograd.Generator().device == retrograd.device("cpu")
    assert retrograd.Generator("cpu").device.type == "cpu"


@pytest.mark.parametrize("build", [
    lambda L: L.Generator().set_state(L.zeros(3)),
    lambda L: L.Generator().set_state([1, 2]),
    lambda L: L.set_rng_state(L.zeros(3)),
], ids=["float_state", "list_state", "global_float_state"])
def test_set_state_type_errors(build):
    same_error(build, TypeError)


def test_set_state_size_error():
    with pytest.raises(RuntimeError, match="RNG state size to be 3"):
        retrograd.Generator().set_state(retrograd.zeros(3, dtype=retrograd.uint8))


def test_generator_keyword_type_checked():
    with pytest.raises(TypeError):
        retrograd.rand(2, generator=3)


# --- factories: dtypes, shapes, ranges ------------------------------------------------------

META_CASES = {
    "rand": lambda L: L.rand(2, 3),
    "rand_tuple": lambda L: L.rand((2, 3)),
    "rand_size_kw": lambda L: L.rand(size=(2, 3)),
    "rand_f64": lambda L: L.rand(2, dtype=L.float64),
    "rand_f16": lambda L: L.rand(2, dtype=L.float16),
    "rand_bf16": lambda L: L.rand(2, dtype=L.bfloat16),
    "rand_rg": lambda L: L.rand(2, requires_grad=True),
    "rand_empty": lambda L: L.rand(0, 3),
    "randn": lambda L: L.randn(4),
    "randn_f16": lambda L: L.randn(2, 3, dtype=L.float16),
    "randn_scalar": lambda L: L.randn(()),
    "randint_high": lambda L: L.randint(10, (3,)),
    "randint_low_high": lambda L: L.randint(3, 10, (2, 2)),
    "randint_kw": lambda L: L.randint(high=3, size=(2,)),
    "randint_size_kw": lambda L: L.randint(3, size=(2,)),
    "randint_float": lambda L: L.randint(3, (2,), dtype=L.float32),
    "randint_int8": lambda L: L.randint(-5, 5, (2,), dtype=L.int8),
    "randint_bool": lambda L: L.randint(0, 2, (4,), dtype=L.bool),
    "randperm": lambda L: L.randperm(5),
    "randperm_float": lambda L: L.randperm(4, dtype=L.float32),
    "randperm_zero": lambda L: L.randperm(0),
    "rand_like": lambda L: L.rand_like(L.zeros(2, 3, dtype=L.float64)),
    "rand_like_dtype": lambda L: L.rand_like(L.zeros(2), dtype=L.float16),
    "randn_like": lambda L: L.randn_like(L.zeros(2), dtype=L.float64),
    "randn_like_rg": lambda L: L.randn_like(L.zeros(2), requires_grad=True),
    "randint_like": lambda L: L.randint_like(L.zeros(2), 5),
    "randint_like_low": lambda L: L.randint_like(L.zeros(2), 3, 5),
    "randint_like_int32": lambda L: L.randint_like(L.zeros(2, dtype=L.int32), 5),
    "randint_like_kw": lambda L: L.randint_like(L.zeros(2), high=5),
    "normal_ff": lambda L: L.normal(0.0, 1.0, (2, 3)),
    "normal_ff_int": lambda L: L.normal(0, 1, (2,)),
    "normal_ff_kw": lambda L: L.normal(mean=0.0, std=1.0, size=(2,)),
    "normal_ff_dtype": lambda L: L.normal(0.0, 1.0, size=(2,), dtype=L.float16),
    "normal_ff_rg": lambda L: L.normal(0.0, 1.0, size=(2,), requires_grad=True),
    "normal_tf": lambda L: L.normal(L.zeros(2, 3), 2.0),
    "normal_tf_default": lambda L: L.normal(L.zeros(2)),
    "normal_tf_kw": lambda L: L.normal(mean=L.zeros(2), std=1.0),
    "normal_ft": lambda L: L.normal(0.5, L.ones(3)),
    "normal_ft_f64": lambda L: L.normal(0.5, L.ones(3, dtype=L.float64)),
    "normal_tt": lambda L: L.normal(L.zeros(3, 1), L.ones(1, 2)),
    "normal_tt_mixed": lambda L: L.normal(L.zeros(2, dtype=L.float64), L.ones(2)),
    "normal_tt_int_std": lambda L: L.normal(L.zeros(2), L.ones(2, dtype=L.int64)),
    "normal_tf_rg": lambda L: L.normal(L.zeros(2, requires_grad=True), 1.0),
    "normal_ft_rg": lambda L: L.normal(0.0, L.ones(2, requires_grad=True)),
    "normal_tt_rg": lambda L: L.normal(L.zeros(2, requires_grad=True), L.ones(2)),
    "bernoulli": lambda L: L.bernoulli(L.full((3,), 0.5)),
    "bernoulli_f64": lambda L: L.bernoulli(L.full((3,), 0.5, dtype=L.float64)),
    "bernoulli_rg": lambda L: L.bernoulli(L.full((2,), 0.5, requires_grad=True)),
    "bernoulli_p": lambda L: L.bernoulli(L.zeros(3), 0.3),
    "bernoulli_p_int": lambda L: L.bernoulli(L.zeros(3, dtype=L.int64), 0.3),
    "bernoulli_method": lambda L: L.full((3,), 0.5).bernoulli(),
    "multinomial": lambda L: L.multinomial(L.tensor([0.2, 0.8]), 4, replacement=True),
    "multinomial_2d": lambda L: L.multinomial(L.tensor([[0.5, 0.5, 0.0], [1.0, 2.0, 3.0]]), 2),
    "multinomial_method": lambda L: L.tensor([1.0, 2.0]).multinomial(1),
    "multinomial_rg": lambda L: L.multinomial(L.tensor([1.0, 2.0], requires_grad=True), 1),
    "multinomial_empty_rows": lambda L: L.multinomial(L.zeros(0, 3), 1),
}


@pytest.mark.parametrize("build", META_CASES.values(), ids=META_CASES.keys())
def test_meta_matches_torch(build):
    same_meta(build)


INPLACE_META = {
    "normal_": lambda L: L.zeros(2, 3).normal_(),
    "normal_f16": lambda L: L.zeros(2, dtype=L.float16).normal_(0, 1),
    "uniform_": lambda L: L.zeros(2).uniform_(-1, 1),
    "bernoulli_float": lambda L: L.zeros(2).bernoulli_(0.5),
    "bernoulli_int": lambda L: L.zeros(2, dtype=L.int64).bernoulli_(0.5),
    "bernoulli_tensor": lambda L: L.zeros(2, 3).bernoulli_(L.full((3,), 0.5)),
    "random_": lambda L: L.zeros(3).random_(),
    "random_int32": lambda L: L.zeros(3, dtype=L.int32).random_(),
    "random_to": lambda L: L.zeros(3, dtype=L.int16).random_(5),
    "random_from_to": lambda L: L.zeros(3).random_(2, 5),
    "random_from_none": lambda L: L.zeros(3, dtype=L.int64).random_(0, None),
    "random_bool": lambda L: L.zeros(3, dtype=L.bool).random_(),
    "exponential_": lambda L: L.zeros(3).exponential_(1.5),
    "cauchy_": lambda L: L.zeros(3).cauchy_(),
    "log_normal_": lambda L: L.zeros(3).log_normal_(),
    "geometric_": lambda L: L.zeros(3).geometric_(0.5),
    "geometric_int": lambda L: L.zeros(3, dtype=L.int64).geometric_(0.5),
    "nonleaf_normal_": lambda L: L.zeros(2, requires_grad=True).clone().normal_(),
    "nonleaf_uniform_": lambda L: L.zeros(2, requires_grad=True).clone().uniform_(),
    "nonleaf_bernoulli_f": lambda L: L.zeros(2, requires_grad=True).clone().bernoulli_(0.5),
    "nonleaf_bernoulli_t": lambda L: L.zeros(2, requires_grad=True).clone().bernoulli_(
        L.full((2,), 0.5)),
    "nonleaf_random_": lambda L: L.zeros(2, requires_grad=True).clone().random_(),
    "nonleaf_random_to": lambda L: L.zeros(2, requires_grad=True).clone().random_(5),
    "nonleaf_random_from": lambda L: L.zeros(2, requires_grad=True).clone().random_(2, 5),
    "nonleaf_exponential_": lambda L: L.zeros(2, requires_grad=True).clone().exponential_(),
    "nonleaf_cauchy_": lambda L: L.zeros(2, requires_grad=True).clone().cauchy_(),
    "nonleaf_log_normal_": lambda L: L.zeros(2, requires_grad=True).clone().log_normal_(),
    "nonleaf_geometric_": lambda L: L.zeros(2, requires_grad=True).clone().geometric_(0.5),
}


@pytest.mark.parametrize("build", INPLACE_META.values(), ids=INPLACE_META.keys())
def test_inplace_meta_matches_torch(build):
    same_meta(build)


def test_rand_ranges_and_statistics():
    retrograd.manual_seed(0)
    for d in (retrograd.float32, retrograd.float64, retrograd.float16, retrograd.bfloat16):
        x = retrograd.rand(200_000, dtype=d)._data.astype(np.float64)
        assert x.min() >= 0.0 and x.max() < 1.0
        assert abs(x.mean() - 0.5) < 0.01
        assert abs(x.var() - 1 / 12) < 0.005
    z = retrograd.randn(200_000)._data.astype(np.float64)
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    n = retrograd.normal(3.0, 2.0, (200_000,))._data
    assert abs(n.mean() - 3) < 0.03 and abs(n.std() - 2) < 0.03


def test_inplace_sampler_statistics():
    retrograd.manual_seed(1)
    n = 200_000
    u = retrograd.empty(n).uniform_(-2, 4)._data
    assert u.min() >= -2 and u.max() < 4 and abs(u.mean() - 1) < 0.03
    e = retrograd.empty(n).exponential_(2.0)._data
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.01
    b = retrograd.empty(n).bernoulli_(0.3)._data
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.01
    g = retrograd.empty(n).geometric_(0.25)._data
    assert g.min() >= 1 and abs(g.mean() - 4) < 0.05
    ln = retrograd.empty(n).log_normal_(0.0, 0.5)._data
    assert ln.min() > 0 and abs(np.log(ln).std() - 0.5) < 0.01
    c = retrograd.empty(n).cauchy_(1.0, 2.0)._data
    assert abs(np.median(c) - 1.0) < 0.05
    no = retrograd.empty(n, dtype=retrograd.float64).normal_(-1, 3)._data
    assert abs(no.mean() + 1) < 0.05 and abs(no.std() - 3) < 0.05


def test_randint_and_random_ranges():
    retrograd.manual_seed(2)
    r = retrograd.randint(-3, 4, (10_000,))._data
    assert r.min() == -3 and r.max() == 3 and r.dtype == np.int64
    assert retrograd.randint(5, (1000,))._data.max() == 4
    x = retrograd.zeros(100_000).random_()._data
    assert x.min() >= 0 and x.max() <= 2**24 and (x == np.round(x)).all()
    h = retrograd.zeros(100_000, dtype=retrograd.float16).random_()._data
    assert h.max() <= 2048
    i8 = retrograd.zeros(10_000, dtype=retrograd.int8).random_()._data
    assert i8.min() >= 0 and i8.max() == 127
    b = retrograd.zeros(1000, dtype=retrograd.bool).random_()._data
    assert b.any() and not b.all()
    t = retrograd.zeros(1000, dtype=retrograd.int16).random_(5)._data
    assert set(np.unique(t)) == {0, 1, 2, 3, 4}
    big = retrograd.zeros(1000, dtype=retrograd.int64).random_(0, None)._data
    assert big.max() > 2**60
    p = retrograd.randperm(50)._data
    assert sorted(p.tolist()) == list(range(50))


def test_normal_tensor_overloads_broadcast_and_values():
    retrograd.manual_seed(3)
    mean = retrograd.tensor([0.0, 100.0])
    x = retrograd.normal(mean, 1e-3)._data
    assert abs(x[0]) < 0.01 and abs(x[1] - 100) < 0.01
    y = retrograd.normal(retrograd.zeros(3, 1), retrograd.tensor([[0.0, 1.0]]))._data
    assert y.shape == (3, 2) and (y[:, 0] == 0).all()
    z = retrograd.normal(5.0, retrograd.zeros(4))._data
    assert (z == 5).all()


def test_multinomial_properties():
    retrograd.manual_seed(4)
    probs = retrograd.tensor([[0.0, 1.0, 3.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    s = retrograd.multinomial(probs, 2)._data
    assert s.dtype == np.int64 and s.shape == (2, 2)
    assert set(s[0].tolist()) == {1, 2}
    assert all(len(set(row)) == 2 for row in s.tolist())
    w = retrograd.multinomial(retrograd.tensor([0.1, 0.0, 0.9]), 20_000, replacement=True)._data
    assert 1 not in w and abs((w == 2).mean() - 0.9) < 0.01
    # without replacement, zero-probability categories come last (as in torch)
    assert retrograd.multinomial(retrograd.tensor([1.0, 1.0, 0.0]), 3)._data[2] == 2


def test_rand_like_keeps_layout():
    src = retrograd.zeros(3, 2).t()
    assert retrograd.rand_like(src).stride() == torch.rand_like(torch.zeros(3, 2).t()).stride()
    assert retrograd.randn_like(src).stride() == (1, 2)


# --- in-place samplers and autograd -----------------------------------------------------------

INPLACE_CALLS = {
    "normal_": lambda t: t.normal_(),
    "uniform_": lambda t: t.uniform_(),
    "bernoulli_": lambda t: t.bernoulli_(0.5),
    "bernoulli_tensor": lambda t: t.bernoulli_(retrograd.full(tuple(t.shape), 0.5)),
    "random_": lambda t: t.random_(),
    "random_to": lambda t: t.random_(3),
    "random_from_to": lambda t: t.random_(1, 3),
    "exponential_": lambda t: t.exponential_(),
    "cauchy_": lambda t: t.cauchy_(),
    "log_normal_": lambda t: t.log_normal_(),
    "geometric_": lambda t: t.geometric_(0.5),
}


@pytest.mark.parametrize("call", INPLACE_CALLS.values(), ids=INPLACE_CALLS.keys())
def test_inplace_bumps_version_and_returns_self(call):
    t = retrograd.zeros(4)
    v = t._version
    assert call(t) is t
    assert t._version == v + 1
    view = t[1:] if hasattr(t, "__getitem__") else t.view(4)
    v = t._version
    call(view)
    assert t._version == v + 1  # views share the version counter


@pytest.mark.parametrize("call", INPLACE_CALLS.values(), ids=INPLACE_CALLS.keys())
def test_inplace_on_leaf_requiring_grad(call):
    leaf = retrograd.zeros(4, requires_grad=True)
    with pytest.raises(RuntimeError) as err:
        call(leaf)
    with pytest.raises(RuntimeError) as t_err:
        torch.zeros(4, requires_grad=True).normal_()
    assert str(err.value) == str(t_err.value)
    with retrograd.no_grad():
        call(leaf)  # nn.init's path
    assert leaf.is_leaf and leaf.requires_grad and leaf.grad_fn is None
    assert leaf._version == 1


def test_inplace_random_gives_zero_gradient():
    x = retrograd.ones(3, requires_grad=True)
    y = x * 2
    y.normal_()
    (y * 3).sum().backward()
    np.testing.assert_array_equal(x.grad._data, np.zeros(3, np.float32))
    xt = torch.ones(3, requires_grad=True)
    yt = xt * 2
    yt.normal_()
    (yt * 3).sum().backward()
    np.testing.assert_array_equal(xt.grad.numpy(), x.grad._data)


def test_normal_functional_gradients_are_zero():
    mean = retrograd.zeros(3, requires_grad=True)
    std = retrograd.ones(3, requires_grad=True)
    retrograd.normal(mean, std).sum().backward()
    assert (mean.grad._data == 0).all() and (std.grad._data == 0).all()
    p = retrograd.full((3,), 0.5, requires_grad=True)
    retrograd.bernoulli(p).sum().backward()
    assert (p.grad._data == 0).all()


def test_inplace_samplers_under_no_grad_do_not_record():
    x = retrograd.zeros(3, requires_grad=True)
    y = x.clone()
    with retrograd.no_grad():
        y.uniform_(0, 1)
    assert y.grad_fn.name() == "CloneBackward0"


def test_uniform_float32_draws_in_float32():
    # torch's float32 uniform: 24 random bits of one draw, never a rounded float64 sample
    retrograd.manual_seed(0)
    t = retrograd.empty(10).uniform_(0, 1)
    assert t.dtype is retrograd.float32
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    np.testing.assert_array_equal(t._data, torch.empty(10).uniform_(0, 1).numpy())


# --- errors -----------------------------------------------------------------------------------

ERRORS = {
    "rand_int": lambda L: L.rand(2, dtype=L.int64),
    "rand_f8": lambda L: L.rand(3, dtype=L.float8_e4m3fn),
    "randn_int": lambda L: L.randn(2, dtype=L.int64),
    "rand_negative": lambda L: L.rand(-1),
    "rand_float_size": lambda L: L.rand(2.5),
    "rand_like_int": lambda L: L.rand_like(L.zeros(2, dtype=L.int64)),
    "randint_equal": lambda L: L.randint(5, 5, (3,)),
    "randint_reversed": lambda L: L.randint(5, 3, (3,)),
    "randint_bool_range": lambda L: L.randint(3, (2,), dtype=L.bool),
    "randint_uint8_neg": lambda L: L.randint(-1, 300, (2,), dtype=L.uint8),
    "randint_overflow": lambda L: L.randint(0, 2**63, (2,)),
    "randint_float_high": lambda L: L.randint(3.5, (2,)),
    "randperm_negative": lambda L: L.randperm(-1),
    "normal_negative_std": lambda L: L.normal(0.0, -1.0, (2,)),
    "normal_tf_negative_std": lambda L: L.normal(L.zeros(2), -1.0),
    "normal_tt_negative_std": lambda L: L.normal(L.zeros(2), L.tensor(-1.0)),
    "normal_tt_shapes": lambda L: L.normal(L.zeros(2), L.ones(3)),
    "normal_int_mean": lambda L: L.normal(L.zeros(2, dtype=L.int64), 1.0),
    "normal_inplace_std": lambda L: L.zeros(2).normal_(0, -1),
    "normal_inplace_int": lambda L: L.zeros(2, dtype=L.int64).normal_(),
    "uniform_reversed": lambda L: L.zeros(2).uniform_(1, 0),
    "uniform_reversed_frac": lambda L: L.zeros(3).uniform_(2.5, 1.5),
    "uniform_to_inf": lambda L: L.zeros(2).uniform_(0, float("inf")),
    "uniform_to_big": lambda L: L.zeros(3).uniform_(0, 1e39),
    "uniform_from_big": lambda L: L.zeros(3).uniform_(-1e39, 0),
    "uniform_f64_inf": lambda L: L.zeros(3, dtype=L.float64).uniform_(0, float("inf")),
    "uniform_bf16_big": lambda L: L.zeros(3, dtype=L.bfloat16).uniform_(0, 1e39),
    "uniform_f16_big": lambda L: L.zeros(3, dtype=L.float16).uniform_(0, 70000),
    "uniform_range_overflow": lambda L: L.zeros(3).uniform_(-3e38, 3e38),
    "uniform_int": lambda L: L.zeros(2, dtype=L.int64).uniform_(),
    "bernoulli_probs_range": lambda L: L.bernoulli(L.full((2,), 1.5)),
    "bernoulli_p_range": lambda L: L.bernoulli(L.full((2,), 0.5), 1.5),
    "bernoulli_int_probs": lambda L: L.bernoulli(L.full((2,), 1, dtype=L.int64)),
    "bernoulli_inplace_p": lambda L: L.zeros(2).bernoulli_(1.5),
    "bernoulli_inplace_tensor_p": lambda L: L.zeros(2).bernoulli_(L.tensor([0.5, 2.0])),
    "bernoulli_inplace_shapes": lambda L: L.zeros(2).bernoulli_(L.tensor([0.5, 0.5, 0.5])),
    "random_reversed": lambda L: L.zeros(2).random_(5, 2),
    "random_uint8_neg": lambda L: L.zeros(2, dtype=L.uint8).random_(-1, 2),
    "random_int8_from": lambda L: L.zeros(3, dtype=L.int8).random_(-200, 2),
    "random_int16_from": lambda L: L.zeros(3, dtype=L.int16).random_(-2**20, 2),
    "random_int32_to": lambda L: L.zeros(3, dtype=L.int32).random_(0, 2**40),
    "random_int64_overflow": lambda L: L.zeros(3, dtype=L.int64).random_(0, 2**63),
    "random_f16_to": lambda L: L.zeros(3, dtype=L.float16).random_(0, 2**20),
    "random_bool_to": lambda L: L.zeros(3, dtype=L.bool).random_(0, 3),
    "exponential_negative": lambda L: L.zeros(2).exponential_(-1),
    "exponential_zero": lambda L: L.zeros(2).exponential_(0),
    "exponential_int": lambda L: L.zeros(2, dtype=L.int64).exponential_(),
    "cauchy_sigma": lambda L: L.zeros(2).cauchy_(0, -1),
    "cauchy_int": lambda L: L.zeros(2, dtype=L.int64).cauchy_(),
    "log_normal_std": lambda L: L.zeros(2).log_normal_(0, -1),
    "log_normal_int": lambda L: L.zeros(2, dtype=L.int64).log_normal_(),
    "geometric_zero": lambda L: L.zeros(2).geometric_(0),
    "geometric_big": lambda L: L.zeros(2).geometric_(1.5),
    "multinomial_too_many": lambda L: L.multinomial(L.tensor([0.5, 0.5]), 3),
    "multinomial_negative": lambda L: L.multinomial(L.tensor([0.5, -0.1]), 1),
    "multinomial_inf": lambda L: L.multinomial(L.tensor([0.5, float("inf")]), 1),
    "multinomial_zero_sum": lambda L: L.multinomial(L.tensor([0.0, 0.0]), 1),
    "multinomial_0d": lambda L: L.multinomial(L.tensor(0.5), 1),
    "multinomial_int": lambda L: L.multinomial(L.tensor([1, 2]), 1),
    "multinomial_zero_samples": lambda L: L.multinomial(L.tensor([0.5, 0.5]), 0),
    "multinomial_no_categories": lambda L: L.multinomial(L.zeros(2, 0), 1),
}


@pytest.mark.parametrize("build", ERRORS.values(), ids=ERRORS.keys())
def test_errors_match_torch(build):
    same_error(build)


@pytest.mark.parametrize("build", [
    lambda L: L.zeros(3).random_(0, 2**25),
    lambda L: L.zeros(3, dtype=L.float64).random_(0, 2**60),
    lambda L: L.zeros(3, dtype=L.bfloat16).random_(0, 2**20),
], ids=["float32", "float64", "bfloat16"])
def test_random_precision_warning_matches_torch(build):
    with warnings.catch_warnings(record=True) as t_w:
        warnings.simplefilter("always")
        build(torch)
    with warnings.catch_warnings(record=True) as o_w:
        warnings.simplefilter("always")
        build(retrograd)
    assert len(o_w) == 1 and len(t_w) == 1
    t_msg = str(t_w[0].message).split(" (Triggered internally")[0]
    assert str(o_w[0].message) == t_msg


@pytest.mark.parametrize("name", ["manual_seed", "seed", "initial_seed", "get_rng_state",
                                  "set_rng_state", "rand", "randn", "randint", "randperm",
                                  "rand_like", "randn_like", "randint_like", "normal",
                                  "bernoulli", "multinomial", "Generator", "default_generator"])
def test_exported(name):
    assert hasattr(retrograd, name)


@pytest.mark.parametrize("name", ["normal_", "uniform_", "bernoulli_", "random_", "exponential_",
                                  "cauchy_", "log_normal_", "geometric_", "bernoulli",
                                  "multinomial"])
def test_methods(name):
    assert callable(getattr(retrograd.zeros(1), name))
