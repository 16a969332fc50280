"""detect_anomaly / set_detect_anomaly: trace forward calls, check backward for NaN."""

from __future__ import annotations

from typing import Any

from retrograd import _warning_site as _ws
from retrograd._autograd.anomaly import anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


def is_anomaly_enabled() -> bool:
    return anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return anomaly.check_nan


class detect_anomaly:
    """Context manager (and decorator) enabling anomaly detection for its block."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        _ws.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                 "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        self.prev = (anomaly.enabled, anomaly.check_nan)
        anomaly.enabled, anomaly.check_nan = True, self.check_nan

    def __exit__(self, *exc: Any) -> None:
        anomaly.enabled, anomaly.check_nan = self.prev

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Sets anomaly detection on or off at construction; as a context manager, restores it."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (anomaly.enabled, anomaly.check_nan)
        anomaly.enabled, anomaly.check_nan = bool(mode), check_nan

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        anomaly.enabled, anomaly.check_nan = self.prev
