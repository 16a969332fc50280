"""How a tensor of any dtype is reduced by MPI, which knows only C's number types.

bfloat16, float8 and float16 travel upcast to float32 (each rank's contribution is exact in
float32; the reduced result is rounded back once, so a bf16 sum is the correctly rounded sum,
not torch's rounding after each addition). bool reduces as bytes: SUM is "any" (MAX), PRODUCT
is "all" (MIN). AVG is a SUM divided by the group's size afterwards; for integers the quotient
is truncated toward zero.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

import numpy as np


class ReduceOp(Enum):
    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {list(ReduceOp).index(self)}>"


_MPI_OPS = {ReduceOp.SUM: "SUM", ReduceOp.PRODUCT: "PROD", ReduceOp.MIN: "MIN",
            ReduceOp.MAX: "MAX", ReduceOp.AVG: "SUM"}
_BOOL_OPS = {ReduceOp.SUM: "MAX", ReduceOp.PRODUCT: "MIN", ReduceOp.MIN: "MIN",
             ReduceOp.MAX: "MAX"}


def needs_upcast(dt: np.dtype) -> bool:
    return dt.kind == "V" or dt == np.float16


def plan(arr: np.ndarray, op: ReduceOp, name: str,
         size: int) -> tuple[np.ndarray, Any, Callable[[np.ndarray], np.ndarray]]:
    """(contiguous send buffer, MPI op, finish) for reducing `arr` with `op` over `size` ranks;
    finish(reduced) turns the reduced buffer back into arr's dtype and shape."""
    from mpi4py import MPI

    if not isinstance(op, ReduceOp):
        raise ValueError(f"Invalid reduce op {op!r}: use a member of ReduceOp")
    dt = arr.dtype
    if dt.kind == "c" and op in (ReduceOp.MIN, ReduceOp.MAX):
        raise ValueError(f"{name} does not support {op} on complex tensors")
    if dt.kind == "b":
        if op is ReduceOp.AVG:
            raise ValueError(f"{name} does not support {op} on bool tensors")
        send = np.ascontiguousarray(arr).view(np.uint8)
        return send, getattr(MPI, _BOOL_OPS[op]), lambda r: r.view(np.bool_).reshape(arr.shape)
    send = arr.astype(np.float32) if needs_upcast(dt) else np.ascontiguousarray(arr)
    mpi_op = getattr(MPI, _MPI_OPS[op])

    def finish(reduced: np.ndarray) -> np.ndarray:
        if op is ReduceOp.AVG:
            if reduced.dtype.kind in "iu":
                q = np.abs(reduced) // size
                reduced = np.where(reduced < 0, -q, q).astype(reduced.dtype)
            else:
                reduced = reduced / np.asarray(size, reduced.dtype)
        return reduced.astype(dt, copy=False).reshape(arr.shape)

    return send, mpi_op, finish
