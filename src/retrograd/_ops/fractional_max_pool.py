"""Fractional max pooling: fractional_max_pool2d / 3d as ops of their own
(FractionalMaxPool2DBackward0, FractionalMaxPool3DBackward0) and the F functions over them.

The gradient scatter-adds to the saved indices, an op whose own gradient gathers (as torch's
double backward does). Without _random_samples the samples are drawn with rand, as torch's
F functions draw them. The NumPy kernel is in kernels/fractional_pool.py.
"""

from __future__ import annotations

import numpy as np

from retrograd._ops.kernels.fractional_pool import fractional_max_pool
from retrograd._ops.kernels.pooling_nd import gather_nd, scatter_nd
from retrograd._ops.layout import label_entry_points, not_implemented
from retrograd._ops.registry import op, register_functional
from retrograd._tensor import Tensor

_DIM_WORDS = {2: ["height", "width"], 3: ["time", "height", "width"]}


def _check_samples(x: np.ndarray, samples: np.ndarray, nsp: int) -> None:
    if x.dtype != samples.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch = x.shape[0] if x.ndim == nsp + 2 else 1
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != x.shape[-nsp - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nsp:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nsp}; got "
                           f"{samples.shape[2]}.")


def _declare(nsp: int):
    """fractional_max_pool<nsp>d with its scatter (backward) and gather (double backward)."""
    dim = f"{nsp}D"
    name = f"fractional_max_pool{nsp}d"
    where = name + "()" if nsp == 2 else name + "_out()"

    def forward(x, kernel_size, output_size, random_samples):
        if x.ndim not in (nsp + 1, nsp + 2):
            raise RuntimeError(f"{where}: Expected {nsp + 1}D or {nsp + 2}D tensor, but got: "
                               f"{list(x.shape)}")
        for i in range(1, x.ndim):
            if x.shape[i] == 0:
                raise RuntimeError(
                    f"{where}: Expected input to have non-zero size for non-batch dimensions, "
                    f"but got{list(x.shape)} with dimension {i} being empty.")
        spatial = x.shape[-nsp:]
        for d in range(nsp):
            # torch's 3-d check is strict: the last window may not end at the input's end
            reach = output_size[d] + kernel_size[d] - 1 + (nsp == 3)
            if reach > spatial[d]:
                word = _DIM_WORDS[nsp][d]
                raise RuntimeError(f"{where}: pool {word} {kernel_size[d]} too large relative "
                                   f"to input {word} {spatial[d]}")
        _check_samples(x, random_samples, nsp)
        if x.dtype.kind not in "fV":
            raise not_implemented(name + "_out_frame", x.dtype)
        batched = x if x.ndim == nsp + 2 else x[None]
        out, idx = fractional_max_pool(batched, list(kernel_size), list(output_size),
                                       random_samples)
        return (out, idx) if x.ndim == nsp + 2 else (out[0], idx[0])

    scatter = op(
        f"_{name}_scatter(Tensor grad_output, Tensor indices, int[] self_size) -> Tensor",
        lambda grad, indices, self_size: scatter_nd(grad, indices, self_size, nsp),
        node=f"FractionalMaxPool{dim}BackwardBackward0",
        grads={"grad_output": lambda grad, indices: gather(grad, indices)},
        function=False, method=False)
    gather = op(
        f"_{name}_gather(Tensor self, Tensor indices) -> Tensor",
        lambda x, indices: gather_nd(x, indices, nsp),
        grads={"self": lambda grad, indices, self_shape: scatter(grad, indices,
                                                                 list(self_shape))},
        function=False, method=False)
    return op(
        f"{name}(Tensor self, int[{nsp}] kernel_size, int[{nsp}] output_size, "
        f"Tensor random_samples) -> (Tensor, Tensor)", forward,
        node=f"FractionalMaxPool{dim}Backward0", differentiable_outputs=(True, False),
        grads={"self": lambda grad, result1, self_shape: scatter(grad, result1,
                                                                 list(self_shape))},
        function=False, method=False)


_fractional_max_pool2d = _declare(2)
_fractional_max_pool3d = _declare(3)


def _sizes(value, nsp: int, what: str) -> list:
    """An int or a sequence of nsp ints (one int repeated), else torch's error."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if len(values) == 1:
        values = values * nsp
    if len(values) != nsp:
        name = f"fractional_max_pool{nsp}d"
        ints = "tuple of Ints" if nsp == 2 else "tuple of three Ints"
        raise RuntimeError(f"{name}: {what} must either be a single Int or {ints}")
    return [int(v) for v in values]


def _pool(input: Tensor, kernel_size, output_size, output_ratio, _random_samples,
          nsp: int) -> tuple:
    from retrograd._ops.random import rand

    name = f"fractional_max_pool{nsp}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nsp == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratio = output_ratio if isinstance(output_ratio, (list, tuple)) else [output_ratio]
        ratio = list(ratio) * nsp if len(ratio) == 1 else list(ratio)
        output_size = [int(input.size(d - nsp) * ratio[d]) for d in range(nsp)]
    if _random_samples is None:
        n_batch = 1 if input.dim() == nsp + 1 else input.size(0)
        _random_samples = rand(n_batch, input.size(-nsp - 1), nsp, dtype=input.dtype,
                               device=input.device)
    kernel = _sizes(kernel_size, nsp, "kernel_size")
    size = _sizes(output_size, nsp, "output_size")
    if any(v < 0 for v in size):
        bad = next(v for v in size if v < 0)
        shape = list(input.shape[:-nsp]) + size
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {shape}")
    fn = _fractional_max_pool2d if nsp == 2 else _fractional_max_pool3d
    return fn(input, kernel, size, _random_samples)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    return _pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    return _pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def _fractional_max_pool2d_values(input: Tensor, kernel_size, output_size=None,
                                  output_ratio=None, return_indices: bool = False,
                                  _random_samples: Tensor | None = None) -> Tensor:
    return _pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)[0]


def _fractional_max_pool3d_values(input: Tensor, kernel_size, output_size=None,
                                  output_ratio=None, return_indices: bool = False,
                                  _random_samples: Tensor | None = None) -> Tensor:
    return _pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)[0]


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False,
                          _random_samples: Tensor | None = None):
    out = _pool(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return out if return_indices else out[0]


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False,
                          _random_samples: Tensor | None = None):
    out = _pool(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return out if return_indices else out[0]


register_functional("fractional_max_pool2d", fractional_max_pool2d)
register_functional("fractional_max_pool3d", fractional_max_pool3d)
register_functional("fractional_max_pool2d_with_indices", fractional_max_pool2d_with_indices)
register_functional("fractional_max_pool3d_with_indices", fractional_max_pool3d_with_indices)
register_functional("_fractional_max_pool2d", _fractional_max_pool2d_values)
register_functional("_fractional_max_pool3d", _fractional_max_pool3d_values)
label_entry_points([_fractional_max_pool2d, _fractional_max_pool3d])
