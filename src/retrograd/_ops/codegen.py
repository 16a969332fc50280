"""Code shared by the generated entry points and backward functions.

The generated functions inline what `retrograd._tensor._wrap` does (a fresh Tensor's fields):
a Python call costs more than the field stores themselves on the per-op path. Their namespace
provides _nd (ndarray), _asarray, _new (object.__new__), _T (Tensor), _VC (VersionCounter) and
_state.
"""

from __future__ import annotations


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
