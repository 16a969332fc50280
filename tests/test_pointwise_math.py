"""Focused tests of the element-wise math functions (trigonometric.py, pointwise_math.py,
special_math.py, retrograd.special): kernel accuracy against torch in float64, dtypes of
integer / bool / half inputs, edge values and gradients where gradcheck cannot go, torch's
errors, in-place and out= forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd
from retrograd._ops.kernels import pointwise_math as K
from tests.nn_functional_helpers import raises_like

torch = pytest.importorskip("torch")


def _both(values, dtype="float64", requires_grad=False):
    a = np.asarray(values, dtype=dtype)
    return (retrograd.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _same(ours, theirs, rtol=1e-6, atol=0.0):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol,
                               atol=atol, equal_nan=True)


# --- kernels against torch in float64 ------------------------------------------------------------

_rng = np.random.default_rng(7)
_WIDE = np.concatenate([_rng.uniform(-6, 6, 2000), _rng.uniform(-30, 30, 300),
                        [0.0, -0.0, 1.0, -1.0, 8.0, np.inf, -np.inf, np.nan, 26.0, -26.0]])
_NEAR_ONE = 10.0 ** -_rng.uniform(1, 15.9, 200)
_UNIT = np.concatenate([_rng.uniform(-1, 1, 2000), 1 - _NEAR_ONE, -1 + _NEAR_ONE,
                        10.0 ** -_rng.uniform(1, 300, 50),
                        [0.0, 1.0, -1.0, 1.5, -2.0, np.nan, 0.5, -0.5]])
_PROB = np.concatenate([_rng.uniform(0, 1, 2000), 10.0 ** -_rng.uniform(1, 300, 200),
                        1 - _NEAR_ONE, [0.0, 1.0, 0.5, -1.0, 2.0, np.nan]])
_BESSEL = np.concatenate([_rng.uniform(-40, 40, 2000), _rng.uniform(-700, 700, 200),
                          [0.0, 29.99, 30.01, 709.7, 713.0, -713.0, np.inf, -np.inf, np.nan]])


@pytest.mark.parametrize("kernel, reference, x, rtol", [
    (K.erfc_array, "erfc", _WIDE, 1e-14),
    (K.erfcx_array, "special.erfcx", _WIDE, 1e-13),
    (K.log_ndtr_array, "special.log_ndtr", _WIDE, 1e-12),
    (K.erfinv_array, "erfinv", _UNIT, 1e-14),
    (K.ndtri_array, "special.ndtri", _PROB, 1e-13),
    (K.i0_array, "i0", _BESSEL, 1e-14),
    (K.i0e_array, "special.i0e", _BESSEL, 1e-14),
    (K.i1_array, "special.i1", _BESSEL, 1e-14),
    (K.i1e_array, "special.i1e", _BESSEL, 1e-14),
    (K.sinc_array, "sinc", _WIDE, 1e-14),
    (K.entr_array, "special.entr", _WIDE, 1e-15),
], ids=lambda v: v if isinstance(v, str) else "")
def test_kernel_matches_torch_float64(kernel, reference, x, rtol):
    expected = _fn(torch, reference)(torch.tensor(x)).numpy()
    got = kernel(x)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(got[np.isinf(expected)], expected[np.isinf(expected)])
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-300, equal_nan=True)


@pytest.mark.parametrize("name", ["erfc", "erfinv", "sinc", "i0"])
def test_float32_kernels_round_like_torch(name):
    x = (_UNIT if name == "erfinv" else _WIDE[:2000]).astype(np.float32)
    ours = getattr(retrograd, name)(retrograd.tensor(x))
    theirs = getattr(torch, name)(torch.tensor(x))
    atol = 1e-6 if name == "sinc" else 0.0  # sin(pi x) of float32 pi x near integers
    _same(ours, theirs, rtol=2e-6, atol=atol)


# --- dtypes --------------------------------------------------------------------------------------

_UNARY = ["sinh", "cosh", "asinh", "acosh", "atanh", "asin", "acos", "atan", "sinc",
          "deg2rad", "rad2deg", "erfc", "erfinv", "i0", "nan_to_num", "arcsin", "arctanh"]


@pytest.mark.parametrize("name", _UNARY)
@pytest.mark.parametrize("dtype", ["int64", "bool", "float16", "float64"])
def test_unary_dtypes(name, dtype):
    values = [1, 0, 1] if dtype == "bool" else [1, 2, 0]
    ours, theirs = _both(values, dtype)
    _same(getattr(retrograd, name)(ours), getattr(torch, name)(theirs), rtol=1e-3)


@pytest.mark.parametrize("name", ["atan2", "hypot", "logaddexp", "logaddexp2", "xlogy",
                                  "copysign", "float_power", "fmax", "fmin", "heaviside",
                                  "ldexp", "nextafter", "gcd", "lcm", "arctan2"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float16", "float32"])
def test_binary_dtypes_and_errors(name, dtype):
    values = [1, 0, 1] if dtype == "bool" else [3, 2, 0]
    ours, theirs = _both(values, dtype)
    f_ours, f_theirs = getattr(retrograd, name), getattr(torch, name)
    try:
        expected = f_theirs(theirs, theirs)
    except Exception:
        raises_like(lambda: f_ours(ours, ours), lambda: f_theirs(theirs, theirs))
        return
    _same(f_ours(ours, ours), expected, rtol=1e-3)


@pytest.mark.parametrize("name", ["atan2", "xlogy", "copysign", "fmax", "ldexp", "nextafter"])
def test_mixed_dtypes(name):
    a_ours, a_theirs = _both([0.5, 1.5, -2.0], "float32")
    b_ours, b_theirs = _both([2, 3, 1], "int64")
    c_ours, c_theirs = _both([0.25, -1.0, 2.0], "float64")
    f_ours, f_theirs = getattr(retrograd, name), getattr(torch, name)
    if name != "nextafter":
        _same(f_ours(a_ours, b_ours), f_theirs(a_theirs, b_theirs))
    _same(f_ours(a_ours, c_ours), f_theirs(a_theirs, c_theirs))


def test_scalar_overloads():
    x, t = _both([0.0, 0.5, 2.0], "float32")
    _same(retrograd.xlogy(2, x), torch.xlogy(2, t))
    _same(retrograd.xlogy(x, 3), torch.xlogy(t, 3))
    _same(retrograd.copysign(x, -1), torch.copysign(t, -1))
    _same(retrograd.float_power(x, 2), torch.float_power(t, 2))
    _same(retrograd.float_power(2, x), torch.float_power(2, t))
    i, ti = _both([1, 2, 3], "int64")
    _same(retrograd.copysign(i, -1), torch.copysign(ti, -1))
    _same(retrograd.special.xlog1py(i, 2.0), torch.special.xlog1py(ti, 2.0))


@pytest.mark.parametrize("name", ["atan2", "hypot", "logaddexp", "fmax", "fmin", "ldexp",
                                  "nextafter", "heaviside", "gcd"])
def test_number_operand_is_a_type_error(name):
    x, t = _both([1.0, 2.0])
    raises_like(lambda: getattr(retrograd, name)(x, 2.0),
                 lambda: getattr(torch, name)(t, 2.0))


def test_heaviside_needs_one_dtype():
    x, t = _both([-1.0, 0.0, 2.0], "float32")
    v, tv = _both([0.5, 0.5, 0.5], "float64")
    raises_like(lambda: retrograd.heaviside(x, v), lambda: torch.heaviside(t, tv))
    v, tv = _both([0.5, 0.25, 0.5], "float32")
    _same(retrograd.heaviside(x, v), torch.heaviside(t, tv))


def test_frexp():
    x, t = _both([0.0, 3.0, -0.75, np.inf, 1e-310, 5.0], "float64")
    ours, theirs = retrograd.frexp(x), torch.frexp(t)
    assert type(ours).__name__ == "frexp" and ours._fields == ("mantissa", "exponent")
    _same(ours.mantissa, theirs.mantissa)
    _same(ours.exponent, theirs.exponent)
    i, ti = _both([1, 2], "int64")
    raises_like(lambda: retrograd.frexp(i), lambda: torch.frexp(ti))
    m, e = retrograd.empty(6, dtype=retrograd.float64), retrograd.empty(6, dtype=retrograd.int32)
    out = retrograd.frexp(x, out=(m, e))
    assert out.mantissa is m and out.exponent is e
    _same(m, theirs.mantissa)


def test_nan_to_num_defaults():
    for dtype in ("float16", "float32", "float64"):
        x, t = _both([np.nan, np.inf, -np.inf, 1.5], dtype)
        _same(retrograd.nan_to_num(x), torch.nan_to_num(t))
        _same(retrograd.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0),
              torch.nan_to_num(t, nan=1.0, posinf=2.0, neginf=-3.0))
        y, u = x.clone(), t.clone()
        retrograd.nan_to_num_(y, posinf=7.0)
        torch.nan_to_num_(u, posinf=7.0)
        _same(y, u)
    i, ti = _both([1, 2], "int64")
    _same(retrograd.nan_to_num(i, nan=1.5), torch.nan_to_num(ti, nan=1.5))


def test_gcd_lcm():
    a, ta = _both([12, -18, 0, 7, 0], "int64")
    b, tb = _both([8, 12, 5, -21, 0], "int64")
    _same(retrograd.gcd(a, b), torch.gcd(ta, tb))
    _same(retrograd.lcm(a, b), torch.lcm(ta, tb))
    c = a.clone()
    retrograd.gcd_(c, b)
    _same(c, torch.gcd(ta, tb))
    f, tf = _both([1.0, 2.0])
    raises_like(lambda: retrograd.gcd(f, f), lambda: torch.gcd(tf, tf))


# --- values and gradients at the edges ----------------------------------------------------------

_EDGES = {
    "asin": [-1.0, 1.0, 0.0, 1.5], "acos": [-1.0, 1.0, 0.0, 2.0], "atanh": [-1.0, 1.0, 0.0],
    "acosh": [1.0, 0.5, 2.0], "asinh": [0.0, np.inf], "sinc": [0.0, 1.0, -2.0, 1e-20],
    "erfinv": [-1.0, 1.0, 0.0, 1.5], "i0": [0.0, -3.0], "nan_to_num": [np.nan, np.inf, -1.0],
    "special.i1": [0.0, 1e-20, -2.0], "special.i1e": [0.0, -1e-20, 3.0],
    "special.i0e": [0.0, -2.0], "special.ndtri": [0.0, 1.0, 0.5],
    "special.log_ndtr": [-40.0, 0.0, 10.0], "special.erfcx": [-30.0, 0.0, 1e10],
    "special.entr": [0.0, 1.0, -1.0], "erfc": [-30.0, 0.0, 30.0],
}


def _fn(lib, name):
    fn = lib
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn


@pytest.mark.parametrize("name", sorted(_EDGES))
def test_edge_values_and_gradients(name):
    x, t = _both(_EDGES[name], requires_grad=True)
    ours, theirs = _fn(retrograd, name)(x), _fn(torch, name)(t)
    _same(ours, theirs, rtol=1e-12)
    (g_ours,) = retrograd.autograd.grad(ours.sum(), x)
    (g_theirs,) = torch.autograd.grad(theirs.sum(), t)
    _same(g_ours, g_theirs, rtol=1e-12)


@pytest.mark.parametrize("name, x, y", [
    ("xlogy", [0.0, 0.0, 1.0, 2.0], [0.0, -1.0, 0.0, np.nan]),
    ("special.xlog1py", [0.0, 0.0, 1.0], [-1.0, -2.0, -1.0]),
    ("copysign", [0.0, -0.0, 1.0, -2.0], [-1.0, 1.0, -0.0, 0.0]),
    ("fmax", [np.nan, 1.0, 2.0, 1.0], [1.0, np.nan, 2.0, 3.0]),
    ("fmin", [np.nan, 1.0, 2.0, 1.0], [1.0, np.nan, 2.0, 3.0]),
    ("atan2", [0.0, 1.0, -1.0], [0.0, 0.0, -0.0]),
    ("hypot", [0.0, 3.0], [0.0, 4.0]),
    ("logaddexp", [np.inf, -np.inf, 1.0], [np.inf, -np.inf, 1.0]),
    ("nextafter", [0.0, 1.0], [1.0, 0.0]),
    ("ldexp", [1.5, -2.0], [3.0, -1.0]),
])
def test_binary_edges(name, x, y):
    a, ta = _both(x, requires_grad=True)
    b, tb = _both(y, requires_grad=True)
    ours, theirs = _fn(retrograd, name)(a, b), _fn(torch, name)(ta, tb)
    _same(ours, theirs, rtol=1e-12)
    g_ours = retrograd.autograd.grad(ours.sum(), (a, b))
    g_theirs = torch.autograd.grad(theirs.sum(), (ta, tb))
    for o, t in zip(g_ours, g_theirs):
        _same(o, t, rtol=1e-12)


def test_xlogy_scalar_other_grad_masks_zero_self():
    x, t = _both([0.0, 1.0], requires_grad=True)
    for other in (0.0, -1.0, 2.0):
        (g,) = retrograd.autograd.grad(retrograd.xlogy(x, other).sum(), x)
        (tg,) = torch.autograd.grad(torch.xlogy(t, other).sum(), t)
        _same(g, tg)


# --- in-place forms, backward errors, out= ----------------------------------------------------


@pytest.mark.parametrize("name", ["asinh_", "acosh_", "atanh_", "arcsinh_"])
def test_inplace_inverse_hyperbolic_has_no_derivative(name):
    x, t = _both([1.5, 2.0], requires_grad=True)
    ours, theirs = getattr(x.clone(), name)(), getattr(t.clone(), name)()
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    _same(ours, theirs)
    raises_like(lambda: ours.sum().backward(), lambda: theirs.sum().backward())


def test_heaviside_backward_raises():
    x, t = _both([1.0, -1.0], requires_grad=True)
    v, tv = _both([0.5, 0.5])
    ours, theirs = retrograd.heaviside(x, v), torch.heaviside(t, tv)
    assert ours.grad_fn.name() == theirs.grad_fn.name()
    raises_like(lambda: ours.sum().backward(), lambda: theirs.sum().backward())
    ours, theirs = x.clone().heaviside_(v), t.clone().heaviside_(tv)
    raises_like(lambda: ours.sum().backward(), lambda: theirs.sum().backward())


@pytest.mark.parametrize("name", ["asin_", "sinh_", "erfc_", "sinc_", "i0_", "nan_to_num_",
                                  "deg2rad_", "arcsin_", "xlogy_"])
def test_inplace_on_integer_refuses_float_result(name):
    x, t = _both([1, 0], "int64")
    args = (2.0,) if name == "xlogy_" else ()
    if name == "nan_to_num_":  # stays integer: allowed
        getattr(x, name)()
        return
    raises_like(lambda: getattr(x, name)(*args), lambda: getattr(t, name)(*args))
    assert x.tolist() == [1, 0]


def test_inplace_functions_exist_where_torch_has_them():
    for name in ("asin_", "arcsin_", "sinh_", "arctanh_", "erfc_", "sinc_", "deg2rad_",
                 "rad2deg_", "xlogy_", "nan_to_num_", "ldexp_", "i0_", "gcd_", "lcm_"):
        assert hasattr(retrograd, name) == hasattr(torch, name), name
    for name in ("atan2_", "arctan2_", "hypot_", "copysign_", "erfinv_", "nextafter_",
                 "heaviside_", "float_power_", "arccosh_"):
        assert hasattr(retrograd.Tensor, name), name


def test_float_power_inplace():
    x, t = _both([0.5, 1.5], "float32")
    raises_like(lambda: x.float_power_(2), lambda: t.float_power_(2))
    x, t = _both([0.5, 1.5], "float64", requires_grad=True)
    ours, theirs = x.clone().float_power_(2.5), t.clone().float_power_(2.5)
    _same(ours, theirs)
    assert ours.grad_fn.name() == theirs.grad_fn.name()


def test_out_variants():
    x, t = _both([0.25, 0.5], "float32")
    out, tout = retrograd.empty(2), torch.empty(2)
    retrograd.asin(x, out=out)
    torch.asin(t, out=tout)
    _same(out, tout)
    retrograd.atan2(x, x, out=out)
    torch.atan2(t, t, out=tout)
    _same(out, tout)
    retrograd.special.erfcx(x, out=out)
    torch.special.erfcx(t, out=tout)
    _same(out, tout)


def test_empty_inputs():
    x, t = _both(np.zeros((0, 3)))
    for name in ("asin", "sinc", "erfinv", "i0", "nan_to_num"):
        assert tuple(getattr(retrograd, name)(x).shape) == tuple(getattr(torch, name)(t).shape)
    assert tuple(retrograd.atan2(x, x).shape) == (0, 3)


def test_special_type_errors():
    for name in ("erf", "expit", "ndtr", "i1", "round", "entr"):
        raises_like(lambda n=name: getattr(retrograd.special, n)(1.0),
                     lambda n=name: getattr(torch.special, n)(1.0))


def test_special_names_match_torch_nodes():
    x, t = _both([0.3, 0.6], requires_grad=True)
    for name in ("expit", "exp2", "expm1", "log1p", "logit", "erf", "erfc", "erfcx", "erfinv",
                 "ndtri", "log_ndtr", "sinc", "entr", "i0", "i0e", "i1", "i1e", "round"):
        ours, theirs = getattr(retrograd.special, name)(x), getattr(torch.special, name)(t)
        assert ours.grad_fn.name() == theirs.grad_fn.name(), name
        _same(ours, theirs, rtol=1e-12)
    _same(retrograd.special.ndtr(x), torch.special.ndtr(t), rtol=1e-12)
    assert math.isclose(retrograd.special.logsumexp(x, 0).item(),
                        torch.special.logsumexp(t, 0).item())
