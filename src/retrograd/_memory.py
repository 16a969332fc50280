"""The process's malloc policy for NumPy's large arrays.

NOTE [Retaining freed memory]
A training step allocates and frees the same large arrays every step (activations, gradients,
temporaries of the formulas). glibc's malloc returns the free memory at the top of its heap to
the OS as soon as more than a (small, adaptive) threshold of it accumulates, so the next step
maps the same memory again and touches every page afresh: measured here, a transformer block's
step took 3,800 page faults (about a third of its time) where torch took 35. retrograd therefore
asks glibc, once at import, to serve arrays up to 64 MiB from its heap and to keep up to 256 MiB
of freed memory for reuse, as a caching allocator would. This changes only when memory goes back
to the OS, never what a program computes. Set RETROGRAD_RETAIN_FREED_MEMORY=0 before importing
retrograd to keep glibc's defaults; other C libraries are left alone.
"""

from __future__ import annotations

import ctypes
import os
import platform

# mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD = 64 << 20
TRIM_THRESHOLD = 256 << 20


def retain_freed_memory() -> bool:
    """Apply the policy (see the note above); True if glibc accepted it."""
    if os.environ.get("RETROGRAD_RETAIN_FREED_MEMORY", "1") == "0":
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False
    ok = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    return libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok
