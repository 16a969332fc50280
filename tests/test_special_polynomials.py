"""torch.special's orthogonal polynomials and gammainc/gammaincc against torch: values over
orders -2..40 (float64 to torch's own rounding; float32 correctly rounded, where torch's
single-precision kernels stray by up to 3e-5, and where the value passes float32's range +-inf
where torch's recurrence overflows into nan), endpoints, the Hermite order limit, dtypes and
overloads, no gradient, out=."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]
ORDERS = list(range(-2, 14)) + [20, 40]


def _points(name: str) -> np.ndarray:
    x = np.concatenate([np.random.RandomState(0).uniform(-1.5, 1.5, 300),
                        [-1.0, 1.0, 0.0, 0.5, -0.5, 2.0, -2.0]])
    if name.startswith("shifted"):
        x = np.concatenate([(x + 1.5) / 3, [0.0, 1.0]])
    return x


@pytest.mark.parametrize("name", NAMES)
def test_float64_matches_torch(name):
    x = _points(name)
    for n in ORDERS:
        ours = getattr(retrograd.special, name)(retrograd.tensor(x), n).numpy()
        theirs = getattr(torch.special, name)(torch.tensor(x), n).numpy()
        assert ours.dtype == theirs.dtype == np.float64
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
        scale = np.maximum(np.abs(theirs), 1)
        assert np.nanmax(np.abs(ours - theirs) / scale) < 2e-13, (name, n)


@pytest.mark.parametrize("name", NAMES)
def test_float32_is_correctly_rounded(name):
    x = _points(name).astype(np.float32)
    for n in ORDERS:
        exact = getattr(torch.special, name)(torch.tensor(x.astype(np.float64)), n).numpy()
        ours = getattr(retrograd.special, name)(retrograd.tensor(x), n).numpy()
        theirs = getattr(torch.special, name)(torch.tensor(x), n).numpy()
        assert ours.dtype == theirs.dtype == np.float32
        assert np.isfinite(exact).all()
        scale = np.maximum(np.abs(exact), 1)
        ours_err = np.nanmax(np.abs(ours - exact) / scale)
        assert ours_err <= 6.1e-8, (name, n)  # half an ulp of float32 at 1, plus rounding
        assert ours_err <= np.nanmax(np.abs(theirs - exact) / scale) + 6.1e-8


def test_hermite_order_limit():
    """torch gives nan past order 128 (float32) or 512 (float64). At x = 0 the odd orders are
    exactly 0, but the even ones between overflow, and 0 * inf makes them nan in torch's
    recurrence: in float64 both libraries give nan on either side of 512; in float32 torch's
    has overflowed long before 128, retrograd's (in float64) gives the exact 0 up to the
    limit and nan past it."""
    for name in ("hermite_polynomial_h", "hermite_polynomial_he"):
        for n in (511, 513):
            ours = getattr(retrograd.special, name)(retrograd.zeros(2, dtype=retrograd.float64),
                                                    n).numpy()
            theirs = getattr(torch.special, name)(torch.zeros(2, dtype=torch.float64),
                                                  n).numpy()
            np.testing.assert_array_equal(ours, theirs)
        assert (getattr(retrograd.special, name)(retrograd.zeros(2), 127).numpy() == 0).all()
        assert np.isnan(getattr(retrograd.special, name)(retrograd.zeros(2), 129).numpy()).all()


def test_float32_overflow_is_infinite():
    """Where the value is beyond float32's range, retrograd's correctly rounded result is
    +-inf; torch's single-precision recurrence overflows midway and gives nan."""
    x = retrograd.tensor([0.1, 0.2])
    ours = retrograd.special.hermite_polynomial_h(x, 100).numpy()
    exact = torch.special.hermite_polynomial_h(torch.tensor([0.1, 0.2], dtype=torch.float64),
                                               100).numpy()
    assert np.isinf(ours).all() and (np.sign(ours) == np.sign(exact)).all()
    assert np.isnan(torch.special.hermite_polynomial_h(torch.tensor([0.1, 0.2]), 100)).all()


@pytest.mark.parametrize("name", NAMES)
def test_overloads_dtypes_and_no_gradient(name):
    def run(lib):
        f = getattr(lib.special, name)
        x = lib.tensor([0.25, 0.5, 0.75], requires_grad=True)
        out = []
        for args in ((x, 3), (x, lib.tensor([1, 2, 3])), (0.5, lib.tensor([2, 3])),
                     (lib.tensor([0, 1]), 2), (lib.tensor([0.5, 0.2]), lib.tensor([2.7, 3.0])),
                     (0.5, lib.tensor([2, 3], dtype=lib.float64)),
                     (lib.tensor([True, False]), 2)):
            r = f(*args)
            out.append((str(r.dtype).split(".")[-1], r.requires_grad, r.grad_fn is None,
                        r.detach().numpy()))
        target = lib.empty(3)
        assert f(x.detach(), 2, out=target) is target
        out.append(target.numpy())
        with pytest.raises(TypeError):
            f(0.5, 2)
        return out

    for a, b in zip(run(retrograd), run(torch)):
        if isinstance(a, tuple):
            assert a[:3] == b[:3]
            np.testing.assert_allclose(a[3], b[3], rtol=3e-5, atol=1e-6)
        else:
            np.testing.assert_allclose(a, b, rtol=3e-5, atol=1e-6)


def test_gammainc_and_gammaincc():
    a = np.array([0.5, 1.0, 2.0, 7.5])
    x = np.array([0.1, 1.0, 3.0, 5.0])
    for name in ("gammainc", "gammaincc"):
        ours = getattr(retrograd.special, name)(retrograd.tensor(a), retrograd.tensor(x))
        theirs = getattr(torch.special, name)(torch.tensor(a), torch.tensor(x))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
