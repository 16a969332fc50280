"""NumPy kernels of upsampling: the per-dimension resampling matrices (nearest, linear, cubic; NOTE
[Separable resampling]) and their application, size checks. retrograd._ops.upsample declares the
ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import warnings

import numpy as np

_CUBIC_A = -0.75


def _scale(in_size: int, out_size: int, align_corners: bool, scale, dtype) -> float:
    """Source positions per output position (torch's area_pixel_compute_scale)."""
    if align_corners:
        return dtype.type((in_size - 1) / (out_size - 1)) if out_size > 1 else dtype.type(0)
    if scale is not None and scale > 0:
        return dtype.type(1.0) / dtype.type(scale)
    return dtype.type(in_size) / dtype.type(out_size)


def _nearest_matrix(in_size: int, out_size: int, scale, exact: bool, dtype) -> np.ndarray:
    f32 = np.dtype(np.float32)
    s = f32.type(1.0) / f32.type(scale) if scale is not None and scale > 0 else (
        f32.type(in_size) / f32.type(out_size))
    dst = np.arange(out_size, dtype=np.float32)
    if exact:
        dst = dst + np.float32(0.5)
    src = np.minimum(np.floor(dst * s).astype(np.int64), in_size - 1)
    m = np.zeros((out_size, in_size), dtype)
    m[np.arange(out_size), src] = 1
    return m


def _linear_matrix(in_size: int, out_size: int, align_corners: bool, scale,
                   dtype) -> np.ndarray:
    s = _scale(in_size, out_size, align_corners, scale, dtype)
    dst = np.arange(out_size).astype(dtype)
    real = s * dst if align_corners else np.maximum(s * (dst + dtype.type(0.5)) - dtype.type(0.5),
                                                    dtype.type(0))
    index = np.minimum(np.floor(real).astype(np.int64), in_size - 1)
    lam = np.clip(real - index.astype(dtype), 0, 1).astype(dtype)
    nxt = index + (index < in_size - 1)
    m = np.zeros((out_size, in_size), dtype)
    rows = np.arange(out_size)
    np.add.at(m, (rows, index), 1 - lam)
    np.add.at(m, (rows, nxt), lam)
    return m


def _cubic_matrix(in_size: int, out_size: int, align_corners: bool, scale,
                  dtype) -> np.ndarray:
    s = _scale(in_size, out_size, align_corners, scale, dtype)
    dst = np.arange(out_size).astype(dtype)
    real = s * dst if align_corners else s * (dst + dtype.type(0.5)) - dtype.type(0.5)
    index = np.floor(real).astype(np.int64)
    t = (real - index.astype(dtype)).astype(dtype)
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    m = np.zeros((out_size, in_size), dtype)
    rows = np.arange(out_size)
    for k, w in enumerate(weights):
        np.add.at(m, (rows, np.clip(index - 1 + k, 0, in_size - 1)), w.astype(dtype))
    return m


def _matrices(kind: str, in_sizes, out_sizes, align_corners, scales, dtype) -> list:
    dtype = np.dtype(dtype)
    scales = scales if scales is not None else [None] * len(out_sizes)
    out = []
    for n_in, n_out, sc in zip(in_sizes, out_sizes, scales):
        if kind in ("nearest", "nearest_exact"):
            out.append(_nearest_matrix(n_in, n_out, sc, kind == "nearest_exact", dtype))
        elif kind == "linear":
            out.append(_linear_matrix(n_in, n_out, align_corners, sc, dtype))
        else:
            out.append(_cubic_matrix(n_in, n_out, align_corners, sc, dtype))
    return out


def _apply(a: np.ndarray, mats: list, transpose: bool) -> np.ndarray:
    """Multiply the trailing len(mats) dimensions of `a` by mats (or their transposes)."""
    first = a.ndim - len(mats)
    for i, m in enumerate(mats):
        moved = np.moveaxis(a, first + i, -1)
        a = np.moveaxis(moved @ (m if transpose else m.T), -1, first + i)
    return np.ascontiguousarray(a)


def _check_sizes(a: np.ndarray, output_size, dims: int) -> None:
    in_sizes = a.shape[2:]
    if a.ndim != dims + 2:
        raise RuntimeError(f"It is expected input_size equals to {dims + 2}, but got size "
                           f"{a.ndim}")
    if len(output_size) != dims:
        raise RuntimeError(f"It is expected output_size equals to {dims}, but got size "
                           f"{len(output_size)}")
    if min(in_sizes) <= 0 or min(output_size) <= 0:
        spatial = ", ".join(f"{'DHW'[3 - dims + i]}: {v}" for i, v in enumerate(in_sizes))
        out = ", ".join(f"{'DHW'[3 - dims + i]}: {v}" for i, v in enumerate(output_size))
        joint = " and" if dims == 1 else ""  # torch's 1-D message has an "and"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({spatial}){joint} output ({out})")


def _deprecated(name: str) -> None:
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=3)
