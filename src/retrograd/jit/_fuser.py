"""The fuser settings of the TorchScript executor. There is no executor here, so nothing is
fused; the settings are kept and read back as torch keeps them, and names are checked as
torch checks them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from retrograd import _warning_site as _ws
from retrograd.jit._deprecation import warn_compile_path
from retrograd.jit._script import is_scripting

__all__ = ["enable_onednn_fusion", "fuser", "onednn_fusion_enabled", "optimized_execution",
           "set_fusion_strategy", "strict_fusion"]

_state: dict[str, Any] = {
    "fusion_strategy": [("STATIC", 2), ("DYNAMIC", 10)],
    "onednn": False,
    "optimize": True,
}
_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")


def set_fusion_strategy(strategy: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Set the (kind, depth) specializations; returns the previous list."""
    warn_compile_path("set_fusion_strategy")
    if isinstance(strategy, (str, bytes)) or not isinstance(strategy, Sequence):
        raise TypeError("set_fusion_strategy(): expected a list of (str, int) pairs, "
                        f"got {strategy!r}")
    new = []
    for entry in strategy:
        if (not isinstance(entry, (tuple, list)) or len(entry) != 2
                or not isinstance(entry[0], str) or not isinstance(entry[1], int)):
            raise TypeError("set_fusion_strategy(): expected a list of (str, int) pairs, "
                            f"got {strategy!r}")
        if entry[0] not in ("STATIC", "DYNAMIC"):
            raise ValueError(
                f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {entry[0]}")
        new.append((entry[0], int(entry[1])))
    old, _state["fusion_strategy"] = _state["fusion_strategy"], new
    return list(old)


def enable_onednn_fusion(enabled: bool) -> None:
    _state["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _state["onednn"]


@contextmanager
def fuser(name: str) -> Iterator[None]:
    """Select a fuser for the block: "fuser0" (legacy), "fuser1" (NNC), "fuser2" (nvFuser),
    "fuser3" (oneDNN Graph) or "none". No code is fused; "fuser3" turns oneDNN fusion on for
    the block, as torch does."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")  # torch's type: Exception
    old_onednn = _state["onednn"]
    _state["onednn"] = name == "fuser3"
    try:
        yield
    finally:
        _state["onednn"] = old_onednn


@contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    old, _state["optimize"] = _state["optimize"], should_optimize
    try:
        yield
    finally:
        _state["optimize"] = old


class strict_fusion:
    """Asserts, in scripted code, that the block fuses. Eagerly there is nothing to check, and
    torch warns the same way outside script."""

    def __init__(self) -> None:
        if not is_scripting():
            _ws.warn("Only works in script mode", stacklevel=2)

    def __enter__(self) -> None:
        pass

    def __exit__(self, type: Any, value: Any, tb: Any) -> None:
        pass
