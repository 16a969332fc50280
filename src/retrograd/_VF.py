"""torch._VF: the op functions under their binding names, including the few torch keeps out of
its namespace (unique_dim) or shows there only behind a Python wrapper (unique_consecutive,
whose wrapper returns fewer outputs)."""

from __future__ import annotations

from retrograd._ops.registry import _NAMESPACE
from retrograd._ops.unique import VARIABLE_FUNCTIONS


def __getattr__(name: str):
    fn = VARIABLE_FUNCTIONS.get(name) or _NAMESPACE.get(name)
    if fn is None:
        raise AttributeError(f"module 'retrograd._VF' has no attribute '{name}'")
    return fn
