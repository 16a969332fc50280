"""weight_norm and spectral_norm against torch, both the parametrizations
(nn.utils.parametrizations) and the hook-based forms (nn.utils.weight_norm, spectral_norm).

Spectral norm starts from random u, v: each program first loads the state_dict of a torch
module built the same way (same keys on both sides), so both continue from torch's vectors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.parity.harness import both, error_of

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X_LIN = RNG.standard_normal((5, 4))
X_CONV = RNG.standard_normal((2, 3, 6, 6))


def _fill(lib, module, seed=0):
    """Deterministic parameters (float64)."""
    rng = np.random.default_rng(seed)
    module.double()
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape))))
    return module


def _makers():
    return {
        "linear": (lambda lib: lib.nn.Linear(4, 3), X_LIN),
        "conv": (lambda lib: lib.nn.Conv2d(3, 4, 3), X_CONV),
        "convT": (lambda lib: lib.nn.ConvTranspose2d(3, 2, 3), X_CONV),
    }


def _torch_state(build):
    """The state_dict (as arrays) of the torch module `build` makes."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        module = build(torch)
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


def _load(lib, module, state):
    module.load_state_dict({k: lib.from_numpy(v.copy()) for k, v in state.items()})


def _run(lib, module, x, steps=2):
    """Forward/backward `steps` times; outputs, gradients, final state."""
    outs = []
    for _ in range(steps):
        module.zero_grad()
        y = module(lib.from_numpy(x.copy()))
        (y * y).sum().backward()
        outs.append(y)
    return [outs, {n: p.grad for n, p in module.named_parameters()}, module.state_dict()]


@pytest.mark.parametrize("kind", ["linear", "conv", "convT"])
@pytest.mark.parametrize("dim", [0, 1, None, -2])
def test_weight_norm_parametrization(kind, dim):
    make, x = _makers()[kind]

    def prog(lib):
        m = _fill(lib, make(lib))
        before = m.weight.detach().clone()
        lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
        info = [type(m).__name__, repr(m), list(m.state_dict()), m.state_dict(),
                m.weight.grad_fn.name(), m.weight, before, m.parametrizations.weight[0].dim]
        info += _run(lib, m, x)
        m.weight = before * 2  # right_inverse: g and v from the new weight
        info += [m.state_dict(), m.weight]
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
        info += [type(m).__name__, list(m.state_dict()), m.weight]
        return info

    both(prog, rtol=1e-6, atol=1e-9)


def test_weight_norm_parametrization_loads_hook_state_dict():
    def prog(lib):
        old = _fill(lib, lib.nn.Linear(4, 3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            lib.nn.utils.weight_norm(old)
        sd = {k: v * 1.5 for k, v in old.state_dict().items()}
        new = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(4, 3).double())
        result = new.load_state_dict(sd)
        return [list(result.missing_keys), list(result.unexpected_keys), new.state_dict(),
                new.weight, list(sd)]

    both(prog)


@pytest.mark.parametrize("kind", ["linear", "conv", "convT"])
@pytest.mark.parametrize("n_iter", [1, 3])
def test_spectral_norm_parametrization(kind, n_iter):
    make, x = _makers()[kind]

    def build(lib):
        return lib.nn.utils.parametrizations.spectral_norm(_fill(lib, make(lib)),
                                                           n_power_iterations=n_iter)

    state = _torch_state(build)

    def prog(lib):
        m = build(lib)
        keys = list(m.state_dict())
        _load(lib, m, state)
        info = [keys, type(m).__name__, repr(m), m.weight.grad_fn.name(),
                m.parametrizations.weight[0].dim]
        info += _run(lib, m, x)  # training: u and v move on every evaluation
        m.eval()
        info += _run(lib, m, x, steps=1)
        info.append(m.parametrizations.weight[0]._u)
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
        info += [list(m.state_dict()), m.weight]
        return info

    both(prog, rtol=1e-6, atol=1e-9)


def test_spectral_norm_parametrization_vector_and_buffer_and_errors():
    def prog(lib):
        sn = lib.nn.utils.parametrizations.spectral_norm
        out = []
        m = _fill(lib, lib.nn.Linear(4, 3))
        sn(m, "bias")  # a vector: normalized exactly, no power iteration buffers
        out += [list(m.state_dict()), m.bias, m.bias.grad_fn.name()]
        out.append(error_of(sn, _fill(lib, lib.nn.Linear(4, 3)), n_power_iterations=0))
        out.append(error_of(sn, _fill(lib, lib.nn.Linear(4, 3)), dim=2))
        out.append(error_of(sn, _fill(lib, lib.nn.Linear(4, 3)), dim=-3))
        out.append(error_of(sn, _fill(lib, lib.nn.Linear(4, 3)), "nothing"))
        out.append(error_of(lib.nn.utils.parametrizations.weight_norm,
                            _fill(lib, lib.nn.Linear(4, 3)), "nothing"))
        return out

    both(prog)


@pytest.mark.parametrize("kind", ["linear", "conv"])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_hooks(kind, dim):
    make, x = _makers()[kind]

    def prog(lib):
        m = _fill(lib, make(lib))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = lib.nn.utils.weight_norm(m, dim=dim)
        info = [out is m, [(w.category.__name__, str(w.message)) for w in caught],
                list(m.state_dict()), m.state_dict(), type(m).__name__, repr(m),
                m.weight.grad_fn.name(), [n for n, _ in m.named_parameters()]]
        info += _run(lib, m, x)
        info.append(error_of(lib.nn.utils.weight_norm, m, dim=dim))
        info.append(error_of(lib.nn.utils.remove_weight_norm, m, "bias"))
        lib.nn.utils.remove_weight_norm(m)
        info += [list(m.state_dict()), m.weight, type(m.weight).__name__,
                 len(m._forward_pre_hooks)]
        info.append(error_of(lib.nn.utils.remove_weight_norm, m))
        return info

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        both(prog, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("kind", ["linear", "conv", "convT"])
def test_spectral_norm_hooks(kind):
    make, x = _makers()[kind]

    def build(lib):
        return lib.nn.utils.spectral_norm(_fill(lib, make(lib)), n_power_iterations=2)

    state = _torch_state(build)

    def prog(lib):
        m = build(lib)
        keys = list(m.state_dict())
        _load(lib, m, state)
        sd = m.state_dict()
        info = [keys, sd, dict(sd._metadata[""]), type(m).__name__, repr(m),
                [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()]]
        info += _run(lib, m, x)
        m.eval()
        info += _run(lib, m, x, steps=1)
        info.append(error_of(lib.nn.utils.spectral_norm, m))
        lib.nn.utils.remove_spectral_norm(m)
        info += [list(m.state_dict()), m.weight, type(m.weight).__name__,
                 len(m._forward_pre_hooks), len(m._state_dict_hooks),
                 len(m._load_state_dict_pre_hooks)]
        info.append(error_of(lib.nn.utils.remove_spectral_norm, m))
        return info

    both(prog, rtol=1e-6, atol=1e-9)


def test_spectral_norm_hooks_load_version_0_state_dict():
    """A state_dict without <name>_v (and with <name>) gets v solved from u and sigma."""

    def build(lib):
        return lib.nn.utils.spectral_norm(_fill(lib, lib.nn.Linear(4, 3)))

    state = _torch_state(build)

    def prog(lib):
        m = build(lib)
        sd = {k: lib.from_numpy(v.copy()) for k, v in state.items() if k != "weight_v"}
        sd["weight"] = sd["weight_orig"] / 2.5
        m.load_state_dict(sd)
        bad = build(lib)
        partial = {k: v for k, v in sd.items() if k != "weight_u"}
        return [m.weight_v, m.state_dict(), error_of(bad.load_state_dict, partial)]

    both(prog, rtol=1e-6, atol=1e-9)


def test_spectral_norm_hooks_errors():
    def prog(lib):
        sn = lib.nn.utils.spectral_norm
        m = lib.nn.Linear(4, 3, bias=False)
        return [error_of(sn, lib.nn.Linear(4, 3), n_power_iterations=0),
                error_of(sn, m, "bias"), error_of(sn, m, "nothing")]

    both(prog)


def test_training_loop_with_parametrizations():
    """SGD on a small net with weight_norm and spectral_norm layers, then .float()."""

    def build(lib):
        net = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 2))
        _fill(lib, net)
        lib.nn.utils.parametrizations.weight_norm(net[0])
        lib.nn.utils.parametrizations.spectral_norm(net[2])
        return net

    state = _torch_state(build)
    x, target = RNG.standard_normal((8, 4)), RNG.standard_normal((8, 2))

    def prog(lib):
        net = build(lib)
        _load(lib, net, state)
        opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = ((net(lib.from_numpy(x.copy())) - lib.from_numpy(target.copy())) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss)
        net.float()
        y = net(lib.from_numpy(x.astype(np.float32)))
        return [losses, net.state_dict(), y, y.dtype, net[0].weight.dtype,
                [n for n, _ in net.named_parameters()]]

    both(prog, rtol=1e-5, atol=1e-7)
