"""Ranges for composite functions while a profiler runs (F.linear, matmul, softmax, ...).

NOTE [Profiled composites]
torch's profiler shows a composite function as one range around the ops it is made of
("aten::linear" around "aten::t" and "aten::addmm"), and a factory such as randn as
"aten::randn" around "aten::empty" and "aten::normal_". retrograd's composites are plain Python
functions that the dispatch mode never sees, so while a profiler runs, `install` replaces them
in their public namespaces (retrograd, retrograd.nn.functional, Tensor methods) with wrappers
that open the range, and `uninstall` puts the originals back. With no profiler running the
originals are in place: nothing is added to any call. Calls between retrograd's own functions
(linear calling matmul) use the originals and get no range of their own.

randn, rand, zeros and ones are built, while profiled, as torch builds them: an empty tensor
filled in place (normal_, uniform_, zero_, fill_), which draws the same values; any call the
simple form does not cover (out=, names=, a size that does not parse) runs the original inside
the outer range.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from retrograd._autograd import profiling
from retrograd._tensor import Tensor

# (public name, aten range name, the op's argument names in schema order: the shapes recorded)
_FUNCTIONS = [
    ("matmul", "matmul", ("input", "other")),
    ("softmax", "softmax", ("input", "dim", "dtype")),
    ("log_softmax", "log_softmax", ("input", "dim", "dtype")),
    ("layer_norm", "layer_norm", ("input", "normalized_shape", "weight", "bias", "eps",
                                  "cudnn_enable")),
]
_FUNCTIONAL = [
    ("linear", "linear", ("input", "weight", "bias")),
    ("softmax", "softmax", ("input", "dim", "dtype")),
    ("log_softmax", "log_softmax", ("input", "dim", "dtype")),
    ("cross_entropy", "cross_entropy_loss", ("input", "target", "weight", "reduction",
                                             "ignore_index", "label_smoothing")),
    ("layer_norm", "layer_norm", ("input", "normalized_shape", "weight", "bias", "eps",
                                  "cudnn_enable")),
]
_METHODS = [
    ("matmul", "matmul", ("self", "other")),
    ("__matmul__", "matmul", ("self", "other")),
    ("softmax", "softmax", ("self", "dim", "dtype")),
    ("log_softmax", "log_softmax", ("self", "dim", "dtype")),
]
# factories torch builds on empty: (name, the in-place fill, whether it takes a generator)
_FACTORIES = [("randn", "normal_", True), ("rand", "uniform_", True), ("zeros", "zero_", False),
              ("ones", "fill_", False)]
_FACTORY_ARGS = 5  # torch records size, dtype, layout, device, pin_memory
_EMPTY_ARGS = 6  # and memory_format for empty

_saved: list = []  # (owner, attribute, original) while installed


def _shape(value: Any) -> list:
    return list(value._data.shape) if isinstance(value, Tensor) else []


def _ranged(fn: Callable, aten: str, names: tuple) -> Callable:
    signature = inspect.signature(fn)
    params = list(signature.parameters)
    # a name the function spells differently (self / input) is taken by its position
    keys = [n if n in params or i >= len(params) else params[i] for i, n in enumerate(names)]

    @functools.wraps(fn)
    def profiled(*args: Any, **kwargs: Any) -> Any:
        rec = profiling.active
        if rec is None:
            return fn(*args, **kwargs)
        r = rec.begin("aten::" + aten)
        if rec.record_shapes:
            try:
                bound = signature.bind(*args, **kwargs).arguments
                r.input_shapes = [_shape(bound.get(k)) for k in keys]
            except TypeError:  # the call itself is wrong: fn raises below
                r.input_shapes = [_shape(a) for a in args]
        try:
            return fn(*args, **kwargs)
        finally:
            rec.end(r)

    return profiled


def _factory(fn: Callable, empty: Callable, name: str, fill: str, random: bool) -> Callable:
    from retrograd._ops.creation import parse_size

    allowed = {"dtype", "device", "requires_grad"} | ({"generator"} if random else set())

    @functools.wraps(fn)
    def profiled(*size: Any, **kwargs: Any) -> Any:
        rec = profiling.active
        if rec is None:
            return fn(*size, **kwargs)
        r = rec.begin("aten::" + name)
        if rec.record_shapes:
            r.input_shapes = [[] for _ in range(_FACTORY_ARGS)]
        try:
            try:
                shape = parse_size(name, size) if set(kwargs) <= allowed else None
            except (TypeError, RuntimeError, ValueError):
                shape = None
            dtype = kwargs.get("dtype")
            if shape is None or (random and dtype is not None and not _plain_float(dtype)):
                return fn(*size, **kwargs)  # raises what it raises, or makes what it makes
            e = rec.begin("aten::empty")
            if rec.record_shapes:
                e.input_shapes = [[] for _ in range(_EMPTY_ARGS)]
            try:
                out = empty(shape, dtype=dtype, device=kwargs.get("device"))
            finally:
                rec.end(e)
            if random:
                getattr(out, fill)(generator=kwargs.get("generator"))
            elif fill == "fill_":
                out.fill_(1)
            else:
                out.zero_()
            if kwargs.get("requires_grad"):
                out.requires_grad_(True)
            return out
        finally:
            rec.end(r)

    return profiled


def _plain_float(dtype: Any) -> bool:
    from retrograd import _dtype as D

    return isinstance(dtype, D.dtype) and dtype.category == D._FLOAT and dtype not in D._FLOAT8


def _swap(owner: Any, attr: str, wrapper: Callable) -> None:
    _saved.append((owner, attr, owner.__dict__[attr] if isinstance(owner, type)
                   else getattr(owner, attr)))
    setattr(owner, attr, wrapper)


def install() -> None:
    """Put the ranged versions in place (profiler start)."""
    import retrograd
    from retrograd.nn import functional as F

    if _saved:
        return
    for attr, aten, names in _FUNCTIONS:
        _swap(retrograd, attr, _ranged(getattr(retrograd, attr), aten, names))
    for attr, aten, names in _FUNCTIONAL:
        _swap(F, attr, _ranged(getattr(F, attr), aten, names))
    for attr, aten, names in _METHODS:
        _swap(Tensor, attr, _ranged(Tensor.__dict__[attr], aten, names))
    empty = retrograd.empty
    for name, fill, random in _FACTORIES:
        _swap(retrograd, name, _factory(getattr(retrograd, name), empty, name, fill, random))
    _swap(retrograd, "empty", _ranged_factory(empty))


def _ranged_factory(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def profiled(*args: Any, **kwargs: Any) -> Any:
        rec = profiling.active
        if rec is None:
            return fn(*args, **kwargs)
        r = rec.begin("aten::empty")
        if rec.record_shapes:
            r.input_shapes = [[] for _ in range(_EMPTY_ARGS)]
        try:
            return fn(*args, **kwargs)
        finally:
            rec.end(r)

    return profiled


def uninstall() -> None:
    """Put the originals back (profiler stop)."""
    while _saved:
        owner, attr, original = _saved.pop()
        setattr(owner, attr, original)
