"""Train the same small program on torch and on retrograd from the same weights.

A program is `run(lib, sync)`: it builds its models with `lib` (torch or retrograd), passes each
one through `sync` right after building it (torch's weights are recorded, retrograd's model
loads them, in the same order), trains, and returns plain data (losses, tensors, state dicts).
Data comes from NumPy so that both libraries see the same batches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import retrograd


def _arrays(module: Any) -> dict:
    return {k: np.array(v.detach().numpy(), copy=True) for k, v in module.state_dict().items()}


def run_both(run: Callable, reference: bool = False) -> tuple:
    """(retrograd's result, torch's result) of run(lib, sync); with `reference`, also torch's
    result of run(lib, sync, float64=True) from the same weights: the trajectory in float64
    that both float32 runs approximate (see assert_close_or_closer)."""
    torch = pytest.importorskip("torch")
    weights: list[dict] = []

    def record(model):
        weights.append(_arrays(model))
        return model

    theirs = run(torch, record)

    def loader(lib):
        loaded = iter(weights)

        def load(model):
            model.load_state_dict({k: lib.from_numpy(v.copy()) for k, v in next(loaded).items()})
            return model

        return load

    ours = run(retrograd, loader(retrograd))
    if not reference:
        return ours, theirs
    return ours, theirs, run(torch, loader(torch), float64=True)


def _plain(x: Any) -> Any:
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        return np.asarray(x.detach().numpy(), dtype=np.float64)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def assert_close_or_closer(ours: Any, theirs: Any, exact: Any, rtol: float, atol: float,
                           path: str = "result") -> None:
    """Each value within (rtol, atol) of torch's, or no further than torch's from the float64
    run `exact`: where a program amplifies float32 rounding (normalization of values with a
    large mean, zero-gradient biases), torch's own float32 result may be the one that strays,
    by an amount that depends on the initial weights."""
    a, b, e = _plain(ours), _plain(theirs), _plain(exact)
    if isinstance(a, dict):
        assert set(a) == set(b) == set(e), f"{path}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            assert_close_or_closer(a[k], b[k], e[k], rtol, atol, f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b) == len(e), f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y, z) in enumerate(zip(a, b, e)):
            assert_close_or_closer(x, y, z, rtol, atol, f"{path}[{i}]")
    else:
        a, b, e = (np.asarray(v, dtype=np.float64) for v in (a, b, e))
        ok = (np.abs(a - b) <= atol + rtol * np.abs(b)) | (np.abs(a - e) <= np.abs(b - e))
        assert ok.all(), f"{path}: ours {a[~ok][:5]}, torch {b[~ok][:5]}, float64 {e[~ok][:5]}"


def assert_close(ours: Any, theirs: Any, rtol: float = 1e-4, atol: float = 1e-5,
                 path: str = "result") -> None:
    a, b = _plain(ours), _plain(theirs)
    if isinstance(a, dict):
        assert set(a) == set(b), f"{path}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            assert_close(a[k], b[k], rtol, atol, f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_close(x, y, rtol, atol, f"{path}[{i}]")
    elif isinstance(a, (np.ndarray, float)) and not isinstance(a, bool):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=path)
    else:
        assert a == b, f"{path}: {a!r} vs {b!r}"


def batches(seed: int, n: int, shape: tuple, high: int | None = None) -> list[np.ndarray]:
    """n arrays of `shape`: integers below `high`, or float32 normals."""
    rng = np.random.default_rng(seed)
    if high is not None:
        return [rng.integers(0, high, shape) for _ in range(n)]
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]
