"""NumPy's own BLAS library, found by file name beside NumPy (its wheels bundle OpenBLAS with
prefixed, 64-bit-integer symbols): its gemm for the fused optimizer update
(_ops/kernels/blas.py) and its thread count for set_num_threads. Nothing here imports
retrograd."""

from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

# NumPy's bundled BLAS, by build: (library file pattern, symbol template, 64-bit integers)
_CANDIDATES = (
    ("libscipy_openblas64_*", "scipy_{}64_", True),
    ("libscipy_openblas*", "scipy_{}", False),
    ("libopenblas64_*", "{}64_", True),
    ("libopenblas*", "{}", False),
)


def _library_dirs() -> list[str]:
    root = os.path.dirname(np.__file__)
    return [os.path.join(os.path.dirname(root), "numpy.libs"), os.path.join(root, ".dylibs")]


def _find() -> tuple | None:
    """(library, symbol template, 64-bit integers) of NumPy's own BLAS, or None."""
    for directory in _library_dirs():
        for pattern, symbol, ilp64 in _CANDIDATES:
            for path in sorted(glob.glob(os.path.join(directory, pattern))):
                try:
                    lib = ctypes.CDLL(path)
                    getattr(lib, symbol.format("cblas_sgemm"))
                except (OSError, AttributeError):
                    continue
                return lib, symbol, ilp64
    return None


def _thread_functions() -> tuple | None:
    """(set, get) of the number of threads of NumPy's OpenBLAS, or None."""
    found = _find()
    if found is None:
        return None
    lib, symbol, _ = found
    try:
        set_fn = getattr(lib, symbol.format("openblas_set_num_threads"))
        get_fn = getattr(lib, symbol.format("openblas_get_num_threads"))
    except AttributeError:
        return None
    set_fn.argtypes, set_fn.restype = [ctypes.c_int], None
    get_fn.argtypes, get_fn.restype = [], ctypes.c_int
    return set_fn, get_fn


def set_blas_threads(n: int) -> bool:
    """Let NumPy's BLAS use n threads; False when its library is not found."""
    fns = _thread_functions()
    if fns is None:
        return False
    fns[0](n)
    return True


def get_blas_threads() -> int | None:
    """The number of threads NumPy's BLAS uses, or None when its library is not found."""
    fns = _thread_functions()
    return None if fns is None else int(fns[1]())
