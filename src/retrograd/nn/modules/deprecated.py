"""Module classes torch keeps only for old code, each warning as torch's does when built."""

from __future__ import annotations

from typing import Any

from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor
from retrograd.nn.modules.loss import NLLLoss
from retrograd.nn.modules.module import Module

__all__ = ["Container", "NLLLoss2d"]


class NLLLoss2d(NLLLoss):
    """NLLLoss under its old name (it always took images' (N, C, H, W) inputs)."""

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 ignore_index: int = -100, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        _ws.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                 "drop-in replacement and see https://pytorch.org/docs/main/nn.html#"
                 "torch.nn.NLLLoss for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Container(Module):
    """A Module holding the keyword arguments as submodules."""

    def __init__(self, **kwargs: Any) -> None:
        _ws.warn("`nn.Container` is deprecated. All of its functionality is now "
                 "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                 stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
