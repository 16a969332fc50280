"""The programs of test_dynamic's torch comparisons, and a runner for torch's side.

torch.compile runs in a fresh interpreter (`python -m tests.compile.torch_dynamic_programs
<program> <dynamic> <seed> <sizes...>`): dynamo's import and state are heavy, and other tests
in the same process may leave torch's op namespaces half set up. It prints JSON: the
gradients of every call and dynamo's count of unique graphs."""

from __future__ import annotations

import json
import sys

import numpy as np


def shifted(lib):
    def f(x, w):
        return ((x[1:] * x[:-1]) @ w).sum(0)
    return f


def shifted_softmax(lib):
    def f(x, w):
        h = (x[1:] - x[:-1]).tanh() @ w
        return h.softmax(-1).sum(0) + h.mean(0)
    return f


PROGRAMS = {"shifted": (shifted, 4, 2), "shifted_softmax": (shifted_softmax, 3, 4)}


def inputs(program: str, seed: int, sizes: list) -> list:
    """Per call, (x, w) as float64 arrays."""
    _, features, out = PROGRAMS[program]
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((features, out))
    return [(rng.standard_normal((n, features)), w) for n in sizes]


def main() -> None:
    import torch
    from torch._dynamo.utils import counters

    program, dynamic, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sizes = [int(s) for s in sys.argv[4:]]
    dyn = {"None": None, "True": True, "False": False}[dynamic]
    fn = torch.compile(PROGRAMS[program][0](torch), dynamic=dyn, backend="aot_eager")
    grads = []
    for x, w in inputs(program, seed, sizes):
        xs = [torch.tensor(a, requires_grad=True) for a in (x, w)]
        fn(*xs).sum().backward()
        grads.append([t.grad.numpy().tolist() for t in xs])
    print(json.dumps({"grads": grads, "graphs": counters["stats"]["unique_graphs"]}))


if __name__ == "__main__":
    main()
