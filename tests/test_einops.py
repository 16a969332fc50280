"""einops' functions on retrograd tensors (the backend retrograd defines when einops is
installed), against the same calls on torch tensors: values and gradients."""

import numpy as np
import pytest

import retrograd
from tests.parity.harness import torch_or_skip

einops = pytest.importorskip("einops")

CASES = [
    ("rearrange", ("b c (h w) -> b (c h) w",), {"h": 2}),
    ("rearrange", ("b c n -> n b c",), {}),
    ("rearrange", ("b c n -> (b c n)",), {}),
    ("reduce", ("b c n -> b n", "max"), {}),
    ("reduce", ("b c n -> c", "mean"), {}),
    ("reduce", ("b c (n two) -> b c n", "sum"), {"two": 2}),
    ("reduce", ("b c n -> b", "min"), {}),
    ("reduce", ("b c n -> b c", "prod"), {}),
    ("repeat", ("b c n -> b c n r",), {"r": 3}),
    ("repeat", ("b c n -> (r b) c n",), {"r": 2}),
    ("repeat", ("b c n -> b c (n r)",), {"r": 2}),
]


def _run(lib, name, args, kwargs):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((2, 3, 4)) + 2.0, requires_grad=True)
    y = getattr(einops, name)(x, *args, **kwargs)
    (y * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
    return y.detach().numpy(), x.grad.numpy(), tuple(y.shape)


@pytest.mark.parametrize("name, args, kwargs", CASES)
def test_einops_calls_match_torch(name, args, kwargs):
    torch = torch_or_skip()
    ours, theirs = _run(retrograd, name, args, kwargs), _run(torch, name, args, kwargs)
    assert ours[2] == theirs[2]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def test_einsum_pack_unpack_and_boolean_reductions():
    torch = torch_or_skip()
    out = []
    for lib in (retrograd, torch):
        rng = np.random.default_rng(1)
        a = lib.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
        b = lib.tensor(rng.standard_normal((2, 5, 4)), requires_grad=True)
        e = einops.einsum(a, b, "batch c n, batch d n -> batch c d")
        e.sum().backward()
        packed, shapes = einops.pack([a, lib.ones(2, 7, dtype=lib.float64)], "batch *")
        parts = einops.unpack(packed, shapes, "batch *")
        flags = einops.reduce(a > 0, "b c n -> b", "any"), einops.reduce(a > -5, "b c n -> c",
                                                                          "all")
        out.append([e.detach().numpy(), a.grad.numpy(), b.grad.numpy(),
                    packed.detach().numpy(), [tuple(p.shape) for p in parts],
                    [f.numpy() for f in flags]])
    for x, y in zip(*out):
        if isinstance(x, list) and x and isinstance(x[0], tuple):
            assert x == y
        elif isinstance(x, list):
            for p, q in zip(x, y):
                np.testing.assert_array_equal(p, q)
        else:
            np.testing.assert_allclose(x, y, rtol=1e-12)


def test_einops_errors_reach_the_user():
    with pytest.raises(einops.EinopsError):
        einops.rearrange(retrograd.ones(2, 3), "a b c -> a b c")
