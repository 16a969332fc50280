"""The one place retrograd compiles the code it generates (compile_function, NOTE [Visible
generated code]): op entry points, save and backward functions, and the constructors made from
field tables (NOTE [Field tables]). It sits with the Tensor, below everything that generates code,
because Tensor's own constructor is generated."""

from __future__ import annotations

import inspect
import linecache
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

from retrograd._autograd.frames import GENERATED_PREFIX

# label -> how many generated functions took it; a repeated label gets " #2", " #3", ... so
# every generated function has a filename of its own (in declaration order, never an id)
_LABELS: dict = {}
_LABELS_LOCK = threading.Lock()
# filename -> generated function, in the order they were made (they live as long as their op)
GENERATED: dict = {}


def compile_function(name: str, lines: list, namespace: dict, label: str,
                     qualname: str | None = None) -> Callable:
    """Compile generated source `lines` defining function `name` in `namespace`, and keep the
    source where Python's tools look for it.

    NOTE [Visible generated code]
    Each generated function gets its own filename, "<retrograd: LABEL>", whose text is entered
    in linecache the way a file's would be: tracebacks show the generated line that failed, pdb
    steps through it, and inspect.getsource works. The entry has no mtime, so
    linecache.checkcache keeps it (it only rechecks entries read from disk). The text is also
    kept on the function as __retrograd_source__ (`python -m retrograd.codegen OP` prints it).
    Only where the code is registered changes: the code itself is what runs either way."""
    filename = _filename(label)
    source = "\n".join(lines) + "\n"
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated text
    return _register(namespace[name], source, filename, qualname or name)


def forwarding_signature(fn: Callable, namespace: dict, prefix: str) -> tuple[list, list]:
    """fn's signature as the parts of a generated `def` (parameter texts, with the markers `/`
    and `*`; each default stored in `namespace` under prefix + its position) and the arguments
    that pass every parameter on to fn as it was given: what a generated entry in front of a
    hand-written function is made of."""
    params: list = []
    call: list = []
    posonly = starred = False
    for i, p in enumerate(inspect.signature(fn).parameters.values()):
        text = p.name
        if p.default is not p.empty:
            namespace[f"{prefix}{i}"] = p.default
            text = f"{p.name}={prefix}{i}"
        if p.kind is p.POSITIONAL_ONLY:
            posonly = True
        elif posonly:
            params.append("/")
            posonly = False
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            params.append(text)
            call.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            params.append("*" + p.name)
            call.append("*" + p.name)
            starred = True
        elif p.kind is p.KEYWORD_ONLY:
            if not starred:
                params.append("*")
                starred = True
            params.append(text)
            call.append(f"{p.name}={p.name}")
        else:
            params.append("**" + p.name)
            call.append("**" + p.name)
    if posonly:
        params.append("/")
    return params, call


def load_function(name: str, code: types.CodeType, source: str, namespace: dict, label: str,
                  qualname: str | None = None) -> Callable:
    """compile_function for code compiled before (from `source`, by this Python; the compiler's
    disk cache keeps it): the same function, filename and linecache text, without compiling."""
    filename = _filename(label)
    fn = types.FunctionType(code.replace(co_filename=filename), namespace, name)
    namespace[name] = fn
    return _register(fn, source, filename, qualname or name, shared_lines=False)


def _filename(label: str) -> str:
    with _LABELS_LOCK:  # plans may be compiled from several threads' backward passes
        count = _LABELS.get(label, 0) + 1
        _LABELS[label] = count
    return f"{GENERATED_PREFIX} {label}{'' if count == 1 else f' #{count}'}>"


def _register(fn: Any, source: str, filename: str, qualname: str,
              shared_lines: bool = True) -> Callable:
    fn.__retrograd_source__ = source
    fn.__qualname__ = qualname
    lines = source.splitlines(True)
    if shared_lines:
        # most lines recur across functions (a fresh tensor's fields, an edge): one copy of each
        lines = [sys.intern(line) for line in lines]
    linecache.cache[filename] = (len(source), None, lines, filename)
    GENERATED[filename] = fn
    return fn
