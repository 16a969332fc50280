"""_force_original_view_tracking / is_view_replay_enabled: whether a view whose base was written
in place gets its grad_fn by replaying its view ops (ViewBackward0, ...) instead of
AsStridedBackward0 (retrograd._autograd.copy_slices.ViewRecovery)."""

from __future__ import annotations

from typing import Any

from retrograd._autograd.copy_slices import ViewRecovery

__all__ = ["_force_original_view_tracking", "is_view_replay_enabled"]


def is_view_replay_enabled() -> bool:
    return ViewRecovery.replay


class _force_original_view_tracking:
    """Set view replay on or off now; used as a context manager (or decorator) it restores the
    previous setting on exit, as torch's does."""

    def __init__(self, mode: bool) -> None:
        self.prev = ViewRecovery.replay
        self.mode = bool(mode)
        ViewRecovery.replay = self.mode

    def __enter__(self) -> None:
        ViewRecovery.replay = self.mode

    def __exit__(self, *exc: Any) -> None:
        ViewRecovery.replay = self.prev

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _force_original_view_tracking(self.mode):
                return fn(*args, **kwargs)

        ViewRecovery.replay = self.prev  # decorating does not change the setting
        return wrapper

    def clone(self) -> _force_original_view_tracking:
        return self.__class__(self.mode)
