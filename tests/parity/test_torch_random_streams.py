"""torch's random streams (NOTE [torch's random streams]): after the same manual_seed, the same
calls draw torch's numbers, and the generator's state is torch's, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.utils.data as rdata

torch = pytest.importorskip("torch")
tdata = pytest.importorskip("torch.utils.data")


def _both(program, seed: int = 0):
    out = []
    for lib in (torch, retrograd):
        lib.manual_seed(seed)
        value = program(lib)
        out.append(value.detach().numpy() if hasattr(value, "detach") else value)
    return out


def _f64(lib):
    return lib.float64


def _probs(lib):
    p = np.random.default_rng(1).random((3, 6)).astype(np.float32)
    p[1, 2] = 0
    return lib.from_numpy(p)


def _rates(lib):
    return lib.from_numpy((np.random.default_rng(3).random(400) * 30).astype(np.float32))


def _signs(lib):
    return lib.from_numpy(np.random.default_rng(2).standard_normal((30, 7)).astype(np.float32))


# each drawn bit for bit as torch draws it
EXACT = {
    "rand": lambda L: L.rand(1000),
    "rand float64": lambda L: L.rand(7, 3, dtype=L.float64),
    "rand with a generator": lambda L: L.rand(5, generator=L.Generator().manual_seed(7)),
    "rand float16": lambda L: L.rand(5000, dtype=L.float16),
    "uniform_ bfloat16": lambda L: L.empty(5000, dtype=L.bfloat16).uniform_(-3.3, 7.1).float(),
    "nn.Linear float16": lambda L: L.nn.Linear(20, 30, dtype=L.float16).weight,
    "randn bfloat16": lambda L: L.randn(4803, dtype=L.bfloat16).float(),
    "normal_ float16": lambda L: L.empty(1003, dtype=L.float16).normal_(0.5, 2.0),
    "nn.Embedding float16": lambda L: L.nn.Embedding(100, 16, dtype=L.float16).weight,
    "randint": lambda L: L.randint(3, 17, (200,)),
    "randint wide": lambda L: L.randint(-2**62, 2**62, (50,)),
    "randint float": lambda L: L.randint(-5, 5, (9,), dtype=L.float32),
    "randperm": lambda L: L.randperm(1000),
    "uniform_": lambda L: L.empty(300, 4).uniform_(-0.3, 0.7),
    "uniform_ float64": lambda L: L.empty(30, 4, dtype=L.float64).uniform_(-0.1, 0.37),
    "uniform_ transposed": lambda L: L.empty(4, 30).t().uniform_(2.0, 5.0),
    "randn float64": lambda L: L.randn(1001, dtype=L.float64),
    "randn float64 in two calls": lambda L: L.cat([L.randn(5, dtype=L.float64),
                                                   L.randn(3, dtype=L.float64)]),
    "randn float32, fewer than 16": lambda L: L.randn(7),
    "randn float32": lambda L: L.randn(1001),
    "nn.Embedding": lambda L: L.nn.Embedding(100, 16).weight,
    "normal_ float64": lambda L: L.empty(300, 4, dtype=L.float64).normal_(2, 3),
    "normal_ non-contiguous": lambda L: L.empty(4, 300, dtype=L.float64).t().normal_(2, 3),
    "normal(tensor, float)": lambda L: L.normal(L.arange(40, dtype=L.float64), 2.5),
    "normal(float, tensor)": lambda L: L.normal(1.5, L.arange(40, dtype=L.float64)),
    "normal(float, float, size)": lambda L: L.normal(1.5, 0.3, (7, 9), dtype=L.float64),
    "randn_like": lambda L: L.randn_like(L.ones(5, 7, dtype=L.float64)),
    "rand_like": lambda L: L.rand_like(L.ones(5, 7)),
    "randint_like": lambda L: L.randint_like(L.ones(5, 7), 3, 11),
    "bernoulli(p)": lambda L: L.bernoulli(L.rand(500)),
    "bernoulli(p float64)": lambda L: L.bernoulli(L.rand(500, dtype=L.float64)),
    "bernoulli_(0.3)": lambda L: L.empty(20, 30).bernoulli_(0.3),
    "bernoulli_(0.3) transposed": lambda L: L.empty(20, 30).t().bernoulli_(0.3),
    "bernoulli_(p) transposed": lambda L: L.empty(30, 20).t().bernoulli_(L.rand(20, 30)),
    "dropout": lambda L: L.nn.functional.dropout(L.ones(50, 40), 0.1),
    "Dropout2d": lambda L: L.nn.Dropout2d(0.5)(L.ones(4, 6, 3, 3)),
    "random_": lambda L: L.empty(50).random_(),
    "random_ float64": lambda L: L.empty(50, dtype=L.float64).random_(),
    "random_ int64": lambda L: L.empty(50, dtype=L.int64).random_(),
    "random_ uint8": lambda L: L.empty(50, dtype=L.uint8).random_(),
    "random_(3, 9)": lambda L: L.empty(50, dtype=L.int32).random_(3, 9),
    "exponential_": lambda L: L.empty(300).exponential_(1.7),
    "exponential_ float64": lambda L: L.empty(300, dtype=L.float64).exponential_(1.7),
    "log_normal_": lambda L: L.empty(300, dtype=L.float64).log_normal_(0.5, 0.7),
    "cauchy_": lambda L: L.empty(300, dtype=L.float64).cauchy_(0.5, 2.0),
    "geometric_": lambda L: L.empty(300, dtype=L.int64).geometric_(0.3),
    "multinomial with replacement": lambda L: L.multinomial(_probs(L), 40, replacement=True),
    "multinomial without": lambda L: L.multinomial(_probs(L), 4),
    "multinomial one": lambda L: L.multinomial(_probs(L).double(), 1, replacement=True),
    "Categorical": lambda L: L.distributions.Categorical(logits=_probs(L)).sample((6,)),
    "rrelu": lambda L: L.nn.functional.rrelu(_signs(L), training=True),
    "rrelu float64 transposed": lambda L: L.nn.functional.rrelu(_signs(L).double().t(), 0.1,
                                                                0.7, training=True),
    "poisson": lambda L: L.poisson(_rates(L)),
    "poisson float64": lambda L: L.poisson(_rates(L).double()),
    "binomial": lambda L: L.binomial(L.full((300,), 50.0), L.linspace(0, 1, 300)),
    "binomial float64": lambda L: L.binomial(L.full((300,), 900.0, dtype=L.float64),
                                             L.linspace(0, 1, 300, dtype=L.float64)),
    "Gamma": lambda L: L.distributions.Gamma(_rates(L) / 7, 2.0).sample(),
    "Gamma float64": lambda L: L.distributions.Gamma(_rates(L).double() / 7, 2.0).sample(),
    "Gamma, then a normal": lambda L: L.cat([
        L.distributions.Gamma(L.tensor([0.5, 2.0, 7.0], dtype=L.float64),
                              L.ones(3, dtype=L.float64)).sample((3,)).flatten(),
        L.randn(3, dtype=L.float64)]),
    "StudentT": lambda L: L.distributions.StudentT(L.tensor([3.0])).sample((20,)),
    "Dirichlet": lambda L: L.distributions.Dirichlet(
        L.tensor([2.0, 3.0, 0.5, 1.0, 4.0, 0.1, 9.0])).sample((200,)),
    "Dirichlet float64": lambda L: L.distributions.Dirichlet(
        L.tensor([2.0, 3.0, 0.5], dtype=L.float64)).sample((200,)),
    "Beta": lambda L: L.distributions.Beta(L.tensor([2.0, 0.3]), L.tensor([3.0, 0.7])).sample(
        (100,)),
    "NegativeBinomial": lambda L: L.distributions.NegativeBinomial(
        5.0, L.tensor([0.3])).sample((20,)),
    "make_tensor": lambda L: L.testing.make_tensor((3, 4), dtype=L.float32, device="cpu",
                                                   noncontiguous=True),
    "make_tensor int8 bounds": lambda L: L.testing.make_tensor(40, dtype=L.int8, device="cpu",
                                                               low=-3.5, high=4.2,
                                                               exclude_zero=True),
    "make_tensor bool": lambda L: L.testing.make_tensor(20, dtype=L.bool, device="cpu"),
    "nn.Linear": lambda L: L.cat([L.nn.Linear(20, 30).weight.flatten(),
                                  L.nn.Linear(20, 30).bias]),
    "nn.Conv2d": lambda L: L.nn.Conv2d(3, 8, 3).weight,
    "nn.Embedding float64": lambda L: L.nn.Embedding(10, 16, dtype=L.float64).weight,
    "xavier_normal_ float64": lambda L: L.nn.init.xavier_normal_(L.empty(30, 20, dtype=L.float64)),
    "kaiming_normal_ float64": lambda L: L.nn.init.kaiming_normal_(
        L.empty(30, 20, dtype=L.float64)),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_draws_are_torch_bit_for_bit(name):
    theirs, ours = _both(EXACT[name])
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("mean, std", [(0.0, 1.0), (0.5, 2.0), (0.0, 0.02)])
@pytest.mark.parametrize("seed", [0, 1])
def test_float32_normal_blocks_are_torch_bit_for_bit(mean, std, seed):
    # torch's vectorized log and sincos, with its compiler's fused multiply-adds (the NOTE)
    theirs, ours = _both(lambda L: L.empty(200003).normal_(mean, std), seed)
    np.testing.assert_array_equal(ours, theirs)


def test_float32_fused_multiply_add_rounds_once():
    from retrograd._ops.kernels.vector_mathfun import fma32

    # a * b + c = 1 + 2**-24 + 2**-60 exactly: float64 rounds it onto the float32 tie
    # 1 + 2**-24, which a second rounding takes to 1; rounded once it is 1 + 2**-23
    a = np.array([2.0 ** -24 * (1 + 2.0 ** -12)], np.float32)
    b = np.array([1 - 2.0 ** -12 + 2.0 ** -24], np.float32)
    c = np.array([1.0], np.float32)
    assert (a.astype(np.float64) * b + c).astype(np.float32)[0] == 1.0
    assert fma32(a, b, c)[0] == np.float32(1 + 2.0 ** -23)
    assert fma32(a, -b, -c)[0] == -np.float32(1 + 2.0 ** -23)


def test_state_is_torch_byte_for_byte_and_loads_torch_states():
    for seed in (0, 42, 2**40 + 5):
        torch.manual_seed(seed)
        retrograd.manual_seed(seed)
        assert np.array_equal(retrograd.get_rng_state().numpy(), torch.get_rng_state().numpy())
        torch.randn(5, dtype=torch.float64)  # leaves a cached normal sample
        retrograd.randn(5, dtype=retrograd.float64)
        torch.rand(700)  # crosses a refill of the state
        retrograd.rand(700)
        assert np.array_equal(retrograd.get_rng_state().numpy(), torch.get_rng_state().numpy())
    # a state saved by torch continues torch's stream here, cached normal included
    torch.manual_seed(3)
    torch.randn(3, dtype=torch.float64)
    state = torch.get_rng_state()
    retrograd.set_rng_state(retrograd.from_numpy(state.numpy().copy()))
    np.testing.assert_array_equal(retrograd.randn(3, dtype=retrograd.float64).numpy(),
                                  torch.randn(3, dtype=torch.float64).numpy())
    g = retrograd.Generator().manual_seed(9)
    assert g.get_state().shape == (5056,) and g.initial_seed() == 9


def test_bad_state_is_refused_with_torch_message():
    before = retrograd.get_rng_state().numpy()
    with pytest.raises(RuntimeError, match="^Expected a CPUGeneratorImplState of size 5056 but "
                                           "found the input RNG state size to be 10$"):
        retrograd.set_rng_state(retrograd.zeros(10, dtype=retrograd.uint8))
    bad = bytearray(before.tobytes())
    bad[8:12] = (0).to_bytes(4, "little")  # `left`: 0 is outside 1..624
    with pytest.raises(RuntimeError, match="^Invalid mt19937 state$"):
        retrograd.set_rng_state(retrograd.from_numpy(np.frombuffer(bytes(bad), np.uint8).copy()))
    with pytest.raises(RuntimeError, match="^Invalid mt19937 state$"):
        torch.set_rng_state(torch.from_numpy(np.frombuffer(bytes(bad), np.uint8).copy()))
    assert np.array_equal(retrograd.get_rng_state().numpy(), before)


def _data_orders(lib, data):
    ds = data.TensorDataset(lib.arange(50))
    out = [b[0].tolist() for b in data.DataLoader(ds, batch_size=10, shuffle=True)]
    out += [b[0].tolist() for b in data.DataLoader(ds, batch_size=10, shuffle=True)]
    sampler = data.DistributedSampler(ds, num_replicas=2, rank=1, seed=3)
    sampler.set_epoch(2)
    out.append(list(sampler))
    out.append(list(data.RandomSampler(ds, replacement=True, num_samples=40)))
    out.append([list(s.indices) for s in data.random_split(ds, [0.3, 0.7])])
    out.append(list(data.WeightedRandomSampler([0.1, 0.5, 0.4, 0.2], 20)))
    g = lib.Generator().manual_seed(11)
    out.append([b[0].tolist() for b in data.DataLoader(ds, batch_size=25, shuffle=True,
                                                       generator=g)])
    return out


def test_data_pipelines_shuffle_as_torch():
    torch.manual_seed(5)
    theirs = _data_orders(torch, tdata)
    retrograd.manual_seed(5)
    ours = _data_orders(retrograd, rdata)
    assert ours == theirs
