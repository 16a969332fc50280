"""Describe a distribution the same way on torch and on retrograd, and compare.

A case builds a distribution from NumPy parameters with `lib` (torch or retrograd) and names the
value(s) to evaluate log_prob/cdf at. `describe` returns every deterministic quantity torch
defines for it (or the error it raises), plus the gradients of the differentiable ones with
respect to the parameters; `check_sampling` checks samples by shape, dtype, support and by
their mean over many draws (within 5 standard errors, so a fixed seed is safely inside).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import retrograd
from tests.parity.harness import both, error_of

QUANTITIES = ("mean", "mode", "variance", "stddev")


def leaf(lib: Any, array: Any, requires_grad: bool = True) -> Any:
    arr = np.asarray(array)
    # float arrays become float64 tensors, except float32 ones (for number-built distributions)
    dtype = None if arr.dtype.kind != "f" else lib.float32 if arr.dtype == np.float32 else \
        lib.float64
    t = lib.tensor(arr, dtype=dtype)
    return t.requires_grad_() if requires_grad and arr.dtype.kind == "f" else t


def _grads(lib: Any, leaves: list, fn: Callable[[], Any]) -> Any:
    def run() -> Any:
        out = fn()
        if not out.requires_grad:
            return "no grad"
        # parameters derived once in __init__ (Chi2's concentration) share a graph across calls
        grads = lib.autograd.grad(out.sum(), leaves, allow_unused=True, retain_graph=True)
        return [g if g is not None else "none" for g in grads]
    return error_of(run)


def describe(lib: Any, make: Callable[..., Any], params: dict, values: list,
             extra: Callable[[Any, Any], dict] | None = None) -> dict:
    """Everything deterministic about make(lib, **leaves)."""
    leaves = {k: leaf(lib, v) for k, v in params.items()}
    dist = make(lib, **leaves)
    grad_leaves = [t for t in leaves.values() if t.requires_grad]
    out: dict = {
        "repr": repr(dist),
        "batch_shape": tuple(dist.batch_shape),
        "event_shape": tuple(dist.event_shape),
        "has_rsample": dist.has_rsample,
        "has_enumerate_support": dist.has_enumerate_support,
        "support": error_of(lambda: repr(dist.support)),
        "arg_constraints": {k: repr(c) for k, c in dist.arg_constraints.items()},
    }
    for name in QUANTITIES:
        out[name] = error_of(lambda n=name: getattr(dist, n))
        out[name + ".grad"] = _grads(lib, grad_leaves, lambda n=name: getattr(dist, n))
    out["entropy"] = error_of(dist.entropy)
    out["entropy.grad"] = _grads(lib, grad_leaves, dist.entropy)
    out["perplexity"] = error_of(dist.perplexity)
    out["enumerate_support"] = error_of(dist.enumerate_support)
    out["enumerate_support(False)"] = error_of(lambda: dist.enumerate_support(False))
    for i, v in enumerate(values):
        value = leaf(lib, v, requires_grad=False)
        for method in ("log_prob", "cdf", "icdf"):
            fn = getattr(dist, method)
            out[f"{method}[{i}]"] = error_of(fn, value)
            out[f"{method}[{i}].grad"] = _grads(lib, grad_leaves, lambda f=fn, x=value: f(x))
    expanded = error_of(dist.expand, (2,) + tuple(dist.batch_shape))
    if expanded[0] == "ok":
        e = expanded[1]
        out["expand"] = (repr(e), tuple(e.batch_shape), tuple(e.event_shape),
                         error_of(lambda: e.mean), error_of(e.entropy),
                         [error_of(e.log_prob, leaf(lib, v, False)) for v in values])
    else:
        out["expand"] = expanded
    if extra is not None:
        out["extra"] = extra(lib, dist)
    return out


def check_parity(make: Callable[..., Any], params: dict, values: list,
                 extra: Callable[[Any, Any], dict] | None = None,
                 rtol: float = 1e-7, atol: float = 1e-9) -> None:
    both(describe, make, params, values, extra, rtol=rtol, atol=atol)


def check_sampling(dist: Any, n: int = 20000, seed: int = 0, check_mean: bool = True) -> None:
    """Samples of `dist` (a retrograd distribution): shape, dtype, support, mean."""
    retrograd.manual_seed(seed)
    samples = dist.sample((n,))
    assert tuple(samples.shape) == (n,) + tuple(dist.batch_shape) + tuple(dist.event_shape)
    assert not samples.requires_grad
    assert bool(dist.support.check(samples).all())
    assert tuple(dist.sample().shape) == tuple(dist.batch_shape) + tuple(dist.event_shape)
    if not check_mean:
        return
    arr = samples.double().numpy()
    mean = dist.mean.detach().double().numpy()
    std = arr.std(axis=0)
    err = np.abs(arr.mean(axis=0) - mean)
    finite = np.isfinite(mean)
    assert np.all(err[finite] <= 5 * std[finite] / np.sqrt(n) + 1e-12), (err, std)
    var = dist.variance.detach().double().numpy()
    finite = np.isfinite(var) & (var > 0)
    # the sample variance within 10% is far inside its spread at this n
    np.testing.assert_allclose(std[finite] ** 2, var[finite], rtol=0.1)


def check_rsample_grad(dist: Any, leaves: list, n: int = 20000, seed: int = 0) -> list:
    """d(mean of rsample)/d(leaves): rsample keeps a graph back to the parameters."""
    retrograd.manual_seed(seed)
    x = dist.rsample((n,))
    assert x.grad_fn is not None
    return list(retrograd.autograd.grad(x.mean(), leaves, allow_unused=True))
