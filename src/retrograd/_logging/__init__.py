"""retrograd._logging.set_logs: log levels of retrograd's components, as torch._logging sets
torch's. A component `name` logs through the logger "retrograd.<name>" (autograd: every node
backward runs, at DEBUG; compiler: recompiles and eager fallbacks, at INFO). An artifact is
switched on with True (graph_code: each compiled graph as Python). Each call sets every
component: ones not named go back to WARNING.

RETROGRAD_LOGS, read at import, does the same from the environment, as TORCH_LOGS does:
"graph_code,compiler" (INFO), "+compiler" (DEBUG)."""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["set_logs"]

ROOT = "retrograd"
# component -> logger name; "all" sets the parent of them all
COMPONENTS = {"all": ROOT, "autograd": ROOT + ".autograd", "compiler": ROOT + ".compiler",
              "graph_code": ROOT + ".graph_code"}
DEFAULT_LEVEL = logging.WARNING
_handler: list = []  # the one stderr handler, on the root logger while any level is set


def set_logs(**levels: int | None) -> None:
    """set_logs(autograd=logging.DEBUG): show autograd's debug log on stderr; set_logs(): reset."""
    for component in levels:
        if component not in COMPONENTS:
            raise TypeError(f"set_logs() got an unexpected keyword argument '{component}'")
    levels = {k: (logging.INFO if v is True else None if v is False else v)
              for k, v in levels.items()}
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


def _from_environment() -> None:
    spec = os.environ.get("RETROGRAD_LOGS")
    if not spec:
        return
    levels: dict = {}
    for item in spec.split(","):
        item = item.strip()
        debug = item.startswith("+")
        name = item.lstrip("+-")
        if name in COMPONENTS:
            levels[name] = logging.DEBUG if debug else logging.INFO
    if levels:
        set_logs(**levels)


_from_environment()
