"""torch's module paths for layer classes that retrograd keeps in other files.

`from torch.nn.modules.loss import CTCLoss` (or `pooling import MaxPool3d`) is how many
programs import; retrograd groups some classes differently. A module lists such names with the
file that holds them, and resolves them on first access (a module `__getattr__`), so no import
cycle forms between the files."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def elsewhere(module: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` answering each name of `homes` from the file it names."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"retrograd.nn.modules.{home}"), name)

    return __getattr__
