"""nn.utils.stateless.functional_call: the deprecated spelling of func.functional_call for
one dict of parameters and buffers."""

from __future__ import annotations

from typing import Any

from retrograd import _warning_site as _ws
from retrograd._functorch.functional_call import functional_call as _functional_call
from retrograd._tensor import Tensor
from retrograd.nn.modules.module import Module

__all__ = ["functional_call"]


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """module(*args, **kwargs) with `parameters_and_buffers` in place of its own tensors."""
    _ws.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
             "and will be removed in a future version of PyTorch. Please use "
             "`torch.func.functional_call` instead which is a drop-in replacement.",
             FutureWarning, stacklevel=2)
    from retrograd.nn.parallel import DataParallel

    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
