"""Run the same module on retrograd and torch, with the same weights, and compare.

Weights are made once by retrograd's module and copied into both modules through
load_state_dict (so the torch side also exercises loading). Outputs and every gradient
(parameters and floating inputs) are compared; a fixed random cotangent weights the outputs so
that gradients do not degenerate into sums.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import retrograd
from tests.parity.harness import assert_same, torch_or_skip

RNG_SEED = 1234


def state_arrays(module: Any) -> dict:
    """state_dict as NumPy arrays (copies)."""
    return {k: np.array(v.detach().numpy(), copy=True) for k, v in module.state_dict().items()}


def load_arrays(lib: Any, module: Any, state: dict) -> None:
    module.load_state_dict({k: lib.from_numpy(np.array(v, copy=True)) for k, v in state.items()})


def _tensors_of(out: Any) -> list:
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensors_of(o)]
    return [] if out is None else [out]


def _loss(lib: Any, out: Any) -> Any:
    rng = np.random.default_rng(RNG_SEED)
    total = None
    for t in _tensors_of(out):
        if not t.requires_grad:
            continue
        w = lib.from_numpy(rng.standard_normal(tuple(t.shape)).astype(np.float64)).to(t.dtype)
        term = (t * w).sum()
        total = term if total is None else total + term
    return total


def run_module(lib: Any, make: Callable, state: dict, inputs: Sequence[np.ndarray], *,
               dtype: str | None = "float64", train: bool = True, kwargs: dict | None = None,
               input_grad: bool = True) -> dict:
    """Build make(lib), load `state`, call it on `inputs`, backprop a weighted sum of outputs."""
    module = make(lib)
    if dtype is not None:
        module.to(getattr(lib, dtype))
    load_arrays(lib, module, state)
    module.train(train)
    xs = []
    for a in inputs:
        arr = np.array(a, copy=True)
        if arr.dtype.kind == "f" and dtype is not None:
            arr = arr.astype(dtype)
        t = lib.from_numpy(arr)
        if arr.dtype.kind == "f" and input_grad:
            t.requires_grad_()
        xs.append(t)
    out = module(*xs, **(kwargs or {}))
    loss = _loss(lib, out)
    if loss is not None:
        loss.backward()
    return {
        "out": _tensors_of(out),
        "param_grads": {n: p.grad for n, p in module.named_parameters()},
        "input_grads": [x.grad for x in xs if x.requires_grad],
        "state_after": {k: v for k, v in module.state_dict().items()},
    }


def module_parity(make: Callable, inputs: Sequence[np.ndarray], *, rtol: float = 1e-5,
                  atol: float = 1e-6, **kwargs: Any) -> dict:
    """Assert that make(retrograd) and make(torch) agree on outputs, gradients and state."""
    torch_or_skip()
    import torch

    state = state_arrays(make(retrograd))
    ours = run_module(retrograd, make, state, inputs, **kwargs)
    theirs = run_module(torch, make, state, inputs, **kwargs)
    assert_same(ours, theirs, rtol, atol)
    return ours


def randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
