"""igamma / igammac (regularized lower / upper incomplete gamma functions) against torch:
values on dense grids and at the edges, dtypes and errors, node names, the derivative for
`other` (and its derivative in `input`), the refused derivative for `input`, and forward-mode
AD's refusal."""

import math
import re
import warnings

import numpy as np
import pytest

import retrograd
from retrograd._ops.kernels import special_gamma as K
from retrograd.autograd import forward_ad as fwAD
from tests.parity.harness import both, error_of, torch_or_skip

OPS = ("igamma", "igammac")


def _grid(a_values, x_values):
    a, x = np.meshgrid(a_values, x_values, indexing="ij")
    return a.ravel(), x.ravel()


def _ours_and_torch(name, a, x, dtype="float64"):
    torch = torch_or_skip()
    ours = getattr(retrograd, name)(retrograd.tensor(a, dtype=getattr(retrograd, dtype)),
                                    retrograd.tensor(x, dtype=getattr(retrograd, dtype)))
    theirs = getattr(torch, name)(torch.tensor(a, dtype=getattr(torch, dtype)),
                                  torch.tensor(x, dtype=getattr(torch, dtype)))
    assert ours.dtype.name == dtype and str(theirs.dtype) == f"torch.{dtype}"
    return ours.numpy(), theirs.numpy()


# a and x from 1e-12 to 1e3: every method of the kernel, and the borders between them
_DENSE = np.unique(np.concatenate([
    np.geomspace(1e-12, 1e3, 240), np.linspace(0.01, 50.0, 200), np.linspace(150.0, 1000.0, 90),
    [1e-300, 1e-30, 0.5, 1.0, 1.1, 2.0, 19.99, 20.0, 20.01, 199.9, 200.0, 200.1]]))


def _assert_within_the_exponents_rounding(ours, theirs, a, x):
    """Both kernels scale by exp(a log(x) - x - lgamma(a)); the rounding of that exponent,
    an ulp of its largest term's size, sets how far apart two correct kernels may land (the
    elementary functions under it round differently from one CPU to another: exactly which
    values are torch's bit for bit depends on the machine)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.abs(a * np.log(x)) + np.abs(x) + np.abs(K.lgamma_array(a))
    # (capped: with terms near 1e300 the bound would say nothing; there both give 0 or 1)
    bound = np.minimum(2e-13 + 4 * np.finfo(np.float64).eps * np.nan_to_num(terms, nan=0.0),
                       1e-9)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    close = np.abs(ours - theirs) <= bound * np.abs(theirs)
    both = np.isfinite(theirs)
    assert close[both].all(), (a[both][~close[both]][:5], x[both][~close[both]][:5])
    np.testing.assert_array_equal(ours[~both], theirs[~both])


@pytest.mark.parametrize("name", OPS)
def test_float64_values_match_torch_on_a_dense_grid(name):
    a, x = _grid(_DENSE, _DENSE)
    ours, theirs = _ours_and_torch(name, a, x)
    _assert_within_the_exponents_rounding(ours, theirs, a, x)


def _near_and_far(rng, n):
    """Large a, with x within a few standard deviations (Temme's expansion, and the series
    torch cuts off at 2000 terms) or anywhere."""
    a = 10 ** rng.uniform(2, 300, n)
    near = a * (1 + rng.uniform(-20, 20, n) / np.sqrt(a))
    return np.concatenate([a, a, 10 ** rng.uniform(-300, 300, n)]), np.concatenate(
        [near, 10 ** rng.uniform(-300, 300, n), 10 ** rng.uniform(-300, 300, n)])


@pytest.mark.parametrize("name", OPS)
def test_float64_values_match_torch_for_huge_and_tiny_arguments(name):
    a, x = _near_and_far(np.random.default_rng(0), 3000)
    ours, theirs = _ours_and_torch(name, a, x)
    _assert_within_the_exponents_rounding(ours, theirs, a, x)


_EDGES = [math.nan, -math.inf, -1.0, -0.0, 0.0, 1e-300, 0.5, 1.0, 2.0, 1e300, math.inf]


@pytest.mark.parametrize("name", OPS)
def test_edge_values_are_torchs(name):
    """NaN for negative arguments and for a = 0 unless x > 0, limits at 0 and infinity (even
    with the other argument NaN), both ways."""
    ours, theirs = _ours_and_torch(name, *_grid(_EDGES, _EDGES))
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", OPS)
def test_lower_and_upper_add_to_one(name):
    a, x = _grid(np.geomspace(1e-3, 500, 60), np.geomspace(1e-3, 700, 60))
    total = K.igamma(a, x) + K.igammac(a, x)
    np.testing.assert_allclose(total, 1.0, rtol=1e-14)


@pytest.mark.parametrize("name", OPS)
def test_float32_is_computed_in_float64_and_rounded_once(name):
    values = np.unique(np.concatenate([np.geomspace(1e-6, 1e3, 80), np.linspace(0.1, 40, 60)]))
    a, x = _grid(values, values)
    ours, theirs = _ours_and_torch(name, a, x, "float32")
    want = getattr(K, name)(a.astype(np.float32).astype(np.float64),
                            x.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(ours, want.astype(np.float32))
    # torch runs float32 in float32: a few of its ulps apart (more where its float32 series
    # loses digits on tiny values)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=2e-6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_dtypes(dtype):
    def prog(lib):
        a = lib.tensor([0.5, 2.0, 7.5, 30.0], dtype=getattr(lib, dtype))
        x = lib.tensor([0.25, 3.0, 6.0, 28.0], dtype=getattr(lib, dtype))
        results = (lib.igamma(a, x), lib.igammac(a, x), a.igamma(x))
        return [str(r.dtype) for r in results], [r.float() for r in results]

    both(prog, rtol=1e-2, atol=1e-3)


def test_type_promotion_and_broadcasting():
    def prog(lib):
        f32 = lib.tensor([[0.5], [2.0]])
        f64 = lib.tensor([1.0, 2.5, 4.0], dtype=lib.float64)
        ints = lib.tensor([1, 2, 3])
        scalar64 = lib.tensor(3.0, dtype=lib.float64)
        return (lib.igamma(f32, f64), lib.igammac(ints, f32), lib.igamma(f32, ints),
                lib.igammac(f32, scalar64), lib.igamma(scalar64, scalar64),
                lib.igamma(f32.t(), f32.t().expand(3, 2)))

    both(prog, rtol=1e-6)


def test_layout_of_non_contiguous_inputs_is_torchs():
    def prog(lib):
        a = lib.linspace(0.5, 6.0, 12).reshape(3, 4).t()
        x = lib.linspace(0.2, 5.0, 12).reshape(4, 3)
        return [(r, r.stride()) for r in (lib.igamma(a, x), lib.igammac(a, a), a.igamma(x))]

    both(prog)


ERRORS = [
    lambda lib: lib.igamma(lib.tensor([1, 2]), lib.tensor([1, 2])),
    lambda lib: lib.igammac(lib.tensor([1, 2]), lib.tensor([3, 4])),
    lambda lib: lib.igamma(lib.tensor([True]), lib.tensor([False])),
    lambda lib: lib.igammac(lib.tensor([1], dtype=lib.int32), lib.tensor([2], dtype=lib.int32)),
    lambda lib: lib.igamma(lib.tensor([1.0]), 2.0),
    lambda lib: lib.igamma(2, lib.tensor([1.0])),
    lambda lib: lib.igammac(lib.tensor([1.0]), None),
    lambda lib: lib.tensor([1.0]).igamma(2),
    lambda lib: lib.tensor([1.0]).igammac(0.5),
    lambda lib: lib.tensor([1.0]).igamma_(2.0),
    lambda lib: lib.tensor([1.0]).igammac_(1),
    lambda lib: lib.igamma(lib.ones(2), lib.ones(3)),
    lambda lib: lib.igamma(lib.ones(2, dtype=lib.int64), lib.ones(3, dtype=lib.int64)),
    lambda lib: lib.ones(2).igamma_(lib.ones(3, 2)),
    lambda lib: lib.tensor([1, 2]).igamma_(lib.tensor([1.0, 2.0])),
    lambda lib: lib.tensor([1, 2]).igammac_(lib.tensor([1, 2])),
    lambda lib: lib.ones(2, requires_grad=True).igamma_(lib.ones(2)),
    lambda lib: lib.igamma(lib.ones(2), lib.ones(2), out=lib.empty(2, dtype=lib.int64)),
    lambda lib: lib.igammac(lib.ones(2, requires_grad=True), lib.ones(2), out=lib.empty(2)),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_are_torchs_word_for_word(call):
    torch = torch_or_skip()
    assert error_of(call, retrograd) == error_of(call, torch)


def test_in_place_and_out_variants():
    def prog(lib):
        a = lib.tensor([0.5, 2.0, 9.0], dtype=lib.float64)
        x = lib.tensor([1.0, 0.5, 12.0], dtype=lib.float64)
        out = lib.empty(3, dtype=lib.float64)
        returned = lib.igammac(a, x, out=out)
        wide = lib.tensor([0.5, 2.0, 9.0], dtype=lib.float64)
        wide.igamma_(lib.tensor([1.0, 0.5, 12.0]))  # float32 other into float64 self
        return (a.clone().igamma_(x), a.clone().igammac_(x), out, returned is out, wide)

    both(prog, rtol=1e-15, atol=0)


def test_node_names_and_saved_tensors():
    def prog(lib):
        a = lib.tensor([0.5, 2.0])
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        y, z = lib.igamma(a, x), x.igammac(a)  # x as `input`: the node exists all the same
        w = a.clone().igamma_(x)
        return (y.grad_fn.name(), z.grad_fn.name(), w.grad_fn.name(),
                a.clone().igammac_(x).grad_fn.name(), y.grad_fn._saved_self,
                y.grad_fn._saved_other)

    both(prog)


@pytest.mark.parametrize("name", OPS)
def test_gradient_for_other_passes_gradcheck_and_gradgradcheck(name):
    fn = getattr(retrograd, name)
    a = retrograd.tensor([[0.3], [1.0], [2.5], [7.0], [30.0]], dtype=retrograd.float64)
    x = retrograd.tensor([0.2, 0.9, 2.0, 6.5, 28.0], dtype=retrograd.float64,
                         requires_grad=True)
    assert retrograd.autograd.gradcheck(lambda x: fn(a, x), (x,))
    assert retrograd.autograd.gradgradcheck(lambda x: fn(a, x), (x,))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(0) in the formula, as in torch's
@pytest.mark.parametrize("name", OPS)
def test_first_and_second_derivatives_for_other_are_torchs(name):
    def prog(lib):
        a = lib.tensor([[0.5], [1.0], [2.0], [6.0]], dtype=lib.float64)
        x = lib.tensor([0.0, 0.3, 1.0, 4.0, 9.0], dtype=lib.float64, requires_grad=True)
        y = getattr(lib, name)(a, x)
        (g,) = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        x2 = x.detach().clone().requires_grad_()
        getattr(a.expand(4, 5).clone(), name + "_")(x2).sum().backward()
        return g, gg, x2.grad

    both(prog, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("name", OPS)
def test_derivative_for_other_differentiates_again_in_input(name):
    """The x-derivative's lgamma(a) has a derivative (digamma), so the mixed second derivative
    exists, as in torch."""
    def prog(lib):
        a = lib.tensor([[0.5], [1.0], [2.0], [6.0]], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([0.3, 1.0, 4.0, 9.0], dtype=lib.float64, requires_grad=True)
        y = getattr(lib, name)(a, x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (ga,) = lib.autograd.grad(g.sum(), a)
        return g, ga

    both(prog, rtol=1e-13, atol=0)
    fn = getattr(retrograd, name)
    x = retrograd.tensor([0.4, 1.5, 3.0], dtype=retrograd.float64, requires_grad=True)

    def dx(a):
        return retrograd.autograd.grad(fn(a, x).sum(), x, create_graph=True)[0]

    a = retrograd.tensor([[0.7], [2.5]], dtype=retrograd.float64, requires_grad=True)
    assert retrograd.autograd.gradcheck(dx, (a,))


@pytest.mark.parametrize("name", OPS)
def test_derivative_for_input_raises_torchs_error_at_backward(name):
    def prog(lib):
        a = lib.tensor([0.5, 2.0], requires_grad=True)
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        y = getattr(lib, name)(a, x)  # the forward is fine
        return error_of(lambda: y.sum().backward()), y.requires_grad

    res = both(prog)
    assert res[0] == ("raised", "NotImplementedError",
                      f"the derivative for '{name}: input' is not implemented.")


def _forward_ad_error(lib, call):
    with lib.autograd.forward_ad.dual_level():
        x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64)
        dual = lib.autograd.forward_ad.make_dual(x, lib.ones(3, dtype=lib.float64))
        err = error_of(call, lib, x, dual)
    return err[:2] + (err[2].split("\n")[0],)  # torch adds a line on where to ask for it


FORWARD_CALLS = [
    lambda lib, x, d: lib.igamma(d, d),
    lambda lib, x, d: lib.igammac(x, d),
    lambda lib, x, d: d.igamma(x),
    lambda lib, x, d: x.clone().igamma_(d),
    lambda lib, x, d: d.clone().igammac_(x),
]


@pytest.mark.parametrize("call", FORWARD_CALLS)
def test_forward_mode_ad_is_refused_as_in_torch(call):
    torch = torch_or_skip()
    ours = _forward_ad_error(retrograd, call)
    assert ours == _forward_ad_error(torch, call)
    assert re.search(r"Trying to use forward AD with .* that does not support it", ours[2])


def test_forward_mode_refusal_is_not_skipped_by_the_dual_fast_path():
    from retrograd._ops import forward_ad_fast
    from retrograd._ops.registry import OPS as DECLARED

    x = retrograd.tensor([0.5, 1.0], dtype=retrograd.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, retrograd.ones(2, dtype=retrograd.float64))
        for name in ("igamma", "igammac"):
            assert DECLARED[name].jvp_rule == "unimplemented"
            assert forward_ad_fast.dual_fast(DECLARED[name], (dual, dual)) is NotImplemented
            with pytest.raises(NotImplementedError, match="because it has not been implemented"):
                getattr(retrograd, name)(dual, dual)
        # no tangent involved: nothing to refuse
        assert retrograd.igamma(x, x).shape == (2,)


def test_lgamma_kernel_matches_the_c_library():
    values = np.concatenate([np.geomspace(1e-300, 1e300, 400), np.linspace(-30.3, 40.0, 2001),
                             [0.5, 1.0, 1.5, 2.0, 2.5, 8.0]])
    want = np.array([math.lgamma(v) if v > 0 or v != round(v) else math.inf for v in values])
    got = K.lgamma(values)
    # relative error, absolute near the zeros at 1 and 2 (and the negative axis' zeros)
    np.testing.assert_allclose(got, want, rtol=2e-14, atol=3e-14)
    assert K.lgamma(np.array([0.0, -0.0, -3.0, math.inf, -math.inf])).tolist() == [math.inf] * 5
    assert np.isnan(K.lgamma(np.array([math.nan])))[0]


def test_temme_coefficients_start_as_published():
    d = K.temme_coefficients()
    assert d.shape == (25, 25)
    # DLMF 8.12.8: c_0(0) = -1/3, c_0'(0) = 1/12, c_1(0) = -1/540
    assert (d[0, 0], d[0, 1], d[1, 0]) == (-1 / 3, 1 / 12, -1 / 540)


@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_vmap_batches_pointwise_without_a_loop(name):
    """A batching rule, not the per-member fallback (which warns): the same values as
    torch.func.vmap over both arguments and over one."""
    a = np.random.default_rng(0).random((4, 5)) * 3 + 0.1
    x = np.random.default_rng(1).random((4, 5)) * 4

    def run(lib):
        fn = getattr(lib, name)
        both = lib.func.vmap(fn)(lib.tensor(a), lib.tensor(x))
        one = lib.func.vmap(lambda u: fn(u, lib.tensor(x[0])))(lib.tensor(a))
        return both.numpy(), one.numpy()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = run(retrograd)
    for got, expected in zip(ours, run(torch_or_skip())):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
