"""retrograd._logging.set_logs: log levels of retrograd's components, as torch._logging sets
torch's. A component `name` logs through the logger "retrograd.<name>" (autograd: every node
backward runs, at DEBUG). Each call sets every component: ones not named go back to WARNING."""

from __future__ import annotations

import logging
import sys

__all__ = ["set_logs"]

ROOT = "retrograd"
# component -> logger name; "all" sets the parent of them all
COMPONENTS = {"all": ROOT, "autograd": ROOT + ".autograd"}
DEFAULT_LEVEL = logging.WARNING
_handler: list = []  # the one stderr handler, on the root logger while any level is set


def set_logs(**levels: int | None) -> None:
    """set_logs(autograd=logging.DEBUG): show autograd's debug log on stderr; set_logs(): reset."""
    for component in levels:
        if component not in COMPONENTS:
            raise TypeError(f"set_logs() got an unexpected keyword argument '{component}'")
    for component, name in COMPONENTS.items():
        level = levels.get(component)
        logging.getLogger(name).setLevel(DEFAULT_LEVEL if level is None else level)
    root = logging.getLogger(ROOT)
    wanted = any(level is not None for level in levels.values())
    if wanted and not _handler:  # like torch, a component set to a level prints its records
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
        root.addHandler(handler)
        _handler.append(handler)
    elif not wanted and _handler:
        root.removeHandler(_handler.pop())
