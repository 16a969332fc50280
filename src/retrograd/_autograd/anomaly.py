"""Anomaly-mode flags, read by the engine and by saved-variable error messages."""

from __future__ import annotations


class _Anomaly:
    enabled = False
    check_nan = True


anomaly = _Anomaly()


def anomaly_enabled() -> bool:
    return anomaly.enabled
