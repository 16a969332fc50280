"""Printing tensors the way torch prints them."""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D


def _format_array(arr: np.ndarray) -> str:
    if arr.dtype.kind in "V":
        arr = arr.astype(np.float32)
    if arr.dtype.kind == "b":
        return np.array2string(arr, separator=", ", formatter={"bool": lambda b: str(bool(b))})
    if arr.dtype.kind in "iu":
        return np.array2string(arr, separator=", ", threshold=1000)
    finite = arr[np.isfinite(arr)] if arr.size else arr
    ints = finite.size == 0 or np.all(finite == np.round(finite))
    absmax = float(np.abs(finite).max()) if finite.size else 0.0
    absmin = float(np.abs(finite[finite != 0]).min()) if np.any(finite != 0) else 0.0
    sci = finite.size > 0 and (absmax >= 1e8 or (absmin > 0 and (absmin < 1e-4 or
                                                                 absmax / absmin > 1e3)))
    if ints and not sci:
        fmt = lambda x: ("nan" if np.isnan(x) else ("inf" if x > 0 else "-inf")) \
            if not np.isfinite(x) else f"{x:.0f}."
    elif sci:
        fmt = lambda x: f"{x:.4e}"
    else:
        fmt = lambda x: f"{x:.4f}"
    return np.array2string(arr, separator=", ", formatter={"float_kind": fmt}, threshold=1000,
                           max_line_width=80 - len("tensor("))


def tensor_repr(t) -> str:
    arr = t._data
    body = _format_array(arr)
    body = body.replace("\n", "\n" + " " * len("tensor("))
    extras = []
    d = t.dtype
    if arr.size == 0 and arr.ndim != 1:
        body = "[]"
        extras.append(f"size={tuple(arr.shape)}")
    if d not in (D.get_default_dtype(), D.int64, D.bool):
        extras.append(f"dtype={d!r}")
    fn = t.grad_fn
    if fn is not None:
        extras.append(f"grad_fn=<{fn.name()}>")
    elif t._requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"
