"""Turn a Sample into calls on retrograd or torch (shared by the generated op tests)."""

from __future__ import annotations

import operator

import numpy as np

import retrograd

try:
    import torch
except ImportError:  # parity tests skip without torch
    torch = None


def resolve(lib, path: str):
    """The callable named by a Sample's op on `lib` (retrograd or torch)."""
    if callable(path):
        return lambda *a, **k: path(lib, *a, **k)
    if path.startswith("operator."):
        return getattr(operator, path.split(".", 1)[1])
    if path.startswith("Tensor."):
        name = path.split(".", 1)[1]
        return lambda self, *a, **k: getattr(self, name)(*a, **k)
    obj = lib
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _is_float(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def make_inputs(lib, sample, dtype: str | None = None):
    """Convert arrays to tensors of `lib`; returns (args, kwargs, leaves that require grad)."""
    leaves = []
    counter = [0]

    def conv(a):
        if isinstance(a, np.ndarray):
            idx = counter[0]
            counter[0] += 1
            data = a.astype(dtype) if (dtype and a.dtype.kind == "f") else a
            if lib is retrograd:
                t = retrograd.from_numpy(np.array(data, copy=True, order="K"))
            else:
                t = torch.from_numpy(np.array(data, copy=True, order="K"))
            wants = sample.requires_grad[idx] if sample.requires_grad is not None \
                else a.dtype.kind == "f"
            if wants:
                t.requires_grad_(True)
                leaves.append(t)
            return t
        if isinstance(a, list):
            return [conv(x) for x in a]
        if isinstance(a, tuple) and any(isinstance(x, np.ndarray) for x in a):
            return tuple(conv(x) for x in a)
        if lib is not retrograd and isinstance(a, retrograd.dtype):
            return getattr(torch, a.name)
        return a

    args = tuple(conv(a) for a in sample.args)
    kwargs = {k: conv(v) for k, v in sample.kwargs.items()}
    return args, kwargs, leaves


def tensor_outputs(out) -> list:
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(tensor_outputs(o))
        return res
    if hasattr(out, "grad_fn"):
        return [out]
    return []


def call(lib, sample, dtype: str | None = None):
    args, kwargs, leaves = make_inputs(lib, sample, dtype)
    fn = resolve(lib, sample.op)
    return fn(*args, **kwargs), leaves, args, kwargs


def to_numpy(t) -> np.ndarray:
    if t is None:
        return None
    if torch is not None and isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.numpy()
    return np.asarray(t.detach().numpy(), dtype=np.float64 if t.dtype.is_floating_point
                      and t.dtype.itemsize <= 2 else None)
