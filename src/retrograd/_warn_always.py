"""torch.set_warn_always / is_warn_always_enabled.

torch uses the flag to turn its warn-once warnings into warn-every-time ones. retrograd warns
through Python's `warnings`, whose filters decide repetition, so the flag is only recorded.
"""

from __future__ import annotations

_enabled = False


def set_warn_always(b: bool, /) -> None:
    global _enabled
    _enabled = bool(b)


def is_warn_always_enabled() -> bool:
    return _enabled
