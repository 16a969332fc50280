"""Run one program on torch and on retrograd and compare what it reports.

A program is a function of the library module (`lib` is `torch` or `retrograd`) that returns
plain data: numbers, strings, bools, lists/tuples/dicts of them, and tensors (compared as
arrays). Errors are captured with `error_of` so that the exception type and message are compared
too. Strings are compared after writing "torch." as "retrograd.".
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd


def torch_or_skip():
    return pytest.importorskip("torch")


def error_of(fn, *args, **kwargs):
    """("raised", type name, message) if fn raises, else ("ok", result)."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - the point is to compare any error
        return ("raised", type(e).__name__, str(e))


def _norm(x):
    torch = pytest.importorskip("torch")
    if isinstance(x, (retrograd.Tensor, torch.Tensor)):
        x = x.detach()
        if isinstance(x, torch.Tensor) and x.dtype == torch.bfloat16:
            x = x.float()
        arr = np.asarray(x.numpy())
        return ("tensor", str(x.dtype).replace("torch.", "retrograd."), arr)
    if isinstance(x, str):
        return x.replace("torch.", "retrograd.")
    if isinstance(x, (list, tuple)):
        return type(x).__name__ == "tuple", [_norm(v) for v in x]
    if isinstance(x, dict):
        return {k: _norm(v) for k, v in x.items()}
    if isinstance(x, (retrograd.dtype, torch.dtype)):
        return str(x).replace("torch.", "retrograd.")
    return x


def assert_same(ours, theirs, rtol: float = 1e-5, atol: float = 1e-6, path: str = "") -> None:
    a, b = _norm(ours), _norm(theirs)
    _compare(a, b, rtol, atol, path or "result")


def _compare(a, b, rtol, atol, path):
    if isinstance(a, tuple) and len(a) == 3 and a[0] == "tensor":
        assert isinstance(b, tuple) and b[0] == "tensor", f"{path}: {a} vs {b}"
        assert a[1] == b[1], f"{path}: dtype {a[1]} vs {b[1]}"
        assert a[2].shape == b[2].shape, f"{path}: shape {a[2].shape} vs {b[2].shape}"
        np.testing.assert_allclose(a[2].astype(np.float64), b[2].astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True, err_msg=path)
    elif isinstance(a, tuple) and len(a) == 2 and isinstance(a[1], list):
        assert isinstance(b, tuple) and len(a[1]) == len(b[1]), f"{path}: {a} vs {b}"
        for i, (x, y) in enumerate(zip(a[1], b[1])):
            _compare(x, y, rtol, atol, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), f"{path}: keys {set(a)} vs {set(b)}"
        for k in a:
            _compare(a[k], b[k], rtol, atol, f"{path}.{k}")
    elif isinstance(a, float):
        assert b == pytest.approx(a, rel=rtol, abs=atol), f"{path}: {a} vs {b}"
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


def both(program, *args, rtol: float = 1e-5, atol: float = 1e-6):
    """Run program(lib, *args) on both libraries, assert the same, return retrograd's result."""
    torch = torch_or_skip()
    ours = program(retrograd, *args)
    theirs = program(torch, *args)
    assert_same(ours, theirs, rtol, atol)
    return ours
