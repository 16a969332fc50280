"""linalg.qr against torch: modes, return type, strides, errors of the forward and of backward."""

from __future__ import annotations

import numpy as np

from tests.parity.harness import both, error_of


def test_qr_modes_shapes_strides_and_return_type():
    a = np.random.default_rng(0).standard_normal((2, 4, 3))

    def prog(lib):
        out = []
        for m in (a, a[0], a[0].T.copy()):
            for mode in ("reduced", "complete", "r"):
                res = lib.linalg.qr(lib.tensor(m, requires_grad=True), mode=mode)
                layout = [(tuple(t.shape), t.stride(), type(t.grad_fn).__name__) for t in res]
                out.append((type(res).__name__, res.Q is res[0], res.R is res[1], layout,
                            res.R.detach()))
        return out

    both(prog)


def test_qr_backward_errors():
    a = np.random.default_rng(1).standard_normal((4, 3))

    def prog(lib):
        out = []
        for mode in ("r", "complete"):
            x = lib.tensor(a, requires_grad=True)
            q, r = lib.linalg.qr(x, mode)
            out.append(error_of(r.sum().backward))
        x = lib.tensor(a.T.copy(), requires_grad=True)
        q, r = lib.linalg.qr(x, "complete")  # wide: complete is reduced
        (q.sum() + r.sum()).backward()
        return out, x.grad

    both(prog)


def test_qr_gradient_of_one_output():
    a = np.random.default_rng(2).standard_normal((3, 5, 4))

    def prog(lib):
        grads = []
        for which in (0, 1):
            x = lib.tensor(a, requires_grad=True)
            out = lib.linalg.qr(x)[which]
            (out * out).sum().backward()
            grads.append(x.grad)
        return grads

    both(prog)


def test_qr_argument_errors():
    def prog(lib):
        return [error_of(lib.linalg.qr, lib.ones(3)),
                error_of(lib.linalg.qr, lib.ones(2, 2, dtype=lib.long)),
                error_of(lib.linalg.qr, lib.ones(2, 2), "full"),
                lib.linalg.qr(lib.ones(0, 3)), lib.linalg.qr(lib.ones(3, 0), "complete")]

    both(prog)
