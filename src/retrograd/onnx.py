"""retrograd.onnx: importable so programs load, but retrograd cannot export ONNX graphs."""

from __future__ import annotations

from typing import Any

EXPORT_UNSUPPORTED = (
    "retrograd.onnx.export is not supported: retrograd runs models eagerly on NumPy and has no "
    "ONNX exporter. Export the model with PyTorch instead.")


def export(*args: Any, **kwargs: Any) -> None:
    raise NotImplementedError(EXPORT_UNSUPPORTED)


def is_in_onnx_export() -> bool:
    return False
