"""vmap against torch.func.vmap on the same programs: values, in_dims/out_dims, nesting,
chunking, batching rules that need no fallback, and torch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from tests.func._parity import arr, errors_alike, parity

PROGRAMS = {
    "pointwise": lambda lib, x, y: (x * y).exp() - x.sin() / (1 + y * y),
    "broadcast_unbatched": lambda lib, x, y: x + lib.ones(4) * 2,
    "where": lambda lib, x, y: lib.where(x > y, x, y),
    "sum_all": lambda lib, x, y: x.sum(),
    "mean_dim": lambda lib, x, y: x.mean(-1, keepdim=True) + y.sum(0),
    "amax": lambda lib, x, y: x.amax(0),
    "softmax": lambda lib, x, y: lib.softmax(x, -1) * lib.log_softmax(y, 0),
    "views": lambda lib, x, y: x.view(12).reshape(2, 6).t().unsqueeze(0).squeeze(0),
    "permute_transpose": lambda lib, x, y: x.permute(1, 0).transpose(0, 1) + y.t().t(),
    "expand": lambda lib, x, y: x[0].expand(5, 4),
    "select_narrow": lambda lib, x, y: x.select(1, 2) + x.narrow(1, 0, 1).squeeze(1),
    "cat_stack": lambda lib, x, y: lib.cat([x, lib.ones(3, 4)], 1) + lib.stack([y, y], 0)[0]
    .repeat(1, 2),
    "matvec": lambda lib, x, y: x @ y[0],
    "matmul_unbatched_left": lambda lib, x, y: lib.ones(2, 3) @ x,
    "mm_both": lambda lib, x, y: x @ y.t(),
    "linear": lambda lib, x, y: lib.nn.functional.linear(x, y, y[:, 0]),
    "mlp_loss": lambda lib, x, y: lib.nn.functional.cross_entropy(
        lib.relu(x @ y.t()), lib.tensor([0, 1, 2])),
    "cumsum_flip": lambda lib, x, y: x.cumsum(1).flip(0),
    "gather": lambda lib, x, y: x.gather(1, lib.tensor([[0], [3], [1]])),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vmap_matches_torch(name):
    f = PROGRAMS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback (a performance warning) for these
        parity(lambda lib, x, y: lib.func.vmap(lambda a, b: f(lib, a, b))(x, y),
               arr(5, 3, 4), arr(5, 3, 4, seed=1))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vmap_equals_a_loop(name):
    f = PROGRAMS[name]
    x, y = retrograd.tensor(arr(5, 3, 4)), retrograd.tensor(arr(5, 3, 4, seed=1))
    got = retrograd.func.vmap(lambda a, b: f(retrograd, a, b))(x, y)
    want = retrograd.stack([f(retrograd, x[i], y[i]) for i in range(5)])
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-5)


@pytest.mark.parametrize("in_dims,out_dims", [
    (0, 0), (1, 0), (-1, 1), ((2, None), -1), ((0, 1), 2), ((None, 0), 0)])
def test_in_dims_out_dims(in_dims, out_dims):
    parity(lambda lib, x, y: lib.func.vmap(lambda a, b: a * b.sum(), in_dims=in_dims,
                                           out_dims=out_dims)(x, y),
           arr(4, 4, 4), arr(4, 4, 4, seed=1))


def test_nested_containers_and_none_outputs():
    def prog(lib, x, y):
        def f(d, t):
            return {"s": d["a"] * t[0], "n": 3}, d["b"].sum()
        return lib.func.vmap(f, in_dims=({"a": 0, "b": 1}, (0,)),
                             out_dims=({"s": 1, "n": None}, 0))({"a": x, "b": y}, (x,))
    parity(prog, arr(3, 2), arr(2, 3))


def test_nested_vmap_and_chunks():
    parity(lambda lib, x: lib.func.vmap(lib.func.vmap(lambda a: a.exp().sum()))(x), arr(3, 4, 5))
    parity(lambda lib, x: lib.func.vmap(lib.func.vmap(lambda a: a * x[0, 0, 0], in_dims=1))(x),
           arr(3, 4, 5))
    parity(lambda lib, x: lib.func.vmap(lambda a: a.cumsum(0), chunk_size=2)(x), arr(5, 3))


def test_fallback_warns_and_is_correct():
    x = retrograd.tensor(arr(4, 3, 3))
    with pytest.warns(UserWarning, match="There is a performance drop because we have not yet "
                      "implemented the batching rule for aten::median"):
        got = retrograd.func.vmap(retrograd.median)(x)
    np.testing.assert_allclose(got.numpy(), [retrograd.median(x[i]).item() for i in range(4)])


@pytest.mark.parametrize("prog", [
    lambda lib, x, y: lib.func.vmap(lib.add)(x, y),
    lambda lib, x, y: lib.func.vmap(lambda a: a.sum().item())(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a * 2 if a.sum() > 0 else a)(x),
    lambda lib, x, y: lib.func.vmap(lambda a: lib.zeros(4).copy_(a))(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a + lib.rand(4))(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a, in_dims=2)(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a, in_dims=(0, 0))(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a, out_dims=(0, 0))(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a, in_dims="a")(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a, in_dims=0)(3.0),
    lambda lib, x, y: lib.func.vmap(lambda a: 3.0)(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a)(),
    lambda lib, x, y: lib.func.vmap(lambda a: a, randomness="bad")(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a, in_dims=(None,))(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a, chunk_size=0)(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a, out_dims=None)(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a, out_dims=3)(x),
    lambda lib, x, y: lib.func.vmap(lambda a: a.masked_select(a > 0))(x),
])
def test_errors_as_torch(prog):
    errors_alike(prog, arr(3, 4), arr(2, 4))


def test_randomness_same_and_different_are_allowed():
    x = retrograd.tensor(arr(3, 4))
    same = retrograd.func.vmap(lambda a: a * 0 + retrograd.rand(4), randomness="same")(x)
    np.testing.assert_allclose(same[0].numpy(), same[1].numpy())
    retrograd.func.vmap(lambda a: a + retrograd.rand(4), randomness="different")(x)


@pytest.mark.parametrize("prog", [
    lambda lib, x: x.prod(), lambda lib, x: x.max() + x.min(), lambda lib, x: x.tril(),
    lambda lib, x: lib.nn.functional.pad(x, (1, 2)), lambda lib, x: (x > 0).all(),
    lambda lib, x: (x > 0).any(), lambda lib, x: x.clone().sin_().exp_(),
])
def test_more_rules(prog):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parity(lambda lib, x: lib.func.vmap(lambda a: prog(lib, a))(x), arr(4, 3, 3))


def test_fill_with_a_batched_value_matches_torch():
    """masked_fill / fill_ with a 0-d value per example, and the value's gradient (torch's
    where(mask, grad, 0).sum(), which batches where masked_select would not)."""
    import torch

    def run(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64)
        v = lib.tensor([10.0, 20.0], dtype=lib.float64)
        m = lib.tensor([True, False, True])
        vmap, grad = lib.func.vmap, lib.func.grad
        out = [vmap(lambda a, b: a.masked_fill(m, b))(x, v),
               vmap(lambda a, b: a.clone().masked_fill_(a > 2, b))(x, v),
               vmap(lambda a, b: a.clone().fill_(b))(x, v),
               vmap(lambda b: lib.zeros(3, dtype=lib.float64).masked_fill(m, b))(v)]
        out += vmap(grad(lambda a, b: (a.masked_fill(m, b) * a).sum(), argnums=(0, 1)))(x, v)
        return [t.numpy() for t in out]

    for got, want in zip(run(retrograd), run(torch)):
        np.testing.assert_array_equal(got, want)


def test_inplace_writes_into_views_under_vmap_of_grad_match_torch():
    """setitem, and in-place ops on slices of a batched value that records history: CopySlices
    on the base wraps the op's node, which keeps the view's values as the class holds them."""
    import torch

    def run(lib):
        x = lib.tensor([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=lib.float64)

        def f(a):
            b = a * 2
            b[0] = 7.0
            b[1:].mul_(a[1:])
            b[:2].exp_()
            return (b * a).sum()

        return lib.func.vmap(lib.func.grad(f))(x).numpy()

    np.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-12)


def test_double_backward_through_a_view_write_of_a_batched_value_is_refused():
    def f(a):
        b = a * 2
        b[1:].exp_()
        return b.sum()

    x = retrograd.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=retrograd.float64)
    with pytest.raises(NotImplementedError, match="double backward through an in-place write "
                                                  "into a view of a wrapper tensor subclass"):
        retrograd.func.vmap(retrograd.func.hessian(f))(x)


def test_inplace_scatter_family_under_vmap_matches_torch():
    """scatter_, scatter_add_ with an index the members share: the in-place forms take their
    out-of-place twins' same-rank rule."""
    import torch

    def run(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64)
        src = lib.tensor([[7.0, 8.0], [9.0, 10.0]], dtype=lib.float64)
        idx = lib.tensor([2, 0])
        vmap = lib.func.vmap
        out = [vmap(lambda a: a.clone().scatter_(0, idx, 9.0))(x),
               vmap(lambda a, s: a.clone().scatter_(0, idx, s))(x, src),
               vmap(lambda a, s: a.clone().scatter_add_(0, idx, s))(x, src)]
        out += lib.func.vmap(lib.func.grad(
            lambda a, s: (a.clone().scatter_(0, idx, s) * a).sum(), argnums=(0, 1)))(x, src)
        return [t.numpy() for t in out]

    for got, want in zip(run(retrograd), run(torch)):
        np.testing.assert_array_equal(got, want)


def test_named_tuple_results_come_back_as_their_type():
    # torch.return_types structseqs are rebuilt from one sequence (a namedtuple's fields
    # would be passed one by one); a 0-d example reduced along dim 0 is one of them
    import torch

    rng = np.random.default_rng(5)
    x, a = rng.standard_normal(3), rng.standard_normal((4, 3, 3))
    for lib in (retrograd, torch):
        lib_x, lib_a = lib.tensor(x), lib.tensor(a)
        m = lib.func.vmap(lambda t: t.max(0))(lib_x)
        s = lib.func.vmap(lib.linalg.slogdet)(lib_a)
        assert type(m).__name__ == "max" and type(s).__name__ == "linalg_slogdet"
        np.testing.assert_allclose(m.values.numpy(), x)
        np.testing.assert_array_equal(m.indices.numpy(), [0, 0, 0])
        np.testing.assert_allclose(s.logabsdet.numpy(), np.linalg.slogdet(a)[1], rtol=1e-12)
        np.testing.assert_allclose(s.sign.numpy(), np.linalg.slogdet(a)[0])
