"""nn.grad's convolution gradients (also F.grad), and the deprecated nn.NLLLoss2d and
nn.Container, against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

CASES = {1: ((2, 4, 9), (6, 2, 3), {"stride": 2, "padding": 1, "groups": 2}),
         2: ((2, 3, 7, 8), (4, 3, 3, 2), {"stride": (2, 1), "padding": (1, 0),
                                          "dilation": (1, 2)}),
         3: ((1, 2, 5, 4, 6), (3, 2, 2, 2, 3), {"padding": 1})}


@pytest.mark.parametrize("n", [1, 2, 3])
def test_convolution_gradients_match_torch_and_autograd(n):
    xs, ws, kw = CASES[n]
    rs = np.random.RandomState(n)
    x, w = rs.randn(*xs), rs.randn(*ws)
    out = getattr(torch.nn.functional, f"conv{n}d")(torch.tensor(x), torch.tensor(w), **kw)
    go = rs.randn(*out.shape)
    theirs_in = getattr(torch.nn.grad, f"conv{n}d_input")(torch.Size(xs), torch.tensor(w),
                                                          torch.tensor(go), **kw)
    theirs_w = getattr(torch.nn.grad, f"conv{n}d_weight")(torch.tensor(x), torch.Size(ws),
                                                          torch.tensor(go), **kw)
    F = retrograd.nn.functional
    ours_in = getattr(F.grad, f"conv{n}d_input")(xs, retrograd.tensor(w), retrograd.tensor(go),
                                                 **kw)
    ours_w = getattr(retrograd.nn.grad, f"conv{n}d_weight")(retrograd.tensor(x), ws,
                                                            retrograd.tensor(go), **kw)
    np.testing.assert_allclose(ours_in.numpy(), theirs_in.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours_w.numpy(), theirs_w.numpy(), rtol=1e-12, atol=1e-12)
    # and they are autograd's gradients of the convolution
    xt = retrograd.tensor(x, requires_grad=True)
    wt = retrograd.tensor(w, requires_grad=True)
    y = getattr(F, f"conv{n}d")(xt, wt, **kw)
    gx, gw = retrograd.autograd.grad(y, (xt, wt), retrograd.tensor(go))
    np.testing.assert_allclose(ours_in.numpy(), gx.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours_w.numpy(), gw.numpy(), rtol=1e-12, atol=1e-12)


def test_deprecated_modules_warn_and_work_as_torch():
    got = []
    for lib in (retrograd, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = lib.nn.NLLLoss2d(ignore_index=1)
            box = lib.nn.Container(a=lib.nn.Linear(2, 3), b=lib.nn.ReLU())
        logp = lib.log_softmax(lib.tensor(np.random.RandomState(0).randn(2, 3, 2, 2)), 1)
        target = lib.tensor([[[0, 1], [2, 0]], [[1, 1], [0, 2]]])
        got.append(([(w.category.__name__, str(w.message)) for w in caught], repr(loss),
                    repr(box), [k for k, _ in box.named_children()],
                    float(loss(logp, target))))
    assert got[0][:4] == got[1][:4]
    assert abs(got[0][4] - got[1][4]) < 1e-12
