"""Sample calls for every op, the single source for the generated op tests.

Each family file (pointwise.py, reduction.py, ...) defines SAMPLES, a list of Sample. A Sample
names a call the same way on retrograd and torch ("mul", "Tensor.view",
"nn.functional.conv2d", "operator.getitem"), with NumPy arrays standing for tensors. From it the
tests run gradcheck and gradgradcheck in float64, and compare values, dtypes, shapes, strides,
node names and gradients with torch.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Sample:
    # a dotted name, or a function f(lib, *args) for calls a name cannot express
    op: object
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    name: str = ""
    # which array arguments require grad; default: every floating array (and in lists)
    requires_grad: tuple | None = None
    gradcheck: bool = True
    gradgrad: bool = True
    parity: bool = True
    # compare torch's node name (False where retrograd builds the same math with other nodes)
    check_node: bool = True
    check_strides: bool = True
    atol: float = 1e-5
    rtol: float = 1e-3
    # parity tolerance in float32
    parity_rtol: float = 1e-5
    parity_atol: float = 1e-6
    # dtype the parity run uses for float arrays ("float32"; "float64" where the math needs it)
    parity_dtype: str = "float32"
    # the op is random: only shapes/dtypes/grad_fn compared, no values
    random: bool = False

    @property
    def id(self) -> str:
        op = self.op if isinstance(self.op, str) else self.op.__name__
        return f"{op}-{self.name}" if self.name else op


_rng = np.random.default_rng(1234)


def arr(*shape, low: float = -1.0, high: float = 1.0, dtype: str = "float64",
        noncontig: bool = False, seed: int | None = None) -> np.ndarray:
    """A deterministic array for a sample; noncontig gives a transposed (strided) layout."""
    rng = np.random.default_rng(seed) if seed is not None else _rng
    if np.dtype(dtype).kind in "iub":
        if np.dtype(dtype).kind == "b":
            return rng.integers(0, 2, size=shape).astype(bool)
        return rng.integers(int(low), int(high), size=shape).astype(dtype)
    if noncontig and len(shape) >= 2:
        base = rng.uniform(low, high, size=shape[::-1]).astype(dtype)
        return base.T if len(shape) == 2 else np.moveaxis(base, range(len(shape)),
                                                          range(len(shape))[::-1])
    return rng.uniform(low, high, size=shape).astype(dtype)


def pos(*shape, low: float = 0.5, high: float = 2.0, **kw) -> np.ndarray:
    return arr(*shape, low=low, high=high, **kw)


def all_samples() -> list:
    out = []
    for info in pkgutil.iter_modules(__path__):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        out.extend(getattr(mod, "SAMPLES", []))
    return out
