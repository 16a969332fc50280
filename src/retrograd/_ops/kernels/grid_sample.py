"""NumPy kernels of grid sampling and affine grids: source coordinates (unnormalized, then
clipped or reflected as torch's padding modes do) with their slope, bilinear / nearest
sampling over 2 or 3 spatial dims, and the base grid of affine_grid. retrograd._ops
.grid_sample declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

from itertools import product
from math import prod

import numpy as np

from retrograd._ops.kernels.scatter import gather
from retrograd._ops.layout import not_implemented, type_name

BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2


def coords_and_slope(c: np.ndarray, size: int, padding_mode: int,
                     align_corners: bool) -> tuple:
    """Pixel coordinates of normalized grid values c along a dim of `size`, and d coord / d c
    (0 where clipped, negative where reflected back)."""
    one = c.dtype.type(1)
    if align_corners:
        x = (c + one) / 2 * (size - 1)
        slope = np.full(c.shape, (size - 1) / 2, c.dtype)
    else:
        x = ((c + one) * size - one) / 2
        slope = np.full(c.shape, size / 2, c.dtype)
    if padding_mode == REFLECTION:
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        x, sign = _reflect(x, low, high)
        slope = slope * sign
    if padding_mode in (BORDER, REFLECTION):
        inside = (x > 0) & (x < size - 1)
        x = np.clip(x, 0, size - 1).astype(c.dtype, copy=False)
        slope = np.where(inside, slope, 0).astype(c.dtype, copy=False)
    return x, slope


def _reflect(x: np.ndarray, twice_low: int, twice_high: int) -> tuple:
    """torch's reflect_coordinates, and the sign it gives the slope."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = x - x.dtype.type(low)
    sign = np.where(shifted < 0, -1, 1).astype(x.dtype)
    dist = np.abs(shifted)
    extra = np.fmod(dist, x.dtype.type(span))
    even = np.floor(dist / x.dtype.type(span)) % 2 == 0
    out = np.where(even, extra + x.dtype.type(low), x.dtype.type(span) - extra + low)
    return out.astype(x.dtype, copy=False), np.where(even, sign, -sign)


def check_grid_sampler(x: np.ndarray, grid: np.ndarray, mode: int) -> int:
    """torch's grid_sampler checks; returns the number of spatial dims."""
    nsp = x.ndim - 2
    if x.ndim and grid.ndim and x.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(x.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if x.ndim not in (4, 5) or grid.ndim != x.ndim:
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(x.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if grid.shape[-1] != nsp:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nsp} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    for i in range(2, x.ndim):
        if x.shape[i] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(x.shape)} with dimension "
                               f"{i} being empty")
    if mode == BICUBIC and nsp == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if x.dtype.kind not in "fV":
        raise not_implemented(f"grid_sampler_{nsp}d_cpu_kernel_impl", x.dtype)
    if grid.dtype != x.dtype:
        raise RuntimeError(f"expected scalar type {type_name(x.dtype)} but found "
                           f"{type_name(grid.dtype)}")
    return nsp


CUBIC_A = -0.75  # torch's cubic convolution coefficient


def tap_positions(x: np.ndarray, size: int, mode: int, padding_mode: int,
                  align_corners: bool) -> tuple:
    """The input positions a sample at coordinate x reads along one dim, stacked (taps, ...):
    the nearest one, the 2 around it (bilinear) or 4 (bicubic, each padded as torch pads a
    tap), clipped into range, and whether each is inside (an outside tap reads zero)."""
    if mode == NEAREST:
        taps = [np.rint(x)]
    else:
        base = np.floor(x) - (1 if mode == BICUBIC else 0)
        taps = [base + i for i in range(4 if mode == BICUBIC else 2)]
    if mode == BICUBIC and padding_mode != ZEROS:
        taps = [pad_pixel(q, size, padding_mode, align_corners) for q in taps]
    pos = np.stack([np.clip(q, 0, size - 1) for q in taps]).astype(np.int64)
    valid = np.stack([(q >= 0) & (q < size) for q in taps])
    return pos, valid


def pad_pixel(q: np.ndarray, size: int, padding_mode: int,
                               align_corners: bool) -> np.ndarray:
    """A pixel coordinate brought inside as the padding mode does (border: clipped;
    reflection: mirrored, then clipped)."""
    if padding_mode == REFLECTION:
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        q = _reflect(q, low, high)[0]
    return np.clip(q, 0, size - 1)


def cubic_weights(t):
    """The 4 bicubic tap weights at fraction t, and their derivatives (for arrays or Tensors:
    arithmetic only)."""
    a = CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    def d_near(x):
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def d_far(x):
        return (3 * a * x - 10 * a) * x + 8 * a

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    slopes = [d_far(t + 1), d_near(t), -d_near(1 - t), -d_far(2 - t)]
    return weights, slopes


def tap_weights(x: np.ndarray, mode: int) -> list:
    """Each tap's weight along one dim (the taps of tap_positions)."""
    if mode == NEAREST:
        return [np.ones_like(x)]
    t = x - np.floor(x)
    if mode == BICUBIC:
        return cubic_weights(t)[0]
    return [1 - t, t]


def _flat(pos: list, sizes: tuple) -> np.ndarray:
    flat = pos[0]
    for p, n in zip(pos[1:], sizes[1:]):
        flat = flat * n + p
    return flat


def grid_sampler_forward(x, grid, interpolation_mode, padding_mode, align_corners):
    nsp = check_grid_sampler(x, grid, interpolation_mode)
    n, c = x.shape[:2]
    sizes = x.shape[2:]
    out_sp = grid.shape[1:-1]
    out = np.zeros((n, c, prod(out_sp)), x.dtype)
    if not out.size:
        return out.reshape((n, c) + tuple(out_sp))
    # bicubic reads its taps around the unpadded coordinate and pads each tap instead
    coord_padding = ZEROS if interpolation_mode == BICUBIC else padding_mode
    taps = []
    for d in range(nsp):
        coord = coords_and_slope(grid[..., nsp - 1 - d].reshape(n, -1), sizes[d], coord_padding,
                                 align_corners)[0]
        pos, valid = tap_positions(coord, sizes[d], interpolation_mode, padding_mode,
                                   align_corners)
        taps.append(list(zip(pos, valid, tap_weights(coord, interpolation_mode))))
    flat_x = x.reshape(n, c, -1)
    for corner in product(*taps):
        flat = _flat([pos for pos, _, _ in corner], sizes)
        weight = np.logical_and.reduce([v for _, v, _ in corner]).astype(x.dtype)
        for _, _, w in corner:
            weight = weight * w
        vals = gather(flat_x, 2, np.broadcast_to(flat.reshape(n, 1, -1), out.shape))
        out += vals * weight.reshape(n, 1, -1).astype(x.dtype, copy=False)
    return out.reshape((n, c) + tuple(out_sp))


# --- affine grids -----------------------------------------------------------------------------


def _steps(n: int, align_corners: bool, dtype) -> np.ndarray:
    """torch's linspace_from_neg_one: n points spanning [-1, 1] (pixel centres unless aligned)."""
    if n <= 1:
        return np.zeros(max(n, 0), dtype)
    steps = np.linspace(-1, 1, n, dtype=np.float64)
    if not align_corners:
        steps = steps * (n - 1) / n
    return steps.astype(dtype)


def base_grid(size, align_corners: bool, dtype) -> np.ndarray:
    """(*spatial, nsp + 1): each point's (x, y[, z], 1)."""
    spatial = tuple(size[2:])
    axes = [_steps(n, align_corners, dtype) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # (D, H, W) order
    parts = list(mesh[::-1]) + [np.ones(spatial, dtype)]  # x varies along W, then y, z
    return np.stack(parts, axis=-1)


def affine_grid_forward(theta, size, align_corners):
    base = base_grid(size, align_corners, theta.dtype)
    nsp = base.shape[-1] - 1
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {nsp + 1}] but got: [{theta.shape[0]}, {nsp + 1}].")
    flat = base.reshape(-1, nsp + 1)
    out = np.matmul(flat[None], np.swapaxes(theta, 1, 2))
    return out.reshape((size[0],) + base.shape[:-1] + (nsp,))
