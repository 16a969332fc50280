"""DataParallel as torch runs it on a machine without accelerators: a wrapper that calls the
module it holds (as `.module`, so state_dict keys get the `module.` prefix)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from retrograd.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Holds `module` and calls it; with no devices to replicate on there is nothing to split.
    device_ids is [] as in torch on CPU."""

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []  # torch sets no dim/output_device when it has no devices

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None,
                  output_device: Any = None, dim: int = 0,
                  module_kwargs: dict | None = None) -> Any:
    """The functional form; as in torch without an accelerator it has no device to run on."""
    raise RuntimeError("device type could not be determined")
