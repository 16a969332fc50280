"""Upsampling (F.interpolate): nearest, nearest-exact, linear, bilinear, bicubic, trilinear, and
with antialias=True bilinear, bicubic and lanczos.

NOTE [Separable resampling]
Every mode here resamples each spatial dimension independently: output = input multiplied along
dimension d by an (out_d, in_d) matrix whose rows hold the interpolation weights of one output
position (one 1 for nearest; two weights for linear; four, at clamped indices, for cubic; with
antialiasing, a filter stretched over every input the output covers when shrinking). The
forward applies the matrices, the backward applies their transposes (`*_backward` ops), and the
backward's derivative is the forward again, so double backward needs no extra code. Source
positions and weights follow torch's CPU kernels: nearest computes in float32, the interpolating
modes in the input's precision.

The NumPy kernels the declarations run are in kernels/upsample.py.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._ops.kernels.upsample import (
    _apply,
    _check_sizes,
    _deprecated,
    _matrices,
    check_dtype,
    resample,
)
from retrograd._ops.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d
from retrograd._ops.registry import op, register_functional
from retrograd._tensor import Tensor


def _declare(name: str, kind: str, dims: int, align: bool, node: str) -> tuple:
    """The forward op `name` and its backward `name_backward` (NOTE [Separable resampling])."""
    ac = " bool align_corners," if align else ""

    def forward(a, output_size, *rest):
        align_corners, scales = rest if align else (False, rest[0])
        _check_sizes(a, output_size, dims)
        check_dtype(kind, dims, a.dtype)
        return resample(a, kind, output_size, align_corners, scales)

    def backward(g, output_size, input_size, *rest):
        align_corners, scales = rest if align else (False, rest[0])
        return _apply(g, _matrices(kind, input_size[2:], output_size, align_corners, scales,
                                   g.dtype), transpose=True)

    if align:
        def fwd_grad(grad, self_shape, output_size, align_corners, scale_factors):
            return bwd_op(grad, output_size, self_shape, align_corners, scale_factors)

        def bwd_grad(grad, output_size, align_corners, scale_factors):
            return fwd_op(grad, output_size, align_corners, scale_factors)
    else:
        def fwd_grad(grad, self_shape, output_size, scale_factors):
            return bwd_op(grad, output_size, self_shape, scale_factors)

        def bwd_grad(grad, output_size, scale_factors):
            return fwd_op(grad, output_size, scale_factors)

    bwd_op = op(f"{name}_backward(Tensor grad_output, SymInt[] output_size, "
                f"SymInt[] input_size,{ac} float[]? scale_factors=None) -> Tensor", backward,
                grads={"grad_output": bwd_grad}, node=f"{node}BackwardBackward0",
                function=False, method=False)
    fwd_op = op(f"{name}(Tensor self, SymInt[] output_size,{ac} float[]? scale_factors=None) "
                "-> Tensor", forward, grads={"self": fwd_grad}, node=f"{node}Backward0",
                function=False, method=False)
    return fwd_op, bwd_op


_OPS = {}  # (mode, spatial dims) -> (op, takes align_corners)
for _mode, _kind, _dims, _name, _node in (
        ("nearest", "nearest", 1, "upsample_nearest1d", "UpsampleNearest1D"),
        ("nearest", "nearest", 2, "upsample_nearest2d", "UpsampleNearest2D"),
        ("nearest", "nearest", 3, "upsample_nearest3d", "UpsampleNearest3D"),
        ("nearest-exact", "nearest_exact", 1, "_upsample_nearest_exact1d",
         "UpsampleNearestExact1D"),
        ("nearest-exact", "nearest_exact", 2, "_upsample_nearest_exact2d",
         "UpsampleNearestExact2D"),
        ("nearest-exact", "nearest_exact", 3, "_upsample_nearest_exact3d",
         "UpsampleNearestExact3D"),
        ("linear", "linear", 1, "upsample_linear1d", "UpsampleLinear1D"),
        ("bilinear", "linear", 2, "upsample_bilinear2d", "UpsampleBilinear2D"),
        ("trilinear", "linear", 3, "upsample_trilinear3d", "UpsampleTrilinear3D"),
        ("bicubic", "cubic", 2, "upsample_bicubic2d", "UpsampleBicubic2D"),
        ("bilinear-aa", "linear_aa", 2, "_upsample_bilinear2d_aa", "UpsampleBilinear2DAa"),
        ("bicubic-aa", "cubic_aa", 2, "_upsample_bicubic2d_aa", "UpsampleBicubic2DAa"),
        ("lanczos-aa", "lanczos_aa", 2, "_upsample_lanczos2d_aa", "UpsampleLanczos2DAa")):
    _align = not _kind.startswith("nearest")
    _OPS[(_mode, _dims)] = (_declare(_name, _kind, _dims, _align, _node)[0], _align)


def _is_integer(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) or (
        isinstance(x, Tensor) and not x.is_floating_point() and x.dim() == 0)


def _sizes(input: Tensor, size, scale_factor, recompute_scale_factor, mode: str):
    """(output_size, scale_factors) as torch's F.interpolate resolves them."""
    dim = input.dim() - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{spatial} and output size of {size}. Please provide input "
                                 "tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, "
                                "int] or Tuple[int, int, int], but got size with types "
                                f"{[type(x) for x in size]}")
            out = [int(x) for x in size]
        else:
            out = [int(size)] * dim
    elif scale_factor is not None:
        out = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial "
                                 "dimensions, but got input with spatial dimensions of "
                                 f"{spatial} and scale_factor of shape {scale_factor}. Please "
                                 "provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out is None:
        recompute_scale_factor = True
    if out is None:  # output sizes from the scales; the kernels see the scales unless recomputed
        out = [math.floor(n * s) for n, s in zip(spatial, scales)]
        if recompute_scale_factor:
            scales = None
    return out, scales


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dimensions of a (N, C, *spatial) input; torch's modes and rules."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    out, scales = _sizes(input, size, scale_factor, recompute_scale_factor, mode)
    if mode == "lanczos" and align_corners:
        raise ValueError("Lanczos mode does not support align_corners=True")
    if antialias:
        if not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                             "modes and requires a 4-D tensor as input")
        mode += "-aa"
    elif mode == "lanczos":
        raise ValueError("Lanczos mode requires antialias=True")
    dims = input.dim() - 2
    if mode == "area" and dims in (1, 2):
        return (adaptive_avg_pool1d if dims == 1 else adaptive_avg_pool2d)(input, out)
    if mode == "area" and dims == 3:
        raise NotImplementedError("interpolate: mode 'area' needs adaptive_avg_pool3d, which "
                                  "retrograd does not have yet")
    entry = _OPS.get((mode, dims))
    if entry is not None:
        fn, align = entry
        return fn(input, out, align_corners, scales) if align else fn(input, out, scales)
    wanted = {"linear": 3, "bilinear": 4, "trilinear": 5}
    if mode in wanted and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{wanted[mode]}D input")
    raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.dim()}D) for the modes: nearest | linear | bilinear | "
                              "bicubic | trilinear | lanczos | area | nearest-exact (got "
                              f"{mode})")


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """The deprecated name of interpolate."""
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


for _fn in (interpolate, upsample, upsample_nearest, upsample_bilinear):
    register_functional(_fn.__name__, _fn)
