"""special.zeta, the Hurwitz zeta function zeta(x, q) = sum_k (q + k)^-x, against torch: values
on dense grids in float32 and float64, torch's special cases, broadcasting and Python-number
operands, dtypes and errors, node names, the derivative in q (first and second order) and the
refused ones (in x; forward mode)."""

import math

import numpy as np
import pytest

import retrograd
from retrograd.autograd import forward_ad as fwAD
from retrograd.autograd import gradcheck, gradgradcheck
from tests.parity.harness import error_of, torch_or_skip


def _both(x, q, dtype):
    torch = torch_or_skip()
    ours = retrograd.special.zeta(retrograd.tensor(x, dtype=getattr(retrograd, dtype)),
                                  retrograd.tensor(q, dtype=getattr(retrograd, dtype)))
    theirs = torch.special.zeta(torch.tensor(x, dtype=getattr(torch, dtype)),
                                torch.tensor(q, dtype=getattr(torch, dtype)))
    assert ours.dtype.name == dtype and str(theirs.dtype) == f"torch.{dtype}"
    return ours.numpy(), theirs.numpy()


# x from just above 1 (slow convergence: the Euler-Maclaurin tail) to 60, q from -30 (the
# direct sum through negative q) to 1e6
_X = np.unique(np.concatenate([1 + np.geomspace(1e-6, 1.0, 30), np.linspace(2.0, 60.0, 59),
                               np.arange(2.0, 12.0)]))
_Q = np.unique(np.concatenate([np.linspace(-30.0, 30.0, 241), np.geomspace(1e-6, 1e6, 60)]))


@pytest.mark.parametrize("dtype, rtol, subnormal", [("float64", 2e-15, 1e-320),
                                                     ("float32", 2.4e-7, 1e-44)])
def test_values_match_torch_on_a_dense_grid(dtype, rtol, subnormal):
    x, q = (a.ravel() for a in np.meshgrid(_X, _Q, indexing="ij"))
    ours, theirs = _both(x, q, dtype)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(theirs))
    finite = np.isfinite(theirs)
    assert np.mean(ours[finite] == theirs[finite]) > 0.9  # torch's own algorithm, mostly bitwise
    # below q = 0 the terms (q + k)^-x change sign and cancel: a few ulps of the largest,
    # at the distance d from q to the nearest integer, bound the difference there
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        largest = np.where(q < 0, np.abs(q - np.round(q)) ** -x, 0.0)
    bound = rtol * np.abs(theirs) + 4 * np.finfo(np.float64).eps * largest + subnormal
    with np.errstate(invalid="ignore"):
        close = np.abs(ours.astype(np.float64) - theirs) <= bound
    assert close[finite].all(), (x[finite][~close[finite]][:5], q[finite][~close[finite]][:5])


def test_known_values():
    values = retrograd.special.zeta(retrograd.tensor([2.0, 4.0, 2.0, 3.0], dtype=retrograd.float64),
                                    retrograd.tensor([1.0, 1.0, 2.0, 0.5], dtype=retrograd.float64))
    expected = [math.pi ** 2 / 6, math.pi ** 4 / 90, math.pi ** 2 / 6 - 1, 7 * 1.2020569031595942]
    np.testing.assert_allclose(values.numpy(), expected, rtol=1e-15)


def test_torchs_special_cases():
    """inf at x = 1 (even for q at a pole), NaN below, inf at q = 0, -1, ... for x > 1, NaN at
    another negative q unless x is an integer, NaN for NaN."""
    x = [1.0, 1.0, 0.5, -3.0, 2.0, 2.5, 2.0, 3.0, math.nan, 2.0, math.inf, 2.0]
    q = [2.0, -1.0, 2.0, 2.0, -3.0, -1.5, -1.5, 0.0, 1.0, math.nan, 1.0, math.inf]
    for dtype in ("float32", "float64"):
        ours, theirs = _both(np.array(x), np.array(q), dtype)
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, equal_nan=True)
    assert retrograd.special.zeta(retrograd.tensor(1.0), retrograd.tensor(-1.0)).item() == math.inf


def test_broadcasting_python_numbers_and_dtypes():
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    xs, qs = rng.uniform(1.5, 6.0, (3, 1)), rng.uniform(0.1, 9.0, 4)
    for lib, out in ((retrograd, []), (torch, [])):
        x, q = lib.tensor(xs), lib.tensor(qs, dtype=lib.float32)
        out.append(lib.special.zeta(x, q))                       # float64 with float32
        out.append(lib.special.zeta(2.5, q))                     # number, float32 tensor
        out.append(lib.special.zeta(x, 3))                       # float64 tensor, int
        out.append(lib.special.zeta(lib.tensor([2, 3]), lib.tensor([1, 2])))  # ints: float32
        out.append(lib.special.zeta(lib.tensor(2.0), q))        # 0-d with 1-d
        if lib is retrograd:
            ours = out
        else:
            theirs = out
    for o, t in zip(ours, theirs):
        assert o.dtype.name == str(t.dtype).split(".")[-1] and tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=3e-7)


def test_errors_are_torchs():
    torch = torch_or_skip()

    def programs(lib):
        half = lib.tensor([2.0], dtype=lib.float16)
        return [
            error_of(lib.special.zeta, half, half),
            error_of(lib.special.zeta, lib.tensor([2.0], dtype=lib.bfloat16),
                     lib.tensor([1.0], dtype=lib.bfloat16)),
            error_of(lib.special.zeta, 2.0, 3.0),
            error_of(lib.special.zeta, lib.ones(2), lib.ones(3)),
        ]

    assert programs(retrograd) == programs(torch)


def test_out_writes_into_the_given_tensor():
    out = retrograd.empty(2)
    res = retrograd.special.zeta(retrograd.tensor([2.0, 3.0]), retrograd.tensor([1.0, 2.0]),
                                 out=out)
    assert res is out
    np.testing.assert_allclose(out.numpy(), [math.pi ** 2 / 6, 1.2020569031595942 - 1],
                               rtol=1e-6)


def test_derivative_in_q_and_node_names_match_torch():
    torch = torch_or_skip()
    rng = np.random.default_rng(1)
    xs, qs = rng.uniform(1.5, 6.0, 5), rng.uniform(0.3, 5.0, 5)
    got = []
    for lib in (retrograd, torch):
        q = lib.tensor(qs, requires_grad=True)
        names = []
        for x in (lib.tensor(xs), 2.5):
            r = lib.special.zeta(x, q)
            names.append(r.grad_fn.name())
            (g,) = lib.autograd.grad(r.sum(), [q])
            got.append(g.numpy())
        x = lib.tensor(xs, requires_grad=True)
        names.append(lib.special.zeta(x, 2.0).grad_fn.name())
        got.append(names)
    n = len(got) // 2
    for o, t in zip(got[:n], got[n:]):
        if isinstance(o, list):
            assert o == t == ["SpecialZetaBackward0", "SpecialZetaBackward1",
                              "SpecialZetaBackward2"]
        else:
            np.testing.assert_allclose(o, t, rtol=1e-14)


def test_gradcheck_in_q_first_and_second_order():
    x = retrograd.tensor([2.0, 3.5, 1.7, 5.0], dtype=retrograd.float64)
    q = retrograd.tensor([0.7, 2.5, 1.2, 4.0], dtype=retrograd.float64, requires_grad=True)
    assert gradcheck(lambda t: retrograd.special.zeta(x, t), (q,))
    assert gradgradcheck(lambda t: retrograd.special.zeta(x, t), (q,))
    assert gradcheck(lambda t: retrograd.special.zeta(3.0, t), (q,))


def test_the_derivative_in_x_and_forward_mode_are_refused_like_torch():
    torch = torch_or_skip()

    def program(lib):
        x = lib.tensor([2.0, 3.0], requires_grad=True)
        q = lib.tensor([1.0, 2.0], requires_grad=True)
        backward = error_of(lambda: lib.special.zeta(x, q).sum().backward())
        fw = lib.autograd.forward_ad if lib is torch else fwAD
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor([1.0, 2.0]), lib.ones(2))
            forward = error_of(lib.special.zeta, lib.tensor([2.0, 3.0]), dual)
        return [backward, forward[:2] + (forward[2].split("\n")[0],)]

    assert program(retrograd) == program(torch)
