"""Time one backward call of the hot op nodes (the array formulas' path: no graph is built).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE taskset -c 0 python bench/backward_nodes.py

Each case builds its node once, then calls the node's backward with release=False (the saved
values stay) many times; the best of several repeats is printed in microseconds per call.
"""

from __future__ import annotations

import timeit

import retrograd as rg
import retrograd.nn.functional as F


def _cases() -> dict:
    def leaf(*shape):
        return rg.randn(*shape, requires_grad=True)

    x, y = leaf(16, 16), leaf(16, 16)
    a, b, bias = leaf(32, 64), leaf(64, 32), leaf(32)
    logits = leaf(32, 10)
    target = rg.randint(0, 10, (32,))
    lsm = F.log_softmax(logits, dim=1)
    pos = leaf(16, 16).detach().abs().add(0.5).requires_grad_()
    big = leaf(8, 64, 512)
    q = leaf(32, 64, 32)
    return {
        "MulBackward0": x * y,
        "MulBackward0 (scalar)": x * 0.5,
        "SubBackward0": x - y,
        "DivBackward0": x / pos,
        "NegBackward0": -x,
        "ExpBackward0": x.exp(),
        "LogBackward0": pos.log(),
        "SqrtBackward0": pos.sqrt(),
        "RsqrtBackward0": pos.rsqrt(),
        "SigmoidBackward0": x.sigmoid(),
        "ReciprocalBackward0": pos.reciprocal(),
        "AbsBackward0": x.abs(),
        "PowBackward0": x.pow(2),
        "ClampBackward1": x.clamp(-0.5, 0.5),
        "WhereBackward0": rg.where(x > 0, x, y),
        "CloneBackward0": x.clone(),
        "GeluBackward0": F.gelu(big),
        "BmmBackward0": rg.bmm(q, q.transpose(1, 2)),
        "MeanBackward0": x.mean(),
        "SoftmaxBackward0": F.softmax(x, dim=1),
        "AddBackward0": x + y,
        "TanhBackward0": x.tanh(),
        "MmBackward0": a.mm(b),
        "ReluBackward0": x.relu(),
        "SumBackward0": x.sum(),
        "ViewBackward0": x.view(256),
        "TBackward0": x.t(),
        "AddmmBackward0": rg.addmm(bias, a, b),
        "LogSoftmaxBackward0": lsm,
        "NllLossBackward0": F.nll_loss(lsm, target),
    }


def main() -> None:
    for name, out in _cases().items():
        node = out.grad_fn
        assert type(node).__name__ == name.split()[0], (type(node).__name__, name)
        grads = [rg.ones_like(out)]
        call = node._plan.backward_array or node._plan.backward
        n = 2000 if out.numel() < 10000 else 20
        best = min(timeit.repeat(lambda c=call, nd=node, g=grads: c(nd, g, False, None), number=n,
                                 repeat=7))
        print(f"{name:22s} {best / n * 1e6:7.2f} us")


if __name__ == "__main__":
    main()
