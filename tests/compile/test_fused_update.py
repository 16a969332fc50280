"""NOTE [Fused update GEMM]: in a compiled training step, an SGD update whose gradient is a
matmul nothing else reads becomes one BLAS call, W += -lr * (a @ b), at the product's place.
The parameters stay within float rounding of eager's, step after step, and are written where
they were; an update that cannot be folded (the parameter read between the product and the
update, the gradient read afterwards, a small weight) keeps eager's arithmetic bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F
from retrograd._ops.kernels.blas import MIN_FUSED_SIZE

LR = 0.05


def _params(widths: tuple, dtype, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for n_in, n_out in zip(widths, widths[1:]):
        out.append((rng.standard_normal((n_out, n_in)) / np.sqrt(n_in)).astype(dtype))
        out.append((rng.standard_normal(n_out) * 0.1).astype(dtype))
    return [retrograd.tensor(p, requires_grad=True) for p in out]


def _step(x, y, *params):
    h = x
    for i in range(0, len(params) - 2, 2):
        h = F.relu(F.linear(h, params[i], params[i + 1]))
    loss = F.cross_entropy(F.linear(h, params[-2], params[-1]), y)
    grads = retrograd.autograd.grad(loss, params)
    with retrograd.no_grad():
        for p, g in zip(params, grads):
            p.sub_(g, alpha=LR)
    return loss.detach()


def _data(step: int, n_in: int, dtype):
    rng = np.random.default_rng(100 + step)
    return (retrograd.tensor(rng.standard_normal((32, n_in)).astype(dtype)),
            retrograd.tensor(rng.integers(0, 5, 32)))


def _source() -> str:
    (source,) = [s for s, _ in retrograd._compiler.cache.MEMORY.values()]
    return source


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_step_folds_its_weight_updates_and_stays_with_eager(dtype):
    widths = (96, 128, 64, 5)  # weights of 12288 and 8192 elements fold; 320 does not
    eager_p, compiled_p = _params(widths, dtype), _params(widths, dtype)
    arrays = [p._data for p in compiled_p]
    step = retrograd.compile(_step)
    for k in range(10):
        x, y = _data(k, widths[0], dtype)
        a, b = _step(x, y, *eager_p), step(x, y, *compiled_p)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5 if dtype == np.float32
                                   else 1e-12)
    assert retrograd.compiler.counters["compiles"] == 1
    source = _source()
    folded = [line.strip() for line in source.splitlines() if "_gemm_update(" in line]
    assert len(folded) == 2, source
    assert {line.split("(")[1].split(",")[0] for line in folded} == {"primals_3", "primals_5"}
    assert all(line.endswith(f", {-LR})") for line in folded)
    # the small weight and the biases keep eager's update
    assert "aten_sub__Tensor(primals_7," in source and "aten_sub__Tensor(primals_3," not in source
    tol = 2e-6 if dtype == np.float32 else 1e-14
    for p, q, arr in zip(eager_p, compiled_p, arrays):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=0, atol=tol)
        assert q._data is arr and q._version == p._version == 10
        assert q.grad is None


def test_a_parameter_read_between_product_and_update_is_not_folded():
    def step(x, w):
        (g,) = retrograd.autograd.grad((x @ w).tanh().sum(), (w,))
        with retrograd.no_grad():
            before = (w * 2).sum()  # reads w after its gradient's product
            w.sub_(g, alpha=LR)
        return before

    rng = np.random.default_rng(4)
    w0 = rng.standard_normal((96, 64)).astype(np.float32)
    x = retrograd.tensor(rng.standard_normal((16, 96)).astype(np.float32))
    w_eager, w_comp = (retrograd.tensor(w0, requires_grad=True) for _ in range(2))
    compiled = retrograd.compile(step)
    for _ in range(3):
        a, b = step(x, w_eager), compiled(x, w_comp)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_array_equal(w_eager.detach().numpy(), w_comp.detach().numpy())
    assert "_gemm_update(" not in _source()


def test_a_gradient_returned_after_the_update_is_not_folded():
    def step(x, w):
        (g,) = retrograd.autograd.grad((x @ w).tanh().sum(), (w,))
        with retrograd.no_grad():
            w.add_(g, alpha=-LR)
        return g

    rng = np.random.default_rng(5)
    w0 = rng.standard_normal((96, 64)).astype(np.float32)
    x = retrograd.tensor(rng.standard_normal((16, 96)).astype(np.float32))
    w_eager, w_comp = (retrograd.tensor(w0, requires_grad=True) for _ in range(2))
    compiled = retrograd.compile(step)
    for _ in range(3):
        a, b = step(x, w_eager), compiled(x, w_comp)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_array_equal(w_eager.detach().numpy(), w_comp.detach().numpy())
    assert "_gemm_update(" not in _source()


def test_add_with_alpha_one_folds_with_the_sign_of_the_update():
    def step(x, w):
        # w on the right through t(): its gradient is still one product of w's shape
        (g,) = retrograd.autograd.grad((x @ w.t()).tanh().sum(), (w,))
        with retrograd.no_grad():
            w.add_(g)
        return w.detach().sum()

    rng = np.random.default_rng(6)
    w0 = rng.standard_normal((64, 96))
    x = retrograd.tensor(rng.standard_normal((16, 96)))
    w_eager, w_comp = (retrograd.tensor(w0, requires_grad=True) for _ in range(2))
    compiled = retrograd.compile(step)
    for _ in range(2):
        step(x, w_eager), compiled(x, w_comp)
    np.testing.assert_allclose(w_comp.detach().numpy(), w_eager.detach().numpy(), rtol=1e-14)
    folded = [line.strip() for line in _source().splitlines() if "_gemm_update(" in line]
    assert len(folded) == 1 and folded[0].endswith(", 1)"), folded


def test_too_small_a_weight_is_left_to_eager_arithmetic():
    assert 16 * 6 < MIN_FUSED_SIZE
    widths = (6, 16, 5)
    eager_p, compiled_p = _params(widths, np.float32), _params(widths, np.float32)
    step = retrograd.compile(_step)
    for k in range(3):
        x, y = _data(k, widths[0], np.float32)
        np.testing.assert_array_equal(_step(x, y, *eager_p).numpy(),
                                      step(x, y, *compiled_p).numpy())
    for p, q in zip(eager_p, compiled_p):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert "_gemm_update(" not in _source()
