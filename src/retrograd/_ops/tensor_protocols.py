"""Tensor methods of torch's Python layer that programs call: `in` and reversed(), the
element-wise Python callbacks apply_ / map_ / map2_, the deprecated non-in-place resize /
resize_as (autograd's Resize function, node ResizeBackward), nonzero_static, is_cpu,
const_data_ptr, dim_order and as_subclass."""

from __future__ import annotations

import numbers
import operator
from functools import reduce
from typing import Any

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._ops.registry import register, register_method
from retrograd._tensor import Tensor, _is_wrapper

AMBIGUOUS_ORDER = ("The tensor does not have unique dim order, or cannot map to exact one of "
                   "the given memory formats.")
ORDER_ARG = "The ambiguity_check argument must be a bool or a list of memory formats."
SUBCLASS = ("Creating a Tensor subclass from a class that does not inherit from Tensor is not "
            "possible. Make sure your class inherits from Tensor.")


def _contains(self: Tensor, element: Any) -> bool:
    if isinstance(element, (Tensor, numbers.Number)):
        found: Any = element == self
        return bool(found.any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                       f"{type(element)}.")


def _reversed(self: Tensor) -> Tensor:
    return self if self.dim() == 0 else self.flip(0)


# --- Python callbacks per element (CPU tensors only in torch, which is all of ours) ----------


def _no_grad_callback(self: Tensor, name: str) -> None:
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def _same_type(self: Tensor, other: Any, name: str, arg: str) -> Tensor:
    if not isinstance(other, Tensor) or other.dtype != self.dtype:
        got = other.type() if isinstance(other, Tensor) else type(other).__name__
        raise TypeError(f"{name}: expected {self.type()} for '{arg}' (got {got})")
    return other.expand_as(self)


def _write_each(self: Tensor, fn: Any, others: list) -> Tensor:
    flat_self = np.asarray(self.numpy()).reshape(-1).tolist()
    flat_others = [np.asarray(o.numpy()).reshape(-1).tolist() for o in others]
    out = []
    for i, v in enumerate(flat_self):
        r = fn(v, *(f[i] for f in flat_others))
        if not isinstance(r, (numbers.Real, np.bool_)):
            raise TypeError(f"must be real number, not {type(r).__name__}")
        out.append(r)
    result = np.array(out, dtype=object).astype(self.numpy().dtype).reshape(self.shape)
    self.copy_(_tensor_of(result))
    return self


def _tensor_of(a: np.ndarray) -> Tensor:
    import retrograd

    return retrograd.from_numpy(a)


def apply_(self: Tensor, callable: Any) -> Tensor:
    """Replaces each element x by callable(x) (a Python number in, a number out)."""
    _no_grad_callback(self, "apply_")
    return _write_each(self, callable, [])


def map_(self: Tensor, tensor: Tensor, callable: Any) -> Tensor:
    """Replaces each element x by callable(x, y), y from `tensor` broadcast to self."""
    _no_grad_callback(self, "map_")
    return _write_each(self, callable, [_same_type(self, tensor, "map_", "other")])


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Any) -> Tensor:
    _no_grad_callback(self, "map2_")
    return _write_each(self, callable, [_same_type(self, x, "map2_", "x"),
                                        _same_type(self, y, "map2_", "y")])


# --- deprecated non-in-place resize: reshapes, keeping the number of elements ------------------

_RESIZE: Any = None


def _resize_function() -> Any:
    global _RESIZE
    if _RESIZE is None:
        from retrograd.autograd import Function

        class Resize(Function):  # type: ignore[valid-type, misc]
            @staticmethod
            def forward(ctx: Any, tensor: Tensor, sizes: tuple) -> Tensor:
                ctx.sizes = sizes
                numel = reduce(operator.mul, sizes, 1)
                if tensor.numel() != numel:
                    raise RuntimeError(
                        f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in "
                        f"total), but the given tensor has a size of "
                        f"{'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). "
                        "autograd's resize can only change the shape of a given tensor, while "
                        "preserving the number of elements. ")
                ctx.input_sizes = tensor.size()
                return tensor.contiguous().view(sizes)

            @staticmethod
            def backward(ctx: Any, grad_output: Tensor) -> tuple:
                return grad_output.contiguous().view(ctx.input_sizes), None

            @staticmethod
            def jvp(ctx: Any, tangent: Tensor, _sizes: Any) -> Tensor:
                # torch's Resize has none; a reshape's tangent is the reshaped tangent
                return tangent.contiguous().view(ctx.sizes)

        _RESIZE = Resize
    return _RESIZE


def resize(self: Tensor, *sizes: Any) -> Tensor:
    _ws.warn("non-inplace resize is deprecated", stacklevel=2)
    return _resize_function().apply(self, sizes)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    _ws.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return _resize_function().apply(self, tuple(tensor.size()))


# --- nonzero with a fixed number of rows -------------------------------------------------------


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """nonzero's indices cut or padded (with fill_value) to exactly `size` rows."""
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"nonzero_static(): argument 'size' must be int, not "
                        f"{type(size).__name__}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    a = input.numpy()
    idx = np.argwhere(a) if a.ndim else np.zeros((int(bool(a)), 0), np.int64)
    out = np.full((size, a.ndim), fill_value, np.int64)
    n = min(size, idx.shape[0])
    out[:n] = idx[:n]
    return _tensor_of(out)


def _nonzero_static_method(self: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    return nonzero_static(self, size=size, fill_value=fill_value)


# --- metadata ---------------------------------------------------------------------------------


def _is_cpu(self: Tensor) -> bool:
    return True


def const_data_ptr(self: Tensor) -> int:
    return self.data_ptr()


def _has_several_orders(t: Tensor) -> bool:
    strides = t.stride()
    return (any(a == b for a, b in zip(strides, strides[1:]))
            or any(n == 1 for n in t.shape))


def _channels_last(t: Tensor) -> bool:
    import retrograd

    if t.dim() not in (4, 5):
        return False
    fmt = retrograd.channels_last if t.dim() == 4 else retrograd.channels_last_3d
    return t.is_contiguous(memory_format=fmt)


def _order(t: Tensor, check: Any) -> tuple[list, bool]:
    """The dims outermost first, and whether `check` asked for a unique order that the strides
    do not fix."""
    nd = t.dim()
    if nd <= 1:
        return list(range(nd)), False
    contiguous, channels_last = t.is_contiguous(), _channels_last(t)
    if contiguous and not channels_last:
        return list(range(nd)), False
    if channels_last and not contiguous:
        return [0, *range(2, nd), 1], False
    shape, strides = t.shape, t.stride()

    def at_least(a: int, b: int) -> bool:
        return b == 0 or (a != 0 and (a >= b or a % b == 0))

    def compare(a: int, b: int) -> int:
        # 1: a is inner to b; -1: a is outer; 0: the strides do not tell
        sa, sb = strides[a], strides[b]
        if sa == 0 or sb == 0:
            return 0
        if sa == sb:
            return 0 if at_least(shape[b], shape[a]) else 1
        if at_least(sb, sa):
            return -1
        return 1 if at_least(sa, sb) else 0

    # insertion sort from the innermost dim, stopping at the first ordered pair
    perm = list(range(nd))[::-1]
    for i in range(1, nd):
        j = i
        for k in range(i - 1, -1, -1):
            c = compare(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    ambiguous = bool(check) and any(compare(perm[i], perm[i + 1]) != -1
                                    for i in range(nd - 1))
    return perm[::-1], ambiguous


def dim_order(self: Tensor, *, ambiguity_check: bool | list = False) -> tuple:
    """The dims from outermost to innermost in memory."""
    import retrograd

    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(
                isinstance(f, retrograd.memory_format) for f in ambiguity_check):
            raise TypeError(ORDER_ARG)
    formats = ambiguity_check if isinstance(ambiguity_check, list) else []
    check_several = ambiguity_check if isinstance(ambiguity_check, bool) else True
    if check_several and _has_several_orders(self):
        if sum(1 for f in formats if self.is_contiguous(memory_format=f)) != 1:
            raise RuntimeError(AMBIGUOUS_ORDER)
    perm, ambiguous = _order(self, ambiguity_check)
    if ambiguous:
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(perm)


def as_subclass(self: Tensor, cls: type) -> Any:
    """An alias of self (AliasBackward0 when it requires grad) whose class is `cls`."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(SUBCLASS)
    from retrograd._ops.torch_function import DisableTorchFunctionSubclass
    from retrograd.ops import aten

    with DisableTorchFunctionSubclass():  # no call of self's __torch_function__, as in torch
        alias = aten.alias(self)
    out: Any = object.__new__(cls)
    for slot in ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_grad",
                 "_version_counter", "_view", "_grad_acc", "_meta"):
        setattr(out, slot, getattr(alias, slot))
    if _is_wrapper(out):  # its ops go to its class's __torch_dispatch__, as _make_subclass's
        from retrograd._ops.subclass import _track

        _track(out)
    return out


register_method("__contains__", _contains)
register_method("__reversed__", _reversed)
for _f in (apply_, map_, map2_, resize, resize_as, const_data_ptr, dim_order, as_subclass):
    register_method(_f.__name__, _f)
register("nonzero_static", nonzero_static)
register_method("nonzero_static", _nonzero_static_method)
register_method("is_cpu", property(_is_cpu))  # type: ignore[arg-type]
