"""nn.utils.parametrizations.orthogonal against torch: the three maps, with and without the
trivialization, square and rectangular weights, assignment, and the errors; geqrf's refusal
to differentiate.

A rectangular weight with the trivialization is completed with random columns: those programs
first load the state_dict of the torch module built the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import both, error_of

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)
X3 = RNG.standard_normal((5, 3))
X4 = RNG.standard_normal((5, 4))


def _linear(lib, n_in, n_out, seed=0):
    m = lib.nn.Linear(n_in, n_out).double()
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.5))
    return m


def _torch_state(build):
    torch.manual_seed(0)
    module = build(torch)
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


def _run(lib, m, x):
    y = m(lib.from_numpy(x.copy()))
    (y * y).sum().backward()
    w = m.weight
    n = min(w.shape)
    gram = w @ w.mT if w.shape[0] == n else w.mT @ w
    return [y, {k: p.grad for k, p in m.named_parameters()}, w, gram,
            np.allclose(gram.detach().numpy(), np.eye(n), atol=1e-10)]


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder", None])
@pytest.mark.parametrize("triv", [True, False])
def test_orthogonal_square(omap, triv):
    def prog(lib):
        m = _linear(lib, 3, 3)
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap,
                                                 use_trivialization=triv)
        info = [type(m).__name__, repr(m), list(m.state_dict()), m.state_dict(),
                m.weight.grad_fn.name()]
        info += _run(lib, m, X3)
        return info

    both(prog, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_orthogonal_rectangular(omap, shape):
    n_in, n_out = shape

    def build(lib):
        return lib.nn.utils.parametrizations.orthogonal(_linear(lib, n_in, n_out),
                                                        orthogonal_map=omap)

    state = _torch_state(build)

    def prog(lib):
        m = build(lib)
        keys = list(m.state_dict())
        m.load_state_dict({k: lib.from_numpy(v.copy()) for k, v in state.items()})
        return [keys, m.weight.grad_fn.name()] + _run(lib, m, X4 if n_in == 4 else X3)

    both(prog, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_rectangular_without_trivialization(omap):
    def prog(lib):
        m = _linear(lib, 3, 5)
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap,
                                                 use_trivialization=False)
        return [list(m.state_dict()), m.state_dict()] + _run(lib, m, X3)

    both(prog, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_assignment(omap):
    def prog(lib):
        q = lib.linalg.qr(lib.from_numpy(RNG_Q.copy()))[0]
        out = []
        for triv in (True, False):
            m = _linear(lib, 3, 3)
            lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap,
                                                     use_trivialization=triv)
            res = error_of(setattr, m, "weight", q)
            out += [res[0] if res[0] == "ok" else res, m.state_dict(), m.weight]
        return out

    both(prog, rtol=1e-6, atol=1e-9)


RNG_Q = np.random.default_rng(3).standard_normal((3, 3))


def test_orthogonal_errors():
    def prog(lib):
        orth = lib.nn.utils.parametrizations.orthogonal
        m = _linear(lib, 3, 3)
        out = [error_of(orth, _linear(lib, 3, 3), "bias"),
               error_of(orth, _linear(lib, 3, 3), "nothing"),
               error_of(orth, _linear(lib, 3, 3), orthogonal_map="qr")]
        orth(m)
        out.append(error_of(setattr, m, "weight", lib.zeros(3, 4, dtype=lib.float64)))
        x = lib.from_numpy(RNG_Q.copy()).requires_grad_()
        a, tau = lib.geqrf(x)
        out += [a.requires_grad, tau.requires_grad, error_of(lambda: a.sum().backward())]
        out.append(error_of(lib.geqrf, lib.ones(3)))
        out.append(error_of(lib.linalg.householder_product, lib.ones(3), lib.ones(2)))
        out.append(error_of(lib.linalg.householder_product, lib.ones(3, 4), lib.ones(3)))
        out.append(error_of(lib.linalg.householder_product, lib.ones(4, 3), lib.ones(4)))
        out.append(error_of(lib.linalg.householder_product, lib.ones(4, 3), lib.ones(2, 3)))
        out.append(error_of(lib.linalg.householder_product, lib.ones(4, 3),
                            lib.ones(3, dtype=lib.float64)))
        return out

    both(prog)
