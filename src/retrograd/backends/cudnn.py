"""retrograd.backends.cudnn: settable flags; cuDNN itself is never available."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version() -> None:
    return None


@contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True) -> Iterator[None]:
    """Sets the flags for the block, restoring them after."""
    mod = sys.modules[__name__]
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    old = {n: getattr(mod, n) for n in names}
    new = dict(zip(names, (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)))
    for n, v in new.items():
        setattr(mod, n, v)
    try:
        yield
    finally:
        for n, v in old.items():
            setattr(mod, n, v)
