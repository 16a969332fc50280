"""C += alpha * (A @ B) in one BLAS call, for the compiled optimizer update (NOTE [Fused
update GEMM] in _compiler/codegen.py).

NumPy's matmul always writes a fresh product; BLAS's gemm can add the scaled product to an
existing matrix (beta = 1), which turns an SGD step's `W -= lr * (G.T @ X)` into one pass
that never materializes the gradient. The gemm called is the one NumPy itself is linked
against (its wheels bundle OpenBLAS with prefixed, 64-bit-integer CBLAS symbols), so it runs
the same kernels as every other product; where that library or symbol is not found (another
NumPy build), `gemm_update` computes the product with np.matmul instead and adds it.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np

from retrograd._numpy_blas import _find
from retrograd._ops.kernels.linalg import np_matmul

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
# below this many elements of C the call's fixed cost (argument conversion) outweighs the
# pass over the gradient it saves
MIN_FUSED_SIZE = 4096

def _load() -> dict:
    """dtype -> the CBLAS gemm of NumPy's own BLAS, typed; empty when none is found."""
    found = _find()
    if found is None:
        return {}
    lib, symbol, ilp64 = found
    size = ctypes.c_int64 if ilp64 else ctypes.c_int32
    fns = {}
    for dt, name in ((np.dtype(np.float32), "cblas_sgemm"), (np.dtype(np.float64), "cblas_dgemm")):
        fn = getattr(lib, symbol.format(name))
        scalar = ctypes.c_float if dt == np.float32 else ctypes.c_double
        fn.argtypes = [ctypes.c_int] * 3 + [size] * 3 + [
            scalar, ctypes.c_void_p, size, ctypes.c_void_p, size, scalar, ctypes.c_void_p, size]
        fn.restype = None
        fns[dt] = fn
    return fns


_gemms: dict | None = None


def _gemm_for(dt: np.dtype) -> Callable | None:
    global _gemms
    if _gemms is None:
        _gemms = _load()
    return _gemms.get(dt)


def _operand(x: np.ndarray) -> tuple[int, int] | None:
    """(transpose flag, leading dimension) of a 2-d operand BLAS reads in place, else None."""
    if x.flags.c_contiguous:
        return _NO_TRANS, max(x.shape[1], 1)
    if x.flags.f_contiguous:
        return _TRANS, max(x.shape[0], 1)
    return None


def blas_gemm_update(c: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: float) -> bool:
    """c += alpha * (a @ b) by one BLAS call, in place; False (c untouched) when the arrays
    are not ones it takes as they are: one float dtype, 2-d, c row-major and writeable and
    sharing no memory with a or b, a and b each row- or column-major."""
    dt = c.dtype
    if a.dtype != dt or b.dtype != dt or c.ndim != 2 or a.ndim != 2 or b.ndim != 2:
        return False
    gemm = _gemm_for(dt)
    if gemm is None or not c.flags.c_contiguous or not c.flags.writeable:
        return False
    m, n = c.shape
    k = a.shape[1]
    if a.shape[0] != m or b.shape != (k, n) or c.size == 0 or k == 0:
        return False
    ta, tb = _operand(a), _operand(b)
    if ta is None or tb is None or np.may_share_memory(c, a) or np.may_share_memory(c, b):
        return False
    gemm(_ROW_MAJOR, ta[0], tb[0], m, n, k, alpha, a.ctypes.data, ta[1], b.ctypes.data, tb[1],
         1.0, c.ctypes.data, n)
    return True


def gemm_update(c: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: float) -> None:
    """c += alpha * (a @ b) in place: one BLAS call when it can be, else the unfused
    update's arithmetic (the product, scaled, then added: eager's values bit for bit)."""
    if c.size >= MIN_FUSED_SIZE and blas_gemm_update(c, a, b, alpha):
        return
    g = np_matmul(a, b)
    g *= alpha
    c += g
