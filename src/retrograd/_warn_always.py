"""torch.set_warn_always / is_warn_always_enabled.

torch uses the flag to turn its warn-once warnings into warn-every-time ones; `warn_once` does
the same for retrograd's. Other warnings go through Python's `warnings` as they are, whose
filters decide their repetition.
"""

from __future__ import annotations

from retrograd import _warning_site as _ws

_enabled = False
_warned: set[str] = set()


def warn_once(key: str, message: str, category: type[Warning] = UserWarning,
              stacklevel: int = 3) -> None:
    """Warn the first time `key` is seen in this process (every time under set_warn_always)."""
    if _enabled or key not in _warned:
        _warned.add(key)
        _ws.warn(message, category, stacklevel=stacklevel)


def set_warn_always(b: bool, /) -> None:
    global _enabled
    _enabled = bool(b)


def is_warn_always_enabled() -> bool:
    return _enabled
