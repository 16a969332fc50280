"""Padding: constant_pad_nd and nn.functional.pad's reflect / replicate / circular modes.

Padding by reflection / replication / wrap-around gathers along each padded dim with an index
vector; its backward scatter-adds with the same vectors.

The NumPy kernels the declarations run are in kernels/padding.py.
"""

from __future__ import annotations

from retrograd._ops.kernels.padding import (
    _check_index_pad,
    _circular_forward,
    _constant_pad_forward,
    _gather_pad,
    _scatter_pad,
)
from retrograd._ops.registry import op, register_functional
from retrograd._tensor import Tensor

PAD_DIMS = (
    "Padding size {} is not supported for {}D input tensor.\n"
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


# --- pad: constant ---------------------------------------------------------------------------


constant_pad_nd = op(
    "constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor", _constant_pad_forward,
    grads={"self": lambda grad, pad: constant_pad_nd(grad, [-p for p in pad])}, method=False)


# --- pad: reflect / replicate / circular -----------------------------------------------------


def _declare_index_pad(mode: str, torch_name: str, k: int) -> tuple:
    """Declare <torch_name><k>d and its backward (each differentiable by the other)."""
    name = f"{torch_name}{k}d"

    def forward(a, padding):
        _check_index_pad(a, tuple(padding), mode, k)
        return _gather_pad(a, tuple(padding), mode)

    backward = op(
        f"{name}_backward(Tensor grad_output, Tensor self, SymInt[{2 * k}] padding) -> Tensor",
        lambda g, a, padding: _scatter_pad(g, a.shape, tuple(padding), mode),
        grads={"grad_output": lambda grad, padding: fwd(grad, padding)},
        function=False, method=False)
    fwd = op(f"{name}(Tensor self, SymInt[{2 * k}] padding) -> Tensor", forward,
             grads={"self": lambda grad, self, padding: backward(grad, self, padding)},
             function=False, method=False)
    return fwd, backward


_INDEX_PADS = {(mode, k): _declare_index_pad(mode, torch_name, k)[0]
               for mode, torch_name in (("reflect", "reflection_pad"),
                                        ("replicate", "replication_pad"))
               for k in (1, 2, 3)}


# torch builds circular padding from slice copies (grad_fn CopySlices); one gather op here
_pad_circular_backward = op(
    "_pad_circular_backward(Tensor grad_output, Tensor self, SymInt[] pad) -> Tensor",
    lambda g, a, pad: _scatter_pad(g, a.shape, tuple(pad), "circular"),
    grads={"grad_output": lambda grad, pad: _pad_circular(grad, pad)},
    function=False, method=False)
_pad_circular = op("_pad_circular(Tensor self, SymInt[] pad) -> Tensor", _circular_forward,
                   grads={"self": lambda grad, self, pad: _pad_circular_backward(grad, self,
                                                                                 pad)},
                   function=False, method=False)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    nd = input.ndim
    if len(pad) // 2 > nd:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{nd}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(PAD_DIMS.format(len(pad), nd))
    if mode == "circular":
        return _pad_circular(input, pad)
    return _INDEX_PADS[(mode, k)](input, pad)


register_functional("pad", pad)
