"""skip_init: a module instantiated without its parameter initialization."""

from __future__ import annotations

import inspect
from typing import Any

import retrograd
from retrograd.nn.modules.module import Module


def skip_init(module_cls: Any, *args: Any, **kwargs: Any) -> Any:
    """module_cls(*args, **kwargs) with parameters and buffers left uninitialized.

    There is no meta device here: the module is built on its device and then every parameter
    and buffer is replaced by an uninitialized tensor of the same shape, dtype and
    requires_grad (what torch's meta construction followed by to_empty leaves)."""
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs.setdefault("device", "cpu")
    module = module_cls(*args, **kwargs)
    with retrograd.no_grad():
        for sub in module.modules():
            for p in sub._parameters.values():
                if p is not None:
                    p.data = retrograd.empty_like(p)
            for name, b in sub._buffers.items():
                if b is not None:
                    sub._buffers[name] = retrograd.empty_like(b)
    return module
