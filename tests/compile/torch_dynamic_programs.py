"""The programs of test_dynamic's torch comparisons, and a runner for torch's side.

torch.compile runs in a fresh interpreter, once for all the comparisons (`python -m
tests.compile.torch_dynamic_programs '<json list of [program, dynamic, mark, seed, sizes]>'`;
mark: "none" or the torch._dynamo function that marks dimension 0 of x at every call):
dynamo's import and state are heavy, and other tests in the same process may leave torch's op
namespaces half set up. It prints JSON: per case, the gradients of every call and dynamo's
count of unique graphs."""

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


def run_case(torch, program: str, dynamic: str, mark: str, seed: int, sizes: list) -> dict:
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    dyn = {"None": None, "True": True, "False": False}[dynamic]
    fn = torch.compile(PROGRAMS[program][0](torch), dynamic=dyn, backend="aot_eager")
    grads = []
    for x, w in inputs(program, seed, sizes):
        xs = [torch.tensor(a, requires_grad=True) for a in (x, w)]
        if mark != "none":
            getattr(torch._dynamo, mark)(xs[0], 0)
        fn(*xs).sum().backward()
        grads.append([t.grad.numpy().tolist() for t in xs])
    return {"grads": grads, "graphs": counters["stats"]["unique_graphs"]}


def main() -> None:
    import torch

    cases = json.loads(sys.argv[1])
    print(json.dumps([run_case(torch, *case) for case in cases]))


if __name__ == "__main__":
    main()
