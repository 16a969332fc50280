"""torch.special's Bessel and Airy functions against torch: float64 values on dense grids
(across each interval switch, tiny and huge arguments, both signs) to a few ulps of the
function's size, float32 correctly rounded (torch's float32 kernels lose up to all digits at
large arguments), the special values exactly, dtype promotion, out=, argument errors and the
missing derivative (the result never requires grad, as torch's)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

NAMES = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
         "airy_ai"]
# the functions whose schema names the argument x (the others: input)
X_ARGUMENT = {"scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
              "airy_ai"}
# where the algorithms switch from one approximation to another
SWITCHES = np.array([1e-5, 0.5, 2.0, 2.09, 5.0, 8.0, 8.3203353, 103.892])
SPECIAL = [-np.inf, -3.5, -1.0, -0.0, 0.0, 1.0, np.inf, np.nan]


def _grid() -> np.ndarray:
    near = np.concatenate([np.nextafter(SWITCHES, -np.inf), SWITCHES,
                           np.nextafter(SWITCHES, np.inf)])
    positive = np.concatenate([np.linspace(0.0, 30.0, 30001)[1:],
                               np.geomspace(1e-300, 1e-3, 400), np.geomspace(30.0, 1e300, 3000),
                               near, [5e-324, 1e-320, 1e-310]])
    return np.concatenate([positive, -positive, [0.0, -0.0]])


def _envelope(name: str, x: np.ndarray) -> np.ndarray:
    """The size of an oscillating function around x (its zeros have none of their own), to
    measure errors against; 0 for the monotonic ones (their own value is the size)."""
    ax = np.abs(x)
    with np.errstate(divide="ignore", over="ignore"):
        if name.startswith("bessel_"):
            return np.minimum(1.0, np.sqrt(2.0 / (np.pi * ax)))
        if name == "spherical_bessel_j0":
            return np.minimum(1.0, 1.0 / ax)
        if name == "airy_ai":
            return np.where(x < 0, np.minimum(0.6, ax ** -0.25 / np.sqrt(np.pi)), 0.0)
    return np.zeros_like(x)


def _ours(name: str, x: np.ndarray) -> np.ndarray:
    return getattr(retrograd.special, name)(retrograd.tensor(x)).numpy()


def _torch(name: str, x: np.ndarray) -> np.ndarray:
    return getattr(torch.special, name)(torch.tensor(x)).numpy()


def _assert_same_special_values(ours: np.ndarray, theirs: np.ndarray) -> None:
    """nan where torch's is, the same infinities, and zeros of the same sign."""
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    exact = np.isinf(theirs) | (theirs == 0)
    np.testing.assert_array_equal(ours[exact], theirs[exact])
    np.testing.assert_array_equal(np.signbit(ours[exact]), np.signbit(theirs[exact]))


@pytest.mark.parametrize("name", NAMES)
def test_float64_matches_torch(name):
    x = _grid()
    ours, theirs = _ours(name, x), _torch(name, x)
    assert ours.dtype == theirs.dtype == np.float64
    _assert_same_special_values(ours, theirs)
    finite = np.isfinite(theirs)
    assert np.isfinite(ours[finite]).all()
    scale = np.maximum(np.abs(theirs), _envelope(name, x))[finite]
    err = np.abs(ours[finite] - theirs[finite])
    # a few ulps: torch's compiled kernels fuse multiply-adds, NumPy rounds each step
    assert (err <= 2e-14 * scale).all(), x[finite][np.argmax(err / np.maximum(scale, 1e-300))]


@pytest.mark.parametrize("name", NAMES)
def test_float32_is_correctly_rounded(name):
    """Computed in float64 and rounded once: within half an ulp of float32 (of the function's
    size) of torch's float64 value, and never further off than torch's own float32 kernel."""
    with np.errstate(over="ignore"):
        x = _grid().astype(np.float32)
    x = x[np.isfinite(x)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the float32 overflow of i0, i1
        exact = _torch(name, x.astype(np.float64))
    ours, theirs = _ours(name, x), _torch(name, x)
    assert ours.dtype == theirs.dtype == np.float32
    ok = np.isfinite(exact) & (np.abs(exact) < np.finfo(np.float32).max)
    scale = np.maximum(np.abs(exact), _envelope(name, x.astype(np.float64)))[ok]
    tiny = np.finfo(np.float32).tiny
    ours_err = np.abs(ours[ok] - exact[ok]) / np.maximum(scale, tiny)
    theirs_err = np.abs(theirs[ok].astype(np.float64) - exact[ok]) / np.maximum(scale, tiny)
    normal = scale >= tiny
    assert (ours_err[normal] <= 6.0e-8).all()  # half an ulp at 1, and a float64 rounding
    assert (ours_err <= np.nan_to_num(theirs_err, nan=np.inf) + 6.0e-8).all()
    with np.errstate(over="ignore"):
        _assert_same_special_values(ours[~ok], exact[~ok].astype(np.float32))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_values_exactly(name, dtype):
    extra = [5e-324, -5e-324] if dtype == "float64" else []
    x = np.array(SPECIAL + extra, dtype=dtype)
    _assert_same_special_values(_ours(name, x), _torch(name, x))


def test_documented_special_values():
    """Y0/Y1 are -inf at 0 and nan below; K0/K1 (scaled or not) inf at 0, nan below, 0 at inf;
    J and Y are nan at +-inf (cos(inf)), spherical j0 0; Ai nan at +-inf, 0 far right."""
    sp = retrograd.special
    x = retrograd.tensor([0.0, -1.0, np.inf, -np.inf], dtype=retrograd.float64)
    for f in (sp.bessel_y0, sp.bessel_y1):
        np.testing.assert_array_equal(f(x).numpy(), [-np.inf, np.nan, np.nan, np.nan])
    for f in (sp.modified_bessel_k0, sp.modified_bessel_k1, sp.scaled_modified_bessel_k0,
              sp.scaled_modified_bessel_k1):
        np.testing.assert_array_equal(f(x).numpy(), [np.inf, np.nan, 0.0, np.nan])
    for f in (sp.bessel_j0, sp.bessel_j1):
        assert np.isnan(f(x[2:]).numpy()).all()
    np.testing.assert_array_equal(sp.spherical_bessel_j0(x[2:]).numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(sp.airy_ai(retrograd.tensor([np.inf, -np.inf, 200.0]))
                                  .numpy(), [np.nan, np.nan, 0.0])
    assert sp.bessel_j1(retrograd.tensor([-0.0])).numpy()[0] == 0
    assert np.signbit(sp.bessel_j1(retrograd.tensor([-0.0])).numpy()[0])


def test_float32_stays_finite_where_torch_overflows():
    """Where torch's float32 intermediates overflow, the float64 evaluation does not: I0 and I1
    just past 88.7 (e^x beyond float32, I(x) not yet) are finite, and Ai far left is its small
    value where torch's |x|^3/2 overflows into nan."""
    x = np.array([89.5, 91.0], dtype=np.float32)
    for name in ("modified_bessel_i0", "modified_bessel_i1"):
        exact = _torch(name, x.astype(np.float64))
        np.testing.assert_array_equal(_ours(name, x), exact.astype(np.float32))
        assert np.isinf(_torch(name, x)).all()
    x = np.array([-1e30, -3e27], dtype=np.float32)
    exact = _torch("airy_ai", x.astype(np.float64))
    np.testing.assert_allclose(_ours("airy_ai", x), exact, rtol=1e-6, atol=1e-40)
    assert np.isnan(_torch("airy_ai", x)).all()


def test_float32_smallest_subnormal():
    """At float32's smallest subnormal x, torch's float32 K kernels take log(x / 2) of an
    underflowed 0: inf (scaled K0) and inf - inf = nan (K1, scaled K1) where the value is
    K0(x) ~ 103.4 and K1(x) ~ 1 / x, past float32's range (inf)."""
    x = np.array([np.finfo(np.float32).smallest_subnormal], dtype=np.float32)
    for name in NAMES:
        exact = _torch(name, x.astype(np.float64))
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(_ours(name, x), exact.astype(np.float32))
    assert np.isnan(_torch("modified_bessel_k1", x)).all()
    assert np.isinf(_torch("scaled_modified_bessel_k0", x)).all()


@pytest.mark.parametrize("name", NAMES)
def test_dtypes(name):
    def run(lib, dtype, values=(0.5, 1.5, 3.0)):
        return getattr(lib.special, name)(lib.tensor(values, dtype=getattr(lib, dtype)))

    for dtype in ("int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64"):
        values = (True, False, True) if dtype == "bool" else (1, 2, 7)
        ours, theirs = run(retrograd, dtype, values), run(torch, dtype, values)
        assert str(ours.dtype) == str(theirs.dtype).replace("torch", "retrograd")
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-7)
    previous = torch.get_default_dtype()
    try:
        for lib in (torch, retrograd):
            lib.set_default_dtype(lib.float64)
        assert run(retrograd, "int64", (1, 2)).dtype == retrograd.float64
        assert run(torch, "int64", (1, 2)).dtype == torch.float64
    finally:
        torch.set_default_dtype(previous)
        retrograd.set_default_dtype(getattr(retrograd, str(previous).split(".")[1]))
    for dtype in ("float16", "bfloat16"):
        with pytest.raises(NotImplementedError) as theirs:
            run(torch, dtype)
        with pytest.raises(NotImplementedError) as ours:
            run(retrograd, dtype)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_layout(name):
    base = np.linspace(0.25, 6.0, 12).reshape(3, 4)
    for lib in (retrograd, torch):
        f = getattr(lib.special, name)
        assert f(lib.tensor(base).t()).stride() == (1, 4)
        assert f(lib.tensor(2.5)).shape == ()
        assert f(lib.ones(0, 3)).shape == (0, 3)
    np.testing.assert_array_equal(_ours(name, base.T), _ours(name, base.T.copy()))


@pytest.mark.parametrize("name", NAMES)
def test_out(name):
    def run(lib):
        f = getattr(lib.special, name)
        x = lib.tensor([0.5, 1.5, 4.0])
        out = lib.empty(3, dtype=lib.float64)
        assert f(x, out=out) is out
        resized = lib.empty(0)
        f(x, out=resized)
        with pytest.raises(RuntimeError) as error:
            f(x, out=lib.empty(3, dtype=lib.int64))
        return out.numpy(), resized.numpy(), str(error.value)

    ours, theirs = run(retrograd), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, atol=1e-6)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("name", NAMES)
def test_aten_op(name):
    x = np.array([0.25, 1.0, 6.5])
    ours = getattr(retrograd.ops.aten, f"special_{name}")(retrograd.tensor(x))
    theirs = getattr(torch.ops.aten, f"special_{name}")(torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-13)
    assert not hasattr(retrograd, f"special_{name}")
    assert not hasattr(torch, f"special_{name}")


@pytest.mark.parametrize("name", NAMES)
def test_argument_errors(name):
    arg = "x" if name in X_ARGUMENT else "input"
    messages = []
    for lib in (retrograd, torch):
        f = getattr(lib.special, name)
        with pytest.raises(TypeError) as error:
            f(1.5)
        messages.append(str(error.value))
        assert f(**{arg: lib.tensor([1.0])}).shape == (1,)
    assert messages[0] == messages[1]
    assert f"argument '{arg}' (position 1) must be Tensor, not float" in messages[0]


@pytest.mark.parametrize("name", NAMES)
def test_no_derivative(name):
    """torch declares no derivative: the result never requires grad, backward through it
    reports so, and the op is a constant inside a differentiable expression. out= accepts
    tensors that require grad (nothing is recorded), as torch's does."""

    def run(lib):
        f = getattr(lib.special, name)
        x = lib.tensor([0.5, 1.5, 3.0], dtype=lib.float64, requires_grad=True)
        y = f(x)
        assert not y.requires_grad and y.grad_fn is None
        with pytest.raises(RuntimeError) as error:
            y.sum().backward()
        (f(x) * x).sum().backward()
        out = lib.zeros(3, dtype=lib.float64, requires_grad=True)
        f(x, out=out)
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            tangent = fw.unpack_dual(f(fw.make_dual(x.detach(), lib.ones(3)))).tangent
        return str(error.value), x.grad.numpy(), out.requires_grad, out.detach().numpy(), tangent

    ours, theirs = run(retrograd), run(torch)
    assert ours[0] == theirs[0] == ("element 0 of tensors does not require grad and does not "
                                    "have a grad_fn")
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-13)
    assert ours[2] == theirs[2]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-13)
    assert ours[4] is None and theirs[4] is None


def test_out_of_other_non_differentiable_ops_accepts_grad():
    """The same out= rule for the other ops without a derivative (histc, the polynomials):
    torch records nothing and writes even into a leaf that requires grad."""

    def run(lib):
        x = lib.tensor([0.25, 0.5, 0.75], requires_grad=True)
        counts, poly = lib.empty(4), lib.zeros(3, requires_grad=True)
        lib.histc(x, bins=4, min=0, max=1, out=counts)
        lib.special.chebyshev_polynomial_t(x, 3, out=poly)
        return counts.numpy(), poly.requires_grad, poly.grad_fn is None, poly.detach().numpy()

    ours, theirs = run(retrograd), run(torch)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1:3] == theirs[1:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6)
