"""Run one program on retrograd and on torch and compare what it returns."""

from __future__ import annotations

import numpy as np
import torch

import retrograd

LIBS = (retrograd, torch)


def leaves(tree) -> list:
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in leaves(t)]
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in leaves(tree[k])]
    return [tree]


def structure(tree):
    if isinstance(tree, (list, tuple)):
        return (type(tree).__name__, [structure(t) for t in tree])
    if isinstance(tree, dict):
        return ("dict", {k: structure(v) for k, v in tree.items()})
    return "tensor" if hasattr(tree, "shape") else type(tree).__name__


def same(ours, theirs, atol: float = 1e-5) -> None:
    """Same structure, shapes, dtypes and values."""
    assert structure(ours) == structure(theirs)
    for a, b in zip(leaves(ours), leaves(theirs)):
        if not hasattr(a, "shape"):
            assert a == b
            continue
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=atol, rtol=1e-5)


def parity(program, *arrays, atol: float = 1e-5) -> None:
    """program(lib, *tensors) on both libraries, from the same arrays."""
    ours = program(retrograd, *[retrograd.tensor(a) for a in arrays])
    theirs = program(torch, *[torch.tensor(a) for a in arrays])
    same(ours, theirs, atol)


def errors_alike(program, *arrays) -> str:
    """program raises the same exception type and message on both; returns the message."""
    got = []
    for lib in LIBS:
        try:
            program(lib, *[lib.tensor(a) for a in arrays])
        except Exception as e:  # noqa: BLE001 - compared below
            got.append((type(e), str(e).replace("torch.Size", "retrograd.Size")))
        else:
            got.append(None)
    assert got[0] is not None and got[1] is not None, got
    assert got[0] == got[1], got
    return got[0][1]


def arr(*shape, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
