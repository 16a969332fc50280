"""NumPy kernels of upsampling: the per-dimension resampling matrices (nearest, linear, cubic,
antialiased; NOTE
[Separable resampling]) and their application, size checks. retrograd._ops.upsample declares the
ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

import numpy as np

from retrograd import _warning_site as _ws

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


def _cubic_near(x, a):
    """Keys' cubic convolution kernel for |x| <= 1."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic_far(x, a):
    """Keys' cubic convolution kernel for 1 < |x| < 2."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _cubic_matrix(in_size: int, out_size: int, align_corners: bool, scale,
                  dtype) -> np.ndarray:
    s = _scale(in_size, out_size, align_corners, scale, dtype)
    dst = np.arange(out_size).astype(dtype)
    real = s * dst if align_corners else s * (dst + dtype.type(0.5)) - dtype.type(0.5)
    index = np.floor(real).astype(np.int64)
    t = (real - index.astype(dtype)).astype(dtype)
    a = _CUBIC_A
    weights = (_cubic_far(t + 1, a), _cubic_near(t, a), _cubic_near(1 - t, a),
               _cubic_far(2 - t, a))
    m = np.zeros((out_size, in_size), dtype)
    rows = np.arange(out_size)
    for k, w in enumerate(weights):
        np.add.at(m, (rows, np.clip(index - 1 + k, 0, in_size - 1)), w.astype(dtype))
    return m


def _aa_filter(kind: str, x: np.ndarray) -> np.ndarray:
    """The antialiasing filters: the triangle (bilinear), Keys' cubic with a = -0.5, the value
    PIL uses (bicubic; the plain bicubic mode uses -0.75), and Lanczos-3."""
    if kind == "lanczos_aa":  # sinc(x) sinc(x / 3) on [-3, 3), PIL's truncated sinc
        return np.where((x >= -3.0) & (x < 3.0), np.sinc(x) * np.sinc(x / 3.0), 0.0)
    x = np.abs(x)
    if kind == "linear_aa":
        return np.maximum(1.0 - x, 0.0)
    return np.where(x < 1.0, _cubic_near(x, -0.5),
                    np.where(x < 2.0, _cubic_far(x, -0.5), 0.0))


def _antialiased_matrix(kind: str, in_size: int, out_size: int, align_corners: bool,
                        scale) -> np.ndarray:
    """The (out, in) float64 weights of antialiased resampling (torch's
    _compute_indices_min_size_weights_aa): each output position takes the inputs within the
    filter's support around its center, weighted by the filter and normalized to sum 1; when
    shrinking, the filter is stretched by the scale so each output averages every input it
    covers."""
    s = float(_scale(in_size, out_size, align_corners, scale, np.dtype(np.float64)))
    half = {"linear_aa": 1.0, "cubic_aa": 2.0, "lanczos_aa": 3.0}[kind]  # half the width
    support = half * s if s >= 1.0 else half
    invscale = 1.0 / s if s >= 1.0 else 1.0
    max_size = int(np.ceil(support)) * 2 + 1
    m = np.zeros((out_size, in_size))
    for i in range(out_size):
        center = s * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        size = min(max(min(int(center + support + 0.5), in_size) - lo, 0), max_size)
        j = np.arange(lo, lo + size)
        w = _aa_filter(kind, (j - center + 0.5) * invscale)
        total = w.sum()
        m[i, j] = w / total if total != 0.0 else w
    return m


def _int16_weights(m: np.ndarray) -> tuple[np.ndarray, int]:
    """Weights as torch's uint8 kernels use them: scaled by 2**precision (the most bits that
    keep the largest weight within int16) and rounded half away from zero."""
    w_max = m.max() if m.size else 0.0
    precision = 0
    while precision < 22 and int(0.5 + w_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    scaled = m * (1 << precision)
    return np.trunc(scaled + np.where(scaled < 0, -0.5, 0.5)).astype(np.int64), precision


def _matrices(kind: str, in_sizes, out_sizes, align_corners, scales, dtype) -> list:
    dtype = np.dtype(dtype)
    if dtype.itemsize < 4:  # half types and uint8: float32 weights, one rounding at the end
        dtype = np.dtype(np.float32)
    scales = scales if scales is not None else [None] * len(out_sizes)
    out = []
    for n_in, n_out, sc in zip(in_sizes, out_sizes, scales):
        if kind in ("nearest", "nearest_exact"):
            out.append(_nearest_matrix(n_in, n_out, sc, kind == "nearest_exact", dtype))
        elif kind == "linear":
            out.append(_linear_matrix(n_in, n_out, align_corners, sc, dtype))
        elif kind.endswith("_aa"):
            out.append(_antialiased_matrix(kind, n_in, n_out, align_corners, sc).astype(dtype))
        else:
            out.append(_cubic_matrix(n_in, n_out, align_corners, sc, dtype))
    return out


_UNSUPPORTED_KERNEL = {  # (kind, spatial dims) -> the kernel torch names when it refuses a dtype
    ("nearest", 2): "upsample_nearest2d_channels_last",
    ("nearest_exact", 2): "upsample_nearest2d_channels_last",
    ("linear", 2): "upsample_bilinear2d_channels_last",
    ("cubic", 2): "compute_indices_weights_cubic",
    ("linear_aa", 2): "compute_index_ranges_weights",
    ("cubic_aa", 2): "compute_index_ranges_weights",
    ("lanczos_aa", 2): "compute_index_ranges_weights",
}
_TYPE_NAMES = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
               "int64": "Long", "bool": "Bool", "float16": "Half", "bfloat16": "BFloat16"}


def check_dtype(kind: str, dims: int, dtype: np.dtype) -> None:
    """torch's dtypes: every float one, and uint8 (images) for nearest resampling and for
    bilinear and bicubic in 2-d; the antialiased modes take float32 and float64 only."""
    if dtype.kind == "f" and not (kind.endswith("_aa") and dtype.itemsize < 4):
        return
    if dtype.name == "bfloat16" and not kind.endswith("_aa"):
        return
    if dtype == np.uint8 and (kind.startswith("nearest") or dims == 2):
        return
    kernel = _UNSUPPORTED_KERNEL.get((kind, dims)) or (
        "compute_indices_weights_nearest" if kind.startswith("nearest") else
        "compute_indices_weights_linear")
    name = _TYPE_NAMES.get(dtype.name, dtype.name)
    raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def resample(a: np.ndarray, kind: str, output_size, align_corners, scales) -> np.ndarray:
    """The forward resampling. A uint8 image is resampled as torch's uint8 kernels do it: the
    float64 weights rounded to int16 (_int16_weights), integer sums, one dimension at a time,
    last first, each pass rounding into 0..255 (bit for bit torch's)."""
    if a.dtype != np.uint8 or kind.startswith("nearest"):
        return _apply(a, _matrices(kind, a.shape[2:], output_size, align_corners, scales,
                                   a.dtype), transpose=False)
    scales = scales if scales is not None else [None] * len(output_size)
    first = a.ndim - len(output_size)
    for i in reversed(range(len(output_size))):
        n_in, n_out = a.shape[first + i], output_size[i]
        m = _matrices(kind, [n_in], [n_out], align_corners, [scales[i]], np.float64)[0]
        if n_in == n_out and (m == np.eye(n_in)).all():
            continue  # a pass that changes nothing
        w, precision = _int16_weights(m)
        moved = np.moveaxis(a, first + i, -1).astype(np.int64)
        acc = moved @ w.T + (1 << (precision - 1))
        a = np.moveaxis(np.clip(acc >> precision, 0, 255).astype(np.uint8), -1, first + i)
    return np.ascontiguousarray(a)


def _apply(a: np.ndarray, mats: list, transpose: bool) -> np.ndarray:
    """Multiply the trailing len(mats) dimensions of `a` by mats (or their transposes)."""
    first = a.ndim - len(mats)
    dtype = a.dtype
    if dtype.itemsize < 4:
        a = a.astype(np.float32)
    for i, m in enumerate(mats):
        moved = np.moveaxis(a, first + i, -1)
        a = np.moveaxis(moved @ (m if transpose else m.T), -1, first + i)
    return np.ascontiguousarray(a, dtype=dtype)


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
    _ws.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
             "instead.", stacklevel=3)
