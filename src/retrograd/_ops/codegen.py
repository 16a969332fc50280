"""Code shared by the generated entry points, save and backward functions, and the one place
they are all compiled (compile_function, NOTE [Visible generated code]).

The generated functions inline what `retrograd._tensor._wrap` does (a fresh Tensor's fields):
a Python call costs more than the field stores themselves on the per-op path. Their namespace
provides _nd (ndarray), _asarray, _new (object.__new__), _T (Tensor), _VC (VersionCounter) and
_state.
"""

from __future__ import annotations

import linecache
import sys
import threading
from collections.abc import Callable

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
    with _LABELS_LOCK:  # plans may be compiled from several threads' backward passes
        count = _LABELS.get(label, 0) + 1
        _LABELS[label] = count
    filename = f"{GENERATED_PREFIX} {label}{'' if count == 1 else f' #{count}'}>"
    source = "\n".join(lines) + "\n"
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated text
    fn = namespace[name]
    fn.__retrograd_source__ = source
    fn.__qualname__ = qualname or name
    # most lines recur across functions (a fresh tensor's fields, an edge): one copy of each
    lines = [sys.intern(line) for line in source.splitlines(True)]
    linecache.cache[filename] = (len(source), None, lines, filename)
    GENERATED[filename] = fn
    return fn


def wrap_lines(arr: str, name: str, indent: str = "    ") -> list:
    """Code that makes `name` a fresh Tensor around the array in `arr` (as _wrap does)."""
    return [indent + line for line in (
        f"if {arr}.__class__ is not _nd:",
        f"    {arr} = _asarray({arr})",
        f"{name} = _new(_T)",
        f"{name}._data = {arr}",
        f"{name}._requires_grad = False",
        f"{name}._grad_fn = None",
        f"{name}._output_nr = 0",
        f"{name}._grad = None",
        "if _state.inference:",
        f"    {name}._version_counter = None",
        "else:",
        f"    vc = {name}._version_counter = _new(_VC)",
        "    vc.version = 0",
        f"{name}._view = {name}._grad_acc = {name}._meta = None")]
