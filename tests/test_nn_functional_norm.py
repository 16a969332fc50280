"""layer_norm / batch_norm / group_norm / instance_norm / rms_norm beyond the op samples:
running statistics, error messages, half precision, the fused and composite backward paths."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F
from tests.nn_functional_helpers import pair, raises_like

torch = pytest.importorskip("torch")
TF = torch.nn.functional






@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (2, 3, 2, 2)])
@pytest.mark.parametrize("momentum", [0.1, 0.5])
def test_batch_norm_running_stats_follow_torch(shape, momentum):
    rng = np.random.default_rng(0)
    rm_r, rm_t = pair(rng.standard_normal(3).astype(np.float32))
    rv_r, rv_t = pair(rng.uniform(0.5, 2, 3).astype(np.float32))
    for step in range(3):
        x = rng.standard_normal(shape).astype(np.float32) * (step + 1) + step
        xr, xt = pair(x)
        out_r = F.batch_norm(xr, rm_r, rv_r, training=True, momentum=momentum)
        out_t = TF.batch_norm(xt, rm_t, rv_t, training=True, momentum=momentum)
        np.testing.assert_allclose(out_r.numpy(), out_t.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rm_r.numpy(), rm_t.numpy(), rtol=1e-5, atol=1e-6)
        # the running variance uses the unbiased batch variance, as torch does
        np.testing.assert_allclose(rv_r.numpy(), rv_t.numpy(), rtol=1e-5, atol=1e-6)
    # like torch, the in-place update does not bump the buffers' version counters
    assert rm_r._version == rm_t._version == 0
    # eval mode normalizes with the running statistics and leaves them alone
    x = rng.standard_normal(shape).astype(np.float32)
    xr, xt = pair(x)
    before = rm_r.numpy().copy()
    np.testing.assert_allclose(F.batch_norm(xr, rm_r, rv_r).numpy(),
                               TF.batch_norm(xt, rm_t, rv_t).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(rm_r.numpy(), before)


def test_batch_norm_eval_uses_running_stats_exactly():
    x = retrograd.tensor([[1.0, 2.0], [3.0, 6.0]], dtype=retrograd.float64)
    rm = retrograd.tensor([1.0, 2.0], dtype=retrograd.float64)
    rv = retrograd.tensor([4.0, 16.0], dtype=retrograd.float64)
    out = F.batch_norm(x, rm, rv, eps=0.0)
    np.testing.assert_allclose(out.numpy(), [[0.0, 0.0], [1.0, 1.0]])


def test_native_batch_norm_outputs_match_torch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    for training in (True, False):
        xr, xt = pair(x, True)
        rm_r, rm_t = pair(np.zeros(3, np.float32))
        rv_r, rv_t = pair(np.ones(3, np.float32))
        ours = retrograd.native_batch_norm(xr, None, None, rm_r, rv_r, training, 0.1, 1e-5)
        theirs = torch.native_batch_norm(xt, None, None, rm_t, rv_t, training, 0.1, 1e-5)
        for o, t in zip(ours, theirs):
            assert tuple(o.shape) == tuple(t.shape)
            np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
        assert [o.requires_grad for o in ours] == [t.requires_grad for t in theirs]


def test_instance_norm_running_stats_follow_torch():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    rm_r, rm_t = pair(np.zeros(3, np.float32))
    rv_r, rv_t = pair(np.ones(3, np.float32))
    xr, xt = pair(x)
    out_r = F.instance_norm(xr, rm_r, rv_r, momentum=0.2)
    out_t = TF.instance_norm(xt, rm_t, rv_t, momentum=0.2)
    np.testing.assert_allclose(out_r.numpy(), out_t.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rm_r.numpy(), rm_t.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv_r.numpy(), rv_t.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_half_precision_inputs_keep_their_dtype(name):
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    xr = retrograd.from_numpy(x.copy()).to(getattr(retrograd, name))
    xt = torch.from_numpy(x.copy()).to(getattr(torch, name))
    for f in (lambda a, m: m.layer_norm(a, (4,)), lambda a, m: m.group_norm(a, 3),
              lambda a, m: m.batch_norm(a, None, None, training=True)):
        o, t = f(xr, F), f(xt, TF)
        assert o.dtype.name == str(t.dtype).replace("torch.", "")
        np.testing.assert_allclose(o.float().numpy(), t.float().numpy(), rtol=2e-2, atol=2e-2)


def test_fused_and_composite_backward_agree():
    """create_graph=False takes the fused NumPy backward, create_graph=True the composite."""
    rng = np.random.default_rng(4)
    x = retrograd.from_numpy(rng.standard_normal((3, 4, 2))).requires_grad_()
    w = retrograd.from_numpy(rng.standard_normal(4)).requires_grad_()
    b = retrograd.from_numpy(rng.standard_normal(4)).requires_grad_()
    g = retrograd.from_numpy(rng.standard_normal((3, 4, 2)))
    cases = [(lambda: F.group_norm(x, 2, w, b), g),
             (lambda: F.batch_norm(x, None, None, w, b, training=True), g),
             (lambda: F.layer_norm(x.transpose(1, 2), (2, 4), w.expand(2, 4)), g.transpose(1, 2))]
    for call, grad in cases:
        fused = retrograd.autograd.grad(call(), (x, w), grad)
        comp = retrograd.autograd.grad(call(), (x, w), grad, create_graph=True)
        for a, c in zip(fused, comp):
            assert not a.requires_grad and c.requires_grad
            np.testing.assert_allclose(a.numpy(), c.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_batch_norm_eval_double_backward_and_gradcheck():
    rng = np.random.default_rng(5)
    x = retrograd.from_numpy(rng.standard_normal((3, 2, 2))).requires_grad_()
    w = retrograd.from_numpy(rng.standard_normal(2)).requires_grad_()
    rm = retrograd.from_numpy(rng.standard_normal(2))
    rv = retrograd.from_numpy(rng.uniform(0.5, 2, 2))

    def f(x, w):
        return F.batch_norm(x, rm, rv, w, None) ** 2

    assert retrograd.autograd.gradcheck(f, (x, w))
    assert retrograd.autograd.gradgradcheck(f, (x, w))


def test_group_norm_stat_gradients_follow_torch():
    """torch uses the mean / rstd gradients only when both arrive."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 4, 3))
    ws = [rng.standard_normal(s) for s in ((2, 4, 3), (2, 2), (2, 2))]
    for sel in ((0, 1, 2), (0, 1), (0, 2), (1, 2)):
        xr, xt = pair(x, True)
        ours = retrograd.native_group_norm(xr, None, None, 2, 4, 3, 2, 1e-5)
        theirs = torch.native_group_norm(xt, None, None, 2, 4, 3, 2, 1e-5)
        (gr,) = retrograd.autograd.grad(
            sum((ours[i] * retrograd.from_numpy(ws[i])).sum() for i in sel), xr)
        (gt,) = torch.autograd.grad(
            sum((theirs[i] * torch.from_numpy(ws[i])).sum() for i in sel), xt,
            allow_unused=True)
        expected = np.zeros_like(x) if gt is None else gt.numpy()
        np.testing.assert_allclose(gr.numpy(), expected, rtol=1e-10, atol=1e-12)


ERRORS = [
    lambda m, x: m.nn.functional.layer_norm(x, (3,)),
    lambda m, x: m.nn.functional.layer_norm(x, (4,), m.ones(3)),
    lambda m, x: m.nn.functional.layer_norm(x, (4,), None, m.ones(2, 2)),
    lambda m, x: m.nn.functional.layer_norm(x, 4),
    lambda m, x: m.layer_norm(x, ()),
    lambda m, x: m.nn.functional.batch_norm(m.ones(1, 3), None, None, training=True),
    lambda m, x: m.nn.functional.batch_norm(x, None, None),
    lambda m, x: m.nn.functional.batch_norm(x, m.zeros(4), m.ones(4)),
    lambda m, x: m.nn.functional.batch_norm(x, None, None, m.ones(2), training=True),
    lambda m, x: m.nn.functional.group_norm(x, 2),
    lambda m, x: m.nn.functional.group_norm(x, 3, m.ones(4)),
    lambda m, x: m.nn.functional.instance_norm(m.ones(2, 3, 1)),
    lambda m, x: m.nn.functional.rms_norm(x, (3,)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    x = np.ones((2, 3, 4), np.float32)
    raises_like(lambda: ERRORS[i](retrograd, retrograd.from_numpy(x.copy())),
                lambda: ERRORS[i](torch, torch.from_numpy(x.copy())))


def test_rms_norm_default_eps_and_values():
    x = np.array([[3.0, 4.0], [0.0, 0.0]], np.float32)
    xr, xt = pair(x)
    np.testing.assert_allclose(F.rms_norm(xr, (2,)).numpy(), TF.rms_norm(xt, (2,)).numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(F.rms_norm(xr, (2,)).numpy()[0], x[0] / np.sqrt(12.5),
                               rtol=1e-6)
