"""save and load refuse: a TorchScript archive holds compiled code, which retrograd neither
writes nor runs. Weights travel through state_dict with retrograd.save / retrograd.load."""

from __future__ import annotations

from typing import Any

__all__ = ["load", "save"]


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    raise RuntimeError(
        "retrograd.jit.save cannot write a TorchScript archive: retrograd runs TorchScript code "
        "eagerly, as Python, and has no compiled module to save. Save the weights with "
        "retrograd.save(model.state_dict(), f) and restore them with "
        "model.load_state_dict(retrograd.load(f)).")


def load(f: Any, map_location: Any = None, _extra_files: Any = None,
         _restore_shapes: bool = False) -> Any:
    raise RuntimeError(
        "retrograd.jit.load cannot read a TorchScript archive: retrograd runs TorchScript code "
        "eagerly, as Python, and cannot run the compiled code such an archive holds. Build the "
        "model in Python and load weights saved with retrograd.save(model.state_dict(), f) "
        "through model.load_state_dict(retrograd.load(f)).")
