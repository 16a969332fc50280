"""grid_sample and affine_grid: sampling an input at normalized grid locations (bilinear,
nearest or, in 2-d, bicubic; zeros / border / reflection padding; 2-d and 3-d), and the grids
of affine maps.

As torch: grid_sampler_2d / grid_sampler_3d (nodes GridSampler2DBackward0 / ...3D...) and
affine_grid_generator (AffineGridGeneratorBackward0, linear in theta). The sampler's gradient
is written with retrograd ops: to the input, each sample's weights scatter-added at the taps
it read; to the grid, the weights' slopes times the values read, times the coordinate map's
slope. The coordinates enter as their local linear map of the grid, so the formulas
differentiate again. The NumPy kernels are in kernels/grid_sample.py.
"""

from __future__ import annotations

from itertools import product
from math import prod

from retrograd import _warning_site as _ws
from retrograd._ops import comparison as C
from retrograd._ops.kernels.grid_sample import (
    BICUBIC,
    NEAREST,
    affine_grid_forward,
    base_grid,
    coords_and_slope,
    cubic_weights,
    grid_sampler_forward,
    tap_positions,
)
from retrograd._ops.layout import label_entry_points
from retrograd._ops.registry import op, register, register_functional
from retrograd._ops.shape import stack
from retrograd._tensor import Tensor, _wrap

_coords = op(
    "_grid_sampler_coords(Tensor coord, int size, int padding_mode, bool align_corners) "
    "-> (Tensor, Tensor)", coords_and_slope, function=False, method=False)


_taps = op(
    "_grid_sampler_taps(Tensor coord, int size, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> (Tensor, Tensor)", tap_positions, function=False, method=False)


def _tap_weights(x: Tensor, mode: int) -> tuple:
    """Each tap's weight along one dim as retrograd ops of the coordinate, and its slope."""
    t = x - x.detach().floor()
    if mode == BICUBIC:
        return cubic_weights(t)
    return [1 - t, t], [-1.0, 1.0]


def _sample_grads(grad, input, grid, interpolation_mode, padding_mode, align_corners,
                  output_mask):
    n, c = input.shape[:2]
    sizes = tuple(input.shape[2:])
    nsp = len(sizes)
    points = prod(grid.shape[1:-1])
    mode = interpolation_mode
    coord_padding = 0 if mode == BICUBIC else padding_mode  # bicubic pads each tap instead
    # per dim: the coordinate as its local linear map of the grid (exact value, the map's
    # slope), and the taps it reads: (position, inside, weight, weight's slope)
    slopes, taps = [], []
    for d in range(nsp):
        comp = grid.select(-1, nsp - 1 - d).reshape(n, points)
        value, slope = _coords(comp.detach(), sizes[d], coord_padding, align_corners)
        x = slope * comp + (value - slope * comp.detach())
        pos, inside = _taps(value, sizes[d], mode, padding_mode, align_corners)
        if mode == NEAREST:
            weights, dweights = [None], [None]
        else:
            weights, dweights = _tap_weights(x, mode)
        slopes.append(slope)
        taps.append([(pos[i], inside[i], weights[i], dweights[i]) for i in range(len(weights))])
    g = grad.reshape(n, c, points)
    flat_input = input.reshape(n, c, -1)
    grad_input = flat_input.new_zeros(tuple(flat_input.shape)) if output_mask[0] else None
    coord_grads = [None] * nsp
    for corner in product(*taps):
        flat, mask = None, None
        for (pos, inside, _, _), size in zip(corner, sizes):
            flat = pos if flat is None else flat * size + pos
            mask = inside if mask is None else C.logical_and(mask, inside)
        index = flat.unsqueeze(1).expand(n, c, points)
        mask = mask.to(g.dtype)
        weights = [w for _, _, w, _ in corner]
        if grad_input is not None:
            weight = mask
            for w in weights:
                weight = weight if w is None else weight * w
            grad_input = grad_input.scatter_add(2, index, g * weight.unsqueeze(1))
        if output_mask[1] and mode != NEAREST:
            read = (g * flat_input.gather(2, index)).sum(1) * mask
            for d in range(nsp):
                term = read * corner[d][3]
                for e, w in enumerate(weights):
                    if e != d:
                        term = term * w
                coord_grads[d] = term if coord_grads[d] is None else coord_grads[d] + term
    grad_grid = None
    if output_mask[1]:
        comps = [slopes[d] * 0 if coord_grads[d] is None else coord_grads[d] * slopes[d]
                 for d in reversed(range(nsp))]
        grad_grid = stack(comps, -1).reshape(tuple(grid.shape))
    if grad_input is not None:
        grad_input = grad_input.reshape(tuple(input.shape))
    return grad_input, grad_grid


_SAMPLER_ARGS = ("Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
                 "bool align_corners")
grid_sampler_2d = op(f"grid_sampler_2d({_SAMPLER_ARGS}) -> Tensor", grid_sampler_forward,
                     grads={"input, grid": _sample_grads}, method=False)
grid_sampler_3d = op(f"grid_sampler_3d({_SAMPLER_ARGS}) -> Tensor", grid_sampler_forward,
                     grads={"input, grid": _sample_grads}, method=False)


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """torch.grid_sampler: the 2-d or 3-d sampler by the input's rank."""
    sampler = grid_sampler_3d if input.dim() == 5 else grid_sampler_2d
    return sampler(input, grid, interpolation_mode, padding_mode, align_corners)


_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")
_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    if mode not in _MODES:
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDINGS:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        _ws.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return grid_sampler(input, grid, _MODES[mode], _PADDINGS[padding_mode], align_corners)


# --- affine_grid ------------------------------------------------------------------------------


def _theta_grad(grad, theta, size, align_corners):
    """grid = base @ theta^T per batch member, so d theta = grad^T @ base."""
    base = _wrap(base_grid(size, align_corners, theta._data.dtype))
    nsp = base.shape[-1] - 1
    rows = grad.reshape(grad.shape[0], -1, nsp)
    return rows.transpose(1, 2).matmul(base.reshape(-1, nsp + 1))


affine_grid_generator = op(
    "affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor",
    affine_grid_forward, grads={"theta": _theta_grad}, method=False)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    if align_corners is None:
        _ws.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"{_torch_dtype(theta)}")
    size = list(size) if not isinstance(size, (list, tuple)) else size
    shapes = {4: (2, 3, "2D"), 5: (3, 4, "3D")}
    if len(size) not in shapes:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    rows, cols, kind = shapes[len(size)]
    if theta.dim() != 3 or theta.shape[-2] != rows or theta.shape[-1] != cols:
        raise ValueError(f"Expected a batch of {kind} affine matrices of shape Nx{rows}x{cols} "
                         f"for size {size}. Got torch.Size({list(theta.shape)}).")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        _ws.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                 "grids when align_corners=True. This is not an intended use case of "
                 "affine_grid. See the documentation of affine_grid for details.",
                 stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, list(size), align_corners)


def _torch_dtype(t: Tensor) -> str:
    return "torch." + t.dtype.name if hasattr(t.dtype, "name") else str(t.dtype)


register("grid_sampler", grid_sampler)
register_functional("grid_sample", grid_sample)
register_functional("affine_grid", affine_grid)
label_entry_points([grid_sampler_2d, grid_sampler_3d, affine_grid_generator])
