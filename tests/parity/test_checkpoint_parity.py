"""Checkpointing: same gradients as without it, RNG preserved, misuse errors; against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of


def _inputs(lib):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = lib.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    return x, w


def block(x, w):
    return (x.mm(w).tanh() * x).exp()


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_gradients_match_plain(reentrant):
    def prog(lib):
        from_mod = __import__(lib.__name__ + ".utils.checkpoint", fromlist=["checkpoint"])
        x, w = _inputs(lib)
        out = from_mod.checkpoint(block, x, w, use_reentrant=reentrant).sum()
        out.backward()
        gx, gw = x.grad.clone(), w.grad.clone()
        x.grad = w.grad = None
        block(x, w).sum().backward()
        return gx, gw, x.grad, w.grad, type(out.grad_fn).__name__

    both(prog)


def test_reentrant_checkpoint_errors_under_grad():
    def prog(lib):
        from_mod = __import__(lib.__name__ + ".utils.checkpoint", fromlist=["checkpoint"])
        x, w = _inputs(lib)
        out = from_mod.checkpoint(block, x, w, use_reentrant=True).sum()
        return (error_of(lambda: lib.autograd.grad(out, x)),
                error_of(from_mod.checkpoint, block, x, use_reentrant=True, foo=1))

    both(prog)


def test_use_reentrant_must_be_explicit_warning():
    def prog(lib):
        from_mod = __import__(lib.__name__ + ".utils.checkpoint", fromlist=["checkpoint"])
        x, w = _inputs(lib)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            from_mod.checkpoint(block, x, w)
        return [str(r.message) for r in rec if "use_reentrant" in str(r.message)]

    both(prog)


@pytest.mark.parametrize("reentrant", [True, False])
def test_dropout_recomputes_identically(reentrant):
    from retrograd.utils.checkpoint import checkpoint

    def f(x):
        mask = (retrograd.rand(*x.shape) > 0.5).float()
        return (x * mask * 2).exp()

    retrograd.manual_seed(3)
    x = retrograd.ones(50, dtype=retrograd.float64, requires_grad=True)
    retrograd.manual_seed(7)
    out = checkpoint(f, x, use_reentrant=reentrant)
    out.sum().backward()
    # gradient must use the same mask as the forward: d/dx exp(2 m x) = 2 m exp(2 m x)
    expected = (out * (out != 1).double() * 2).detach()
    np.testing.assert_allclose(x.grad.numpy(), expected.numpy())


def test_checkpointed_saved_tensor_unpacks_twice():
    from retrograd.utils.checkpoint import checkpoint

    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = checkpoint(lambda t: t.exp(), x, use_reentrant=False)
    first = y.grad_fn._saved_result.clone()
    second = y.grad_fn._saved_result
    assert first.tolist() == second.tolist()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


def test_checkpoint_sequential():
    def prog(lib):
        from_mod = __import__(lib.__name__ + ".utils.checkpoint", fromlist=["checkpoint"])
        x, w = _inputs(lib)
        fns = [lambda t: t.mm(w), lambda t: t.tanh(), lambda t: t * 2, lambda t: t.exp()]
        out = from_mod.checkpoint_sequential(fns, 2, x, use_reentrant=False).sum()
        out.backward()
        return x.grad, w.grad

    both(prog)


def test_composed_hooks_around_checkpoint():
    # an outer float16 cast composed with checkpoint's hooks: both apply
    from retrograd.autograd.graph import saved_tensors_hooks

    packs = []

    def to_half(t):
        packs.append(t.dtype)
        return t

    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(to_half, lambda t: t):
        with saved_tensors_hooks(lambda t: ("inner", t), lambda p: p[1], compose=True):
            y = (x * x).sum()
    y.backward()
    assert packs == [retrograd.float32, retrograd.float32]
    assert x.grad.tolist() == [2.0, 4.0]


def test_detach_variable_and_check_backward_validity():
    def prog(lib):
        from_mod = __import__(lib.__name__ + ".utils.checkpoint", fromlist=["checkpoint"])
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        d = from_mod.detach_variable((x, 3))
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            from_mod.check_backward_validity([lib.ones(1), 2])
            from_mod.check_backward_validity([x])
        return (d[0] is x, d[0].requires_grad, d[0].grad_fn is None, d[1],
                error_of(from_mod.detach_variable, [x]), [str(r.message) for r in rec])

    both(prog)


def test_device_state_helpers_on_the_cpu():
    def prog(lib):
        from_mod = __import__(lib.__name__ + ".utils.checkpoint", fromlist=["checkpoint"])
        kind = from_mod.DefaultDeviceType.get_device_type()
        states = from_mod.get_device_states(lib.ones(2))
        from_mod.set_device_states(*states)
        return kind, states, sorted(from_mod.__all__)

    both(prog)
