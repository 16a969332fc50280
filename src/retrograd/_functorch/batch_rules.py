"""Batching rules: how each op runs on BatchedTensors of one vmap level.

NOTE [Batching rules]
Every batched value is kept with its batch dimension first, so a rule only has to say where
the other dimensions went. The rule of an op is picked once, from its name or its schema:
  pointwise      element-wise ops with broadcasting: each batched argument gets size-1
                 dimensions after its batch dimension up to the largest per-example rank, so
                 ordinary broadcasting lines the batch up with itself and with unbatched values.
  dims           ops whose schema declares dimension arguments (`int dim`, `int[] dim`, `int[]?
                 dim`, `dim0`, `dims`, ...): with only `self` batched, each dimension is
                 normalized against the per-example rank and moved past the batch dimension
                 (`int[]? dim` = None, "all dimensions", becomes the per-example ones).
  same rank      ops whose tensor arguments line up dimension by dimension (cat, stack,
                 gather, softmax backward, ...): unbatched arguments are expanded, then `dims`.
  explicit       view/reshape/expand (the batch size goes first), full reductions (reduce the
                 per-example dimensions), matmul and its family (the batch is one more leading
                 dimension), convolution and pooling (the batch folds into N).
  fallback       anything else runs once per batch member and the results are stacked
                 (fallback.py), with torch's performance warning.
The rules run below autograd (NOTE [Wrapper subclasses]): they compute with the unwrapped
values and never record a graph; the op's node was built on the wrappers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._dtype import float32, float64
from retrograd._functorch.batched import BatchedTensor
from retrograd._ops import dispatch
from retrograd._ops import linalg as _linalg
from retrograd._ops import loss as _loss
from retrograd._ops import random as _random
from retrograd._ops import shape as _shape
from retrograd._ops.kernels.linalg import _matmul_batched_forward, _mm_forward
from retrograd._ops.kernels.loss import _nll_grad_matrix
from retrograd._tensor import Tensor, _wrap

INPLACE_BATCHED_INTO_UNBATCHED = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor "
    "`other` in extra_args that has more elements than `self`. This happened due to `other` "
    "being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
    "out-of-place operators instead of inplace arithmetic. If said operator is being called "
    "inside the PyTorch framework, please file a bug report instead.")
DYNAMIC_SHAPE = (
    "vmap: We do not support batching operators that can output dynamic shape. Attempted to "
    "vmap over aten::{}. Please file an issue at https://github.com/pytorch/pytorch/issues if "
    "you need this feature.")
SAME_RANDOMNESS_BATCHED_INPUT = (
    "Vmap does not currently support same randomness with a batched tensor input. Please file "
    "an issue with functorch")
AS_STRIDED_OUTSIDE = (
    "result = tensor.as_strided({}, {}, {}) can access memory outside of `tensor`. `result` can "
    "access some memory in range [{}, {}], but `tensor` can only access some memory in range "
    "[{}, {}]. This is not supported inside of vmap, please try to rewrite the `as_strided` call "
    "as a sequence of PyTorch view operations")
MASKED_SELECT = (
    "vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support "
    "this because for each batch this would return a differently shaped Tensor. Please file an "
    "issue at https://github.com/pytorch/pytorch/issues if you need this feature.")

DIM_ARGS = frozenset({"dim", "dim0", "dim1", "dim2", "dims", "dimension"})
DIM_TYPES = frozenset({"int", "int?", "int[]", "int[]?"})
# backward helpers' arguments giving the per-example shape of the input: the batch goes first
# (and the dimension arguments count in that shape's rank, not in the gradient's)
SIZE_ARGS = frozenset({"input_sizes", "input_size", "self_size", "self_sizes", "sizes"})
DYNAMIC = frozenset({"nonzero", "masked_select", "unique", "_unique", "_unique2",
                     "unique_consecutive", "unique_dim", "nonzero_static", "argwhere"})

# element-wise ops besides those forward-mode AD already knows as element-wise
POINTWISE_EXTRA = frozenset({
    "add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "mul.Tensor", "neg", "clone",
    "contiguous", "threshold_backward", "sigmoid_backward", "tanh_backward", "threshold",
    "_reduction_mask", "_reduction_eq_mask", "_reduction_masked_zero", "_reduction_sign",
    "eq.Tensor", "eq.Scalar", "ne.Tensor", "ne.Scalar", "lt.Tensor", "lt.Scalar", "le.Tensor",
    "le.Scalar", "gt.Tensor", "gt.Scalar", "ge.Tensor", "ge.Scalar", "where.self",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and.Tensor",
    "bitwise_or.Tensor", "bitwise_xor.Tensor", "bitwise_not", "isnan", "isinf", "isfinite",
    "masked_fill.Scalar", "masked_fill.Tensor", "_to_copy", "zeros_like", "ones_like",
    "full_like", "empty_like", "fill.Scalar", "fill.Tensor", "nan_to_num", "sgn", "conj",
    "real", "imag", "copy", "alias", "detach", "positive", "float_power.Tensor_Tensor",
    "float_power.Tensor_Scalar", "heaviside", "nextafter", "fmax", "fmin", "ldexp.Tensor",
    "signbit", "xlogy.Scalar_Other", "xlogy.Scalar_Self", "special_xlog1py", "i0", "polygamma",
    "mvlgamma", "relu6", "isposinf", "isneginf", "isreal", "round.decimals",
    "remainder.Scalar_Tensor", "logit", "elu_backward", "gelu_backward", "silu_backward",
    "softplus_backward", "hardtanh_backward", "leaky_relu_backward", "hardsigmoid_backward",
    "hardswish_backward", "log_sigmoid_backward", "prelu", "celu", "selu", "rrelu",
    "glu_backward", "mish_backward", "add_", "mul_", "sub_", "div_", "copy_", "clamp_",
    "exp_", "neg_", "zero_", "fill_.Scalar", "relu_", "sigmoid_", "tanh_", "addcmul_",
    "addcdiv_", "lerp_.Scalar", "lerp_.Tensor", "masked_fill_.Scalar", "masked_fill_.Tensor",
    "pow_.Scalar", "pow_.Tensor", "abs_", "sqrt_", "clamp_min_", "clamp_max_", "mul_.Tensor",
    "mul_.Scalar", "add_.Tensor", "add_.Scalar", "sub_.Tensor", "sub_.Scalar", "div_.Tensor",
    "div_.Scalar", "fill_.Tensor", "sign", "bitwise_and.Scalar", "bitwise_or.Scalar",
    "logical_not_", "floor_divide", "floor_divide.Scalar", "div.Tensor_mode",
    "div.Scalar_mode", "true_divide.Tensor", "clamp.Tensor", "where.ScalarOther",
    "where.ScalarSelf", "where.Scalar", "log_softmax_backward", "exponential_", "uniform_",
    "normal_", "bernoulli_.float", "bernoulli_.Tensor", "bernoulli", "bernoulli.p",
    "igamma", "igammac", "igamma_", "igammac_",
    "hardshrink_backward", "softshrink_backward",
})
# in-place samplers: each member draws its own values, or (randomness="same") all the same
RANDOM_INPLACE = frozenset({"uniform_", "normal_", "bernoulli_", "exponential_", "random_",
                            "cauchy_", "log_normal_", "geometric_"})
# ops whose tensor arguments line up dimension by dimension
SAME_RANK = frozenset({
    "cat", "stack", "gather", "scatter.src", "scatter.value", "scatter_add", "scatter.reduce",
    "scatter.value_reduce", "scatter_reduce.two", "_softmax_backward_data",
    "_log_softmax_backward_data", "take_along_dim", "diagonal_scatter", "select_scatter",
    "slice_scatter",
    "cumsum_backward", "_masked_softmax", "_reduction_select_scatter",
    "_reduction_select_gather",
    "linalg_cross",
})
# creation ops that read only their argument's dtype and device: the result is unbatched
UNBATCHED_RESULT = frozenset({"new_zeros", "new_ones", "new_empty", "new_full",
                              "new_empty_strided", "scalar_tensor"})
METHOD_NAMES = frozenset({"sym_size", "sym_stride", "sym_numel", "sym_storage_offset"})

_rules: dict = {}  # op name -> rule
_rule_of: dict = {}  # OpDef (or a user op) -> rule: one lookup per call
_OpOverload = dispatch.OpOverload


def apply_rule(func: Any, args: tuple, kwargs: dict) -> Any:
    """Run func on args holding BatchedTensors (NOTE [Batching rules])."""
    if kwargs:
        args = _positional(func, args, kwargs)
    key = func._op if func.__class__ is _OpOverload else func
    rule = _rule_of.get(key)
    if rule is None:
        name = _name(func)
        rule = _rules.get(name)
        if rule is None:
            rule = _rules[name] = _choose(func, name)
        _rule_of[key] = rule
    return rule(func, args, _level_of(args))


def _positional(func: Any, args: tuple, kwargs: dict) -> tuple:
    full = list(args)
    for a in func._schema.args[len(args):]:
        full.append(kwargs[a.name] if a.name in kwargs else a.default)
    return tuple(full)


def _name(func: Any) -> str:
    op = getattr(func, "_op", None)
    if op is not None:
        return op.name
    return func.name()[len("aten::"):] if hasattr(func, "name") else str(func)


def _level_of(args: Any) -> int:
    level = 0
    for a in args:
        if type(a) is BatchedTensor:
            if a._level > level:
                level = a._level
        elif isinstance(a, (list, tuple)):
            for t in a:
                if type(t) is BatchedTensor and t._level > level:
                    level = t._level
    return level


def _batched(a: Any, level: int) -> bool:
    return type(a) is BatchedTensor and a._level == level


def _batch_size(args: Any, level: int) -> int:
    """The batch size of the batched arguments (a batch of one broadcasts beside others)."""
    sizes = []
    for a in args:
        if _batched(a, level):
            sizes.append(a._value.shape[0])
        elif isinstance(a, (list, tuple)):
            sizes.extend(t._value.shape[0] for t in a if _batched(t, level))
    if not sizes:
        raise AssertionError("no batched argument")
    return max(sizes)


def wrap(out: Any, level: int) -> Any:
    if isinstance(out, Tensor):
        return BatchedTensor(out, level)
    if isinstance(out, tuple):
        return tuple(wrap(o, level) for o in out)
    if isinstance(out, list):
        return [wrap(o, level) for o in out]
    return out


def _pad(v: Any, rank: int) -> Any:
    """Value v (batch first; a Tensor or an array) with size-1 dimensions after the batch up
    to per-example rank."""
    missing = rank - (len(v.shape) - 1)
    if missing <= 0:
        return v
    return v.reshape((v.shape[0],) + (1,) * missing + tuple(v.shape[1:]))


def _expand_batch(a: Tensor, size: int) -> Tensor:
    return a.unsqueeze(0).expand((size,) + tuple(a.shape))


def _check_inplace(op: Any, args: tuple, level: int) -> None:
    for i in op.inplace_idx:
        if not _batched(args[i], level):
            raise RuntimeError(INPLACE_BATCHED_INTO_UNBATCHED)


# --- rule choice -----------------------------------------------------------------------------


def _choose(func: Any, name: str) -> Callable:
    explicit = EXPLICIT.get(name)
    if explicit is not None:
        return explicit
    op = getattr(func, "_op", None)
    if op is None:
        from retrograd._functorch.fallback import fallback

        return fallback
    base = op.schema.name
    if base in DYNAMIC:
        def dynamic(func: Any, args: tuple, level: int) -> Any:
            if base == "masked_select" and _batched(args[1], level):
                raise RuntimeError(MASKED_SELECT)
            if base == "masked_select":
                return _masked_select_unbatched_mask(args, level)
            raise RuntimeError(DYNAMIC_SHAPE.format(base))
        return dynamic
    if base in UNBATCHED_RESULT:
        return _unbatched_result
    if base in RANDOM_INPLACE:
        return _random_inplace
    if name in POINTWISE_EXTRA or op.jvp_rule == "elementwise" or _inplace_of_pointwise(name):
        return _pointwise
    dims = tuple(i for i, a in enumerate(op.schema.args)
                 if a.name in DIM_ARGS and a.type in DIM_TYPES)
    if dims:
        return _dims_rule(op, dims, _same_rank(name))
    from retrograd._functorch.fallback import fallback

    return fallback


def _masked_select_unbatched_mask(args: tuple, level: int) -> Any:
    """masked_select of a batched self with a mask the members share: every member selects
    the same positions, so the result has a fixed size per member, (batch, count)."""
    self_t, mask = args[0], args[1]
    value = self_t._value
    shape = tuple(np.broadcast_shapes(tuple(value.shape[1:]), tuple(mask.shape)))
    rows = value.reshape((value.shape[0],) + (1,) * (len(shape) - value.dim() + 1)
                         + tuple(value.shape[1:])).expand((value.shape[0],) + shape)
    return wrap(rows[:, mask.expand(shape)], level)


def _same_rank(name: str) -> bool:
    """In SAME_RANK, itself or as the in-place form of an op there (scatter_.value)."""
    base, dot, overload = name.partition(".")
    return name in SAME_RANK or (base.endswith("_") and base[:-1] + dot + overload in SAME_RANK)


def _inplace_of_pointwise(name: str) -> bool:
    from retrograd._ops.registry import OPS

    base, dot, overload = name.partition(".")
    if not base.endswith("_"):
        return False
    twin = OPS.get(base[:-1] + dot + overload) or OPS.get(base[:-1])
    return twin is not None and (twin.name in POINTWISE_EXTRA or twin.jvp_rule == "elementwise")


def _pointwise(func: Any, args: tuple, level: int) -> Any:
    op = func._op
    if op.inplace_idx:
        _check_inplace(op, args, level)
    rank = 0
    for i in op.tensor_idx:
        a = args[i]
        if isinstance(a, Tensor):
            r = a.dim()
            if r > rank:
                rank = r
    call = list(args)
    size = 0
    for i in op.tensor_idx:
        a = args[i]
        if _batched(a, level):
            call[i] = _pad(a._value, rank)
            size = a._value.shape[0]
    if op.schema.name.endswith("_backward"):
        # backward kernels take same-shaped arguments: unbatched ones are expanded
        for i in op.tensor_idx:
            a = args[i]
            if isinstance(a, Tensor) and not _batched(a, level):
                call[i] = _expand_batch(a, size)
    out = func(*call)
    if op.inplace_idx:
        return args[op.inplace_idx[0]]
    return wrap(out, level)


def _refuse_same_with_batched_input(inputs: Any, level: int) -> None:
    """torch's error for a sampler whose distribution arguments (p, mean, ...) are batched under
    randomness="same": one draw cannot serve members whose distributions differ."""
    from retrograd._functorch.levels import vmap_level

    lv = vmap_level(level)
    if lv is not None and lv.randomness == "same" and any(_batched(a, level) for a in inputs):
        raise RuntimeError(SAME_RANDOMNESS_BATCHED_INPUT)


def _random_pointwise(func: Any, args: tuple, level: int) -> Any:
    """bernoulli(p) on a batched p: the pointwise rule draws per member."""
    _refuse_same_with_batched_input(args, level)
    return _pointwise(func, args, level)


def _multinomial_batched(p: Any, num_samples: int, replacement: bool, generator: Any) -> Any:
    """multinomial of a batched p (random.multinomial_for): the batch folds into p's rows,
    each row drawn on its own, so every member draws its own samples."""
    level = p._level
    _refuse_same_with_batched_input((p,), level)
    v = p._value
    rows = v.reshape(-1, v.shape[-1])
    out = _random.multinomial(rows, num_samples, replacement, generator=generator)
    return BatchedTensor(out.reshape(tuple(v.shape[:-1]) + (out.shape[-1],)), level)


def _random_inplace(func: Any, args: tuple, level: int) -> Any:
    """An in-place sampler on a batched value: the pointwise rule draws per member; under
    randomness="same" one per-example draw is written into every member."""
    from retrograd._functorch.levels import vmap_level

    _refuse_same_with_batched_input(args[1:], level)
    lv = vmap_level(level)
    if lv is None or lv.randomness != "same" or not _batched(args[0], level):
        return _pointwise(func, args, level)
    _check_inplace(func._op, args, level)
    value = args[0]._value
    one = value.select(0, 0).clone()
    func(one, *(a._value.select(0, 0) if _batched(a, level) else a for a in args[1:]))
    value.copy_(one.unsqueeze(0).expand(value.shape))
    return args[0]


def _index_add_rule(func: Any, args: tuple, level: int) -> Any:
    """index_add(self, dim, index, source): self and source line up (batch first), the index
    (one vector for every member) stays as it is."""
    from retrograd._functorch.fallback import fallback

    self, dim, index, source = args[0], args[1], args[2], args[3]
    op = func._op
    if op.inplace_idx:
        _check_inplace(op, args, level)
    if _batched(index, level) or self.dim() == 0:
        return fallback(func, args, level)
    size = _batch_size(args, level)
    vs = self._value if _batched(self, level) else _expand_batch(self, size).clone()
    vsrc = source._value if _batched(source, level) else _expand_batch(source, size)
    out = func(vs, normalize_dim(int(dim), self.dim()) + 1, index, vsrc, *args[4:])
    return args[0] if op.inplace_idx else wrap(out, level)


def _index_fill_rule(func: Any, args: tuple, level: int) -> Any:
    """index_fill(self, dim, index, value): the batch is one more leading dim of self; an
    index or a tensor value that differs per member, or a 0-d self, goes member by member."""
    from retrograd._functorch.fallback import fallback

    self, dim, index, value = args[0], args[1], args[2], args[3]
    op = func._op
    if op.inplace_idx:
        _check_inplace(op, args, level)
    if _batched(index, level) or _batched(value, level) or self.dim() == 0:
        return fallback(func, args, level)
    out = func(self._value, normalize_dim(int(dim), self.dim()) + 1, index, value)
    return args[0] if op.inplace_idx else wrap(out, level)


def _leading(func: Any, args: tuple, level: int) -> Any:
    """Ops on the last dimensions of their one tensor: the batch is one more leading one."""
    return wrap(func(args[0]._value, *args[1:]), level)


def _unbatched_result(func: Any, args: tuple, level: int) -> Any:
    call = list(args)
    call[0] = args[0]._value if _batched(args[0], level) else args[0]
    return func(*call)


def normalize_dim(d: int, rank: int) -> int:
    """d counted from the front of a per-example rank `rank` (torch's range error otherwise)."""
    r = max(rank, 1)
    if not -r <= d < r:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-r}, {r - 1}], "
                         f"but got {d})")
    return d + r if d < 0 else d


def _dims_rule(op: Any, dims: tuple, same_rank: bool) -> Callable:
    types = {i: op.schema.args[i].type for i in dims}
    # a reduction (it has keepdim) given no dimensions reduces them all
    empty_is_all = any(a.name == "keepdim" for a in op.schema.args)
    sizes = tuple(i for i, a in enumerate(op.schema.args)
                  if a.name in SIZE_ARGS and a.type.endswith("[]"))
    first = op.tensor_idx[0]
    rank_plus = 1 if op.schema.name in ("unsqueeze", "unsqueeze_copy", "stack",
                                        "diag_embed") else 0
    list_first = first in op.list_idx

    def rule(func: Any, args: tuple, level: int) -> Any:
        if op.inplace_idx:
            _check_inplace(op, args, level)
        call = list(args)
        others_batched = False
        for i in op.tensor_idx:
            if i == first:
                continue
            a = args[i]
            if i in op.list_idx:
                others_batched = others_batched or any(_batched(t, level) for t in a or ())
            elif _batched(a, level):
                others_batched = True
        if list_first:
            ts = args[first]
            logical = next(t for t in ts if isinstance(t, Tensor))
            rank = logical.dim()
            size = _batch_size(ts, level)
            call[first] = [t._value if _batched(t, level) else _expand_batch(t, size)
                           for t in ts]
        else:
            self = args[first]
            rank = self.dim()
            if _batched(self, level):
                call[first] = self._value
                size = self._value.shape[0]
            elif not same_rank:
                from retrograd._functorch.fallback import fallback

                return fallback(func, args, level)
            else:
                size = _batch_size(args, level)
                call[first] = _expand_batch(self, size)
        if others_batched or same_rank:
            if not same_rank:
                from retrograd._functorch.fallback import fallback

                return fallback(func, args, level)
            for i in op.tensor_idx:
                if i == first:
                    continue
                a = args[i]
                if isinstance(a, BatchedTensor) and a._level == level:
                    call[i] = a._value
                elif isinstance(a, Tensor):
                    call[i] = _expand_batch(a, size)
        if sizes and isinstance(args[sizes[0]], (list, tuple)):
            rank = len(args[sizes[0]])
        r = rank + rank_plus
        for i in sizes:
            call[i] = [size, *args[i]]
        for i in dims:
            d = args[i]
            if d is None or ((types[i] == "int[]?" or empty_is_all)
                             and isinstance(d, (list, tuple)) and not d):
                if types[i] != "int[]?":  # int? dim = None: the op flattens; no rule
                    from retrograd._functorch.fallback import fallback

                    return fallback(func, args, level)
                call[i] = list(range(1, max(rank, 1) + 1))  # "all dimensions"
            elif isinstance(d, (list, tuple)):
                if not d:  # no dims: the op flattens (roll), the batch with it; no rule
                    from retrograd._functorch.fallback import fallback

                    return fallback(func, args, level)
                call[i] = [normalize_dim(int(x), r) + 1 for x in d]
            else:
                call[i] = normalize_dim(int(d), r) + 1
        if rank == 0 and not rank_plus:
            # a per-example scalar: dim 0 / -1 name it; the op acts on a size-1 dimension
            for i in op.tensor_idx:
                if isinstance(call[i], Tensor):
                    call[i] = call[i].unsqueeze(1)
            for i in sizes:
                call[i] = [size, 1]
            out = func(*call)
            out = _squeeze_scalar_results(out, op)
        else:
            out = func(*call)
        if op.inplace_idx:
            return args[op.inplace_idx[0]]
        return wrap(out, level)

    return rule


def _squeeze_scalar_results(out: Any, op: Any) -> Any:
    if isinstance(out, Tensor):
        return out.reshape(out.shape[:1]) if out.dim() >= 2 else out
    if isinstance(out, (tuple, list)):
        return type(out)(_squeeze_scalar_results(o, op) for o in out)
    return out


# --- explicit rules --------------------------------------------------------------------------


def _op(name: str) -> Any:
    from retrograd._ops.registry import OPS

    return dispatch.overload_of(OPS[name])


def _view_rule(func: Any, args: tuple, level: int) -> Any:
    v = args[0]._value
    size = [v.shape[0], *args[1]]
    if func._op.name == "view" and not v.is_contiguous():
        # the per-example tensor looks contiguous, but the batch may sit elsewhere in memory
        # (vmap over a later dimension): a copy then, where torch's view would fail
        try:
            return wrap(func(v, size), level)
        except RuntimeError:
            return wrap(v.reshape(size), level)
    return wrap(func(v, size, *args[2:]), level)


def _expand_rule(func: Any, args: tuple, level: int) -> Any:
    v = args[0]._value
    size = list(args[1])
    v = _pad(v, len(size))
    return wrap(func(v, [v.shape[0], *size], *args[2:]), level)


def _repeat_rule(func: Any, args: tuple, level: int) -> Any:
    reps = list(args[1])
    v = args[0]._value
    if len(reps) < args[0].dim():
        return func(_wrap(args[0]._data), reps)  # torch's error for too few repeats
    return wrap(func(_pad(v, len(reps)), [1, *reps]), level)


def _permute_rule(func: Any, args: tuple, level: int) -> Any:
    self = args[0]
    r = self.dim()
    return wrap(func(self._value, [0] + [normalize_dim(d, r) + 1 for d in args[1]]), level)


def _t_rule(func: Any, args: tuple, level: int) -> Any:
    self = args[0]
    if self.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    if self.dim() < 2:
        return wrap(self._value.view(self._value.shape), level)
    return wrap(self._value.transpose(1, 2), level)


def _geometry(t: Any) -> tuple:
    """t's strides and storage offset in its physical storage: a batched value's own strides
    are those of its logical shape, so nested levels are unwrapped (each value keeps its batch
    dimension first)."""
    if isinstance(t, BatchedTensor):
        strides, offset = _geometry(t._value)
        return strides[1:], offset
    return tuple(t.stride()), t.storage_offset()


def _as_strided_rule(func: Any, args: tuple, level: int) -> Any:
    """_as_strided_rel (as_strided placed relative to its input's first element): each member's
    view is placed from that member's first element, so it is one view of the whole batch with
    the batch stride in front. Refused, as torch does, when a member's view would reach memory
    outside that member (another member's, or beyond)."""
    v = args[0]._value
    size, stride, delta = list(args[1]), list(args[2]), int(args[3])
    strides, base = _geometry(v)
    if 0 not in size:
        reach = base + delta + sum((n - 1) * s for n, s in zip(size, stride)) + 1
        member = base + sum((n - 1) * s for n, s in zip(v.shape[1:], strides[1:])) + 1
        if delta < 0 or reach > member:
            raise RuntimeError(AS_STRIDED_OUTSIDE.format(
                size, stride, base + delta, base + delta, reach, base, member))
    return wrap(func(v, [v.shape[0], *size], [strides[0], *stride], delta, *args[4:]), level)


def _as_strided_batched(input: Any, size: Any, stride: Any, storage_offset: Any) -> Any:
    """as_strided of a BatchedTensor: storage_offset counts in the members' storage, where the
    first member starts at its value's offset; the rule checks each member's reach."""
    delta = 0 if storage_offset is None else storage_offset - _geometry(input._value)[1]
    return _shape._as_strided_rel(input, list(size), list(stride), delta, storage_offset)

def _squeeze_rule(func: Any, args: tuple, level: int) -> Any:
    v = args[0]._value
    dims = [i + 1 for i, n in enumerate(v.shape[1:]) if n == 1]
    return wrap(_op("squeeze.dims")(v, dims), level)


def _full_reduction(dim_op: str) -> Callable:
    """sum(x), mean(x), ...: reduce over the per-example dimensions, flattened."""
    def rule(func: Any, args: tuple, level: int) -> Any:
        v = args[0]._value
        flat = v.reshape(v.shape[0], -1)
        if dim_op in ("amax", "amin", "all.dims", "any.dims"):
            return wrap(_op(dim_op)(flat, [1], False), level)
        if dim_op == "prod.dim_int":
            return wrap(_op(dim_op)(flat, 1, False, *args[1:]), level)
        return wrap(_op(dim_op)(flat, [1], False, *args[1:]), level)
    return rule


# matmul: the batch is one more leading dimension of batched matrix products


def unexpanded(a: Any, level: int) -> Any:
    """a, or (when a is batched at `level` by expanding one value, as grad's per-example
    inputs are) that one value: rules may then take the faster unbatched path."""
    if _batched(a, level):
        v = a._value
        # (an empty array may have stride 0 without being expanded from anything)
        if v.__class__ is Tensor and v._data.strides[:1] == (0,) and v._data.shape[0] > 1 \
                and v._data.size:
            return v.select(0, 0)
    return a


def _unobserved(*ts: Any) -> bool:
    """Whether an op on these tensors is seen by nothing but its result: plain tensors that
    need no gradient, and no mode (a tracer, the profiler, forward AD's) but retrograd's own
    wrapper dispatcher active. Then a rule may compute on the arrays directly."""
    for t in ts:
        if type(t) is not Tensor or t._requires_grad:
            return False
    for m in dispatch.mode_stack:
        if not getattr(m, "_internal", False):
            return False
    return True


_PLAIN_FLOATS = (float32, float64)  # NumPy computes these in their own dtype, as the ops do


class _TensorProducts:
    """The products _product computes, as ops autograd and modes see."""

    @staticmethod
    def mm(a: Any, b: Any) -> Any:
        return _linalg.matmul(a, b)

    batched = mm  # (operands of equal rank >= 3: matmul's batched product)

    @staticmethod
    def outer(a: Any, b: Any) -> Any:
        return a * b


class _ArrayProducts:
    """The same products on the arrays, by the kernels those ops run (so the values are the
    same bit for bit), for values nothing observes (_unobserved): no op, node or view."""

    mm = staticmethod(_mm_forward)
    batched = staticmethod(_matmul_batched_forward)

    @staticmethod
    def outer(a: Any, b: Any) -> Any:
        # ~40% faster than the broadcast multiply, whose inner loop reads one operand with
        # stride 0; each element is the same single product
        return np.einsum("...ik,...kj->...ij", a, b)


def _product(va: Any, vb: Any, ab: bool, bb: bool, ra: int, rb: int, ops: Any) -> Any:
    """matmul of per-example ranks ra, rb on the values va, vb (batch first where ab, bb),
    written with reshape alone so that it runs on Tensors and on arrays alike."""
    if ab and not bb and rb == 2:
        # one matrix for the whole batch: the batch folds into the rows, one product
        k, n = vb.shape
        rows = int(np.prod(va.shape[:-1]))  # not -1: with k = 0 that would be ambiguous
        return ops.mm(va.reshape(rows, k), vb).reshape(tuple(va.shape[:-1]) + (n,))
    if ra == 1:  # a row vector, its row dropped afterwards
        va = va.reshape(tuple(va.shape[:-1]) + (1, va.shape[-1]))
    if rb == 1:
        vb = vb.reshape(tuple(vb.shape) + (1,))
    rank = max(ra, rb, 2)
    if ab:
        va = _pad(va, rank)
    if bb:
        vb = _pad(vb, rank)
    if not ab:
        va = va.reshape((1,) * (rank + 1 - len(va.shape)) + tuple(va.shape))
    if not bb:
        vb = vb.reshape((1,) * (rank + 1 - len(vb.shape)) + tuple(vb.shape))
    if va.shape[-1] == 1 and vb.shape[-2] == 1:
        out = ops.outer(va, vb)  # products over one index are outer products: no matmul loop
    else:
        out = ops.batched(va, vb)
    if rb == 1:  # the column dropped, then (for a row too) the row, now last
        out = out.reshape(tuple(out.shape[:-1]))
    if ra == 1:
        out = out.reshape(tuple(out.shape[:-1]) if rb == 1 else
                          tuple(out.shape[:-2]) + tuple(out.shape[-1:]))
    return out


def _matmul_values(a: Any, b: Any, level: int) -> Tensor:
    """matmul(a, b) where either may be batched at `level`; returns the batched value."""
    a, b = unexpanded(a, level), unexpanded(b, level)
    ab, bb = _batched(a, level), _batched(b, level)
    ra, rb = a.dim(), b.dim()
    if ra == 0 or rb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{ra}D and {rb}D")
    va = a._value if ab else a
    vb = b._value if bb else b
    out = _product_on_arrays(va, vb, ab, bb, ra, rb)
    return out if out is not None else _product(va, vb, ab, bb, ra, rb, _TensorProducts)


def _product_on_arrays(va: Tensor, vb: Tensor, ab: bool, bb: bool, ra: int,
                       rb: int) -> Tensor | None:
    """_product on the arrays when nothing observes the values (_unobserved), else None (also
    for bad operands: the op path raises torch's error)."""
    if va.dtype != vb.dtype or not va.dtype.is_floating_point or not _unobserved(va, vb):
        return None
    try:
        return _wrap(_product(va._data, vb._data, ab, bb, ra, rb, _ArrayProducts))
    except Exception:  # noqa: BLE001 - the op path raises torch's error
        return None


def _matmul_rule(func: Any, args: tuple, level: int) -> Any:
    a, b = args[0], args[1]
    return wrap(_matmul_values(a, b, level), level)


def _mm_rule(func: Any, args: tuple, level: int) -> Any:
    a, b = args[0], args[1]
    for t, what in ((a, "self"), (b, "mat2")):
        if t.dim() != 2:
            raise RuntimeError(f"{what} must be a matrix")
    if _batched(a, level) and not _batched(b, level):
        v = a._value  # the batch folds into the rows (sizes spelled out: any may be 0)
        out = _product_on_arrays(v, b, True, False, 2, 2)
        if out is not None:
            return wrap(out, level)
        n, m, k = v.shape
        return wrap(func(v.reshape(n * m, k), b).view(n, m, b.shape[-1]), level)
    return wrap(_matmul_values(a, b, level), level)


def _addmm_rule(func: Any, args: tuple, level: int) -> Any:
    bias, m1, m2, beta, alpha = args[0], args[1], args[2], args[3], args[4]
    prod = _matmul_values(m1, m2, level)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return wrap(prod, level)
    vb = bias._value if _batched(bias, level) else bias
    if _batched(bias, level):
        vb = _pad(vb, 2)
    if beta != 1:
        vb = vb * beta
    if prod.dtype == vb.dtype and prod.dtype in _PLAIN_FLOATS and _unobserved(prod, vb):
        out = prod._data
        if np.broadcast_shapes(out.shape, vb.shape) == out.shape:
            # the product is a fresh array: the bias is added in its place, as the op would
            np.add(out, vb._data, out=out)
            return wrap(prod, level)
    return wrap(prod + vb, level)


def _dot_rule(func: Any, args: tuple, level: int) -> Any:
    return wrap(_matmul_values(args[0], args[1], level), level)


def _linear_rule(func: Any, args: tuple, level: int) -> Any:
    x, w, b = args[0], unexpanded(args[1], level), unexpanded(args[2], level)
    if not _batched(x, level):
        x = BatchedTensor(_expand_batch(x, _batch_size(args, level)), level)
    if not _batched(w, level) and not _batched(b, level):
        return wrap(func(x._value, w, b), level)
    out = _matmul_values(x, BatchedTensor(w._value.transpose(-1, -2), level)
                         if _batched(w, level) else w.transpose(-1, -2), level)
    if b is not None:
        vb = _pad(b._value, out.dim() - 1) if _batched(b, level) else b
        out = out + vb
    return wrap(out, level)


# convolution and pooling: the batch folds into N


def _fold(v: Tensor, unbatched_rank: int) -> tuple:
    """v (batch first) as an input with one N dimension: (value, unfold)."""
    if v.dim() == unbatched_rank + 1:  # per-example input already has N: fold B into it
        b, n = v.shape[0], v.shape[1]

        def unfold(o: Tensor) -> Tensor:
            return o.reshape((b, n) + tuple(o.shape[1:]))
        return v.reshape((b * n,) + tuple(v.shape[2:])), unfold
    return v, (lambda o: o)  # per-example input without N: the batch is N


def _convolution_rule(func: Any, args: tuple, level: int) -> Any:
    x, w, b = args[0], unexpanded(args[1], level), unexpanded(args[2], level)
    args = (x, w, b) + tuple(args[3:])
    if not _batched(x, level) or _batched(w, level) or _batched(b, level):
        from retrograd._functorch.fallback import fallback

        return fallback(func, args, level)
    v, unfold = _fold(x._value, w.dim())
    return wrap(unfold(func(v, *args[1:])), level)


def _pool_rule(spatial: int) -> Callable:
    def rule(func: Any, args: tuple, level: int) -> Any:
        if not _batched(args[0], level):
            from retrograd._functorch.fallback import fallback

            return fallback(func, args, level)
        v, unfold = _fold(args[0]._value, spatial + 2)
        out = func(v, *args[1:])
        if isinstance(out, (tuple, list)):
            return wrap(type(out)(unfold(o) for o in out), level)
        return wrap(unfold(out), level)
    return rule


def _nll_grad_input_batched(grad: Any, self_shape: Any, target: Any, weight: Any,
                            reduction: int, ignore_index: int, total_weight: Any,
                            class_axis: int) -> Any:
    """NllLossBackward0's formula for a batched target (loss.nll_grad_input_for): M, the
    minus target weights at each target (over each example's total for a mean), made for the
    whole batch on arrays as nll_loss's own backward makes it for one example, then grad * M
    as one batched product (differentiable in grad). Nested or odd cases: the op-by-op form."""
    level = target._level
    tv = target._value
    w = weight
    if tv.__class__ is not Tensor or (w is not None and w.__class__ is not Tensor):
        return NotImplemented
    if _batched(total_weight, level):
        tw = total_weight._value
    elif total_weight.__class__ is Tensor:
        tw = total_weight
    else:
        return NotImplemented
    if tw.__class__ is not Tensor or _level_of((grad,)) > level:
        return NotImplemented
    size = tv.shape[0]
    rank = len(self_shape)
    per_example = int(np.prod(tuple(tv.shape[1:]), dtype=np.int64))  # targets per example
    if rank > 1:
        folded = (size * self_shape[0],) + tuple(self_shape[1:])
        axis = class_axis
    else:  # one target per example: the batch becomes the rows
        folded, axis = (size, self_shape[0]), 1
    totals = None
    if reduction == 1:
        totals = np.repeat(np.broadcast_to(tw._data, (size,)), per_example)
    m = _nll_grad_matrix(grad._data.dtype, folded, tv._data.reshape(-1),
                         None if w is None else w._data, reduction, ignore_index, totals, axis)
    m_batched = BatchedTensor(_wrap(m.reshape((size,) + tuple(self_shape))), level)
    return _loss.nll_grad_times(grad, m_batched, self_shape, reduction, class_axis)


def _nll_rule(func: Any, args: tuple, level: int) -> Any:
    """nll_loss_forward: per-example losses of the folded batch, reduced per example."""
    x, target, weight, reduction, ignore_index = args
    if _batched(weight, level):
        from retrograd._functorch.fallback import fallback

        return fallback(func, args, level)
    size = _batch_size(args, level)
    vx = x._value if _batched(x, level) else _expand_batch(x, size)
    vt = target._value if _batched(target, level) else _expand_batch(target, size)
    if weight is None and vx.dtype in _PLAIN_FLOATS and _unobserved(vx, vt):
        try:
            res, total = _nll_arrays(func._op.forward, vx._data, vt._data, x.dim(),
                                     reduction, ignore_index)
            return wrap(_wrap(res), level), wrap(_wrap(total), level)
        except Exception:  # noqa: BLE001 - the op raises torch's error for bad input
            pass
    if x.dim() >= 2:
        flat_x = vx.reshape((-1,) + tuple(vx.shape[2:]))
        flat_t = vt.reshape(-1)
    else:
        flat_x, flat_t = vx, vt.reshape(-1)
    out, _ = func(flat_x, flat_t, weight, 0, ignore_index)
    out = out.reshape(size, -1)
    valid = (flat_t != ignore_index).to(out.dtype)
    if weight is not None:
        safe = flat_t.masked_fill(flat_t == ignore_index, 0)
        valid = valid * weight.index_select(0, safe)
    valid = valid.reshape(size, -1)
    total = valid.sum(1)
    if reduction == 0:
        res = out.reshape(vt.shape)
    elif reduction == 1:
        res = out.sum(1) / total
    else:
        res = out.sum(1)
    return wrap(res, level), wrap(total, level)


def _nll_arrays(kernel: Any, vx: np.ndarray, vt: np.ndarray, rank: int, reduction: int,
                ignore_index: int) -> tuple:
    """_nll_rule's computation without a class weight on arrays nothing observes
    (_unobserved), by the kernels its ops run: (per-example loss, per-example total weight)."""
    size = vt.shape[0]
    flat_x = vx.reshape((-1,) + vx.shape[2:]) if rank >= 2 else vx
    flat_t = vt.reshape(-1)
    out, _ = kernel(flat_x, flat_t, None, 0, ignore_index)
    out = out.reshape(size, -1)
    total = _sum_arrays(np.not_equal(flat_t, ignore_index).astype(out.dtype).reshape(size, -1), [1])
    if reduction == 0:
        return out.reshape(vt.shape), total
    summed = _sum_arrays(out, [1])
    return (np.divide(summed, total) if reduction == 1 else summed), total


def _sum_arrays(a: np.ndarray, dims: list) -> np.ndarray:
    from retrograd._ops.registry import OPS

    return OPS["sum.dim_IntList"].forward(a, dims, False, None)


def _detach_rule(func: Any, args: tuple, level: int) -> Any:
    return BatchedTensor(args[0]._value.detach(), level)


def _ones_like_rule(func: Any, args: tuple, level: int) -> Any:
    from retrograd._ops.creation import ones_like

    return BatchedTensor(ones_like(args[0]._value), level)


def _zeros_like_rule(func: Any, args: tuple, level: int) -> Any:
    from retrograd._ops.creation import zeros_like

    return BatchedTensor(zeros_like(args[0]._value), level)


def _item_rule(func: Any, args: tuple, level: int) -> Any:
    from retrograd._functorch.batched import ITEM_IN_VMAP

    raise RuntimeError(ITEM_IN_VMAP)


def _fill_value_rule(func: Any, args: tuple, level: int) -> Any:
    """fill / masked_fill (and their in-place forms) with a Tensor value: a value batched at
    this level holds one 0-d value per member, which the pointwise rule would pad into a
    tensor of the batch's rank (the op takes only a 0-d value). Written with where instead,
    each member taking its own value, in self's dtype."""
    op = func._op
    value = args[-1]
    if not _batched(value, level):
        return _pointwise(func, args, level)
    self_t = args[0]
    masked = op.schema.name.startswith("masked_fill")
    rank = max(a.dim() for a in args if isinstance(a, Tensor))
    if op.inplace_idx:
        _check_inplace(op, args, level)
    size = value._value.shape[0]
    inner = _pad(self_t._value, rank) if _batched(self_t, level) else _expand_batch(self_t, size)
    v = value._value.to(inner.dtype).reshape((size,) + (1,) * (inner.dim() - 1))
    if masked:
        mask = args[1]
        m = _pad(mask._value, rank) if _batched(mask, level) else mask
        from retrograd._ops.pointwise import where

        out = where(m, v, inner)
    else:
        out = v.expand(tuple(inner.shape)).clone()
    if op.inplace_idx:
        inner.copy_(out.expand(tuple(inner.shape)))
        return self_t
    return wrap(out, level)


def _renorm_rule(func: Any, args: tuple, level: int) -> Any:
    """renorm(self, p, dim, maxnorm) rescales each slice along dim by its norm over every other
    dim (the dims rule would count the batch in): the batch joins dim instead, B * size slices.
    A per-example rank below 2 goes member by member (for torch's error)."""
    from retrograd._functorch.fallback import fallback
    from retrograd._ops.renorm import renorm

    self, p, dim, maxnorm = args[0], args[1], args[2], args[3]
    op = func._op
    if op.inplace_idx:
        _check_inplace(op, args, level)
    if not _batched(self, level) or self.dim() < 2:
        return fallback(func, args, level)
    d = normalize_dim(int(dim), self.dim()) + 1
    moved = self._value.movedim(d, 1)
    shape = list(moved.shape)
    slices = moved.reshape([shape[0] * shape[1]] + shape[2:])
    out = renorm(slices, p, 0, maxnorm).reshape(shape).movedim(1, d)
    if op.inplace_idx:
        self._value.copy_(out)
        return args[0]
    return wrap(out, level)


def _cat_rule(func: Any, args: tuple, level: int) -> Any:
    """cat skips a legacy empty operand (an example that is a 1-d tensor of no elements,
    batched or not) beside others, as eager does; the rest line up dimension by dimension
    (same rank)."""
    tensors = [t for t in args[0] if t.dim() != 1 or t.numel()]
    if tensors and len(tensors) != len(args[0]):
        args = (tensors,) + tuple(args[1:])
    rule = _BUILT.get("cat")
    if rule is None:
        rule = _BUILT["cat"] = _dims_rule(func._op, (1,), True)
    return rule(func, args, level)


_BUILT: dict = {}  # name -> a rule an explicit one delegates to, built on first use


def _per_example_value(a: Any, args: tuple, level: int) -> Any:
    """a's values batch first: its own if batched, else expanded to the batch."""
    return a._value if _batched(a, level) else _expand_batch(a, _batch_size(args, level))


def _select_scatter_rule(func: Any, args: tuple, level: int) -> Any:
    """A value-selecting reduction's gradient (max.dim, kthvalue, ...): for a 0-d example the
    gradient is its one value (the same-rank rule has no dim to place it along)."""
    if len(args[3]) == 0:
        return wrap(_per_example_value(args[0], args, level).clone(), level)
    rule = _BUILT.get("_reduction_select_scatter")
    if rule is None:
        rule = _BUILT["_reduction_select_scatter"] = _dims_rule(func._op, (1,), True)
    return rule(func, args, level)


def _select_gather_rule(func: Any, args: tuple, level: int) -> Any:
    """select_scatter's adjoint: a 0-d example gathers its one value."""
    if args[0].dim() == 0:
        return wrap(_per_example_value(args[0], args, level).clone(), level)
    rule = _BUILT.get("_reduction_select_gather")
    if rule is None:
        rule = _BUILT["_reduction_select_gather"] = _dims_rule(func._op, (1,), True)
    return rule(func, args, level)


def _unfold_rule(func: Any, args: tuple, level: int) -> Any:
    """Tensor.unfold(dimension, size, step): a 0-d example unfolds into (size,) copies of its one
    value (size 0 or 1), which the dims rule cannot express (there is no dim to unfold); other
    examples take the dims rule."""
    self, dimension, size, step = args[0], args[1], args[2], args[3]
    value = self._value
    if self.dim() != 0:
        rule = _BUILT.get("unfold")
        if rule is None:
            rule = _BUILT["unfold"] = _dims_rule(func._op, (1,), False)
        return rule(func, args, level)
    if value.shape[0]:
        func(value.select(0, 0), dimension, size, step)  # torch's checks, on one member
    return wrap(value.unsqueeze(-1).narrow(-1, 0, size), level)


EXPLICIT: dict = {
    "view": _view_rule, "reshape": _view_rule, "_unsafe_view": _view_rule,
    "_reshape_alias": _view_rule, "expand": _expand_rule, "permute": _permute_rule,
    # the *_copy ops take their view's rule (the rules call the op they are given)
    "view_copy": _view_rule, "expand_copy": _expand_rule, "permute_copy": _permute_rule,
    "repeat": _repeat_rule,
    "t": _t_rule, "squeeze": _squeeze_rule, "_as_strided_rel": _as_strided_rule,
    "sum": _full_reduction("sum.dim_IntList"), "mean": _full_reduction("mean.dim"),
    "prod": _full_reduction("prod.dim_int"), "max": _full_reduction("amax"),
    "min": _full_reduction("amin"), "all": _full_reduction("all.dims"),
    "any": _full_reduction("any.dims"),
    "tril": _leading, "triu": _leading, "constant_pad_nd": _leading, "unfold": _unfold_rule,
    "cat": _cat_rule, "_reduction_select_scatter": _select_scatter_rule,
    "_reduction_select_gather": _select_gather_rule,
    "pixel_shuffle": _leading, "pixel_unshuffle": _leading,
    # torch.linalg ops of one matrix (batch): NumPy's kernels take leading batch dims
    "linalg_inv_ex": _leading, "linalg_det": _leading, "linalg_slogdet": _leading,
    "linalg_cholesky_ex": _leading, "cholesky": _leading, "_linalg_eigh": _leading,
    "_linalg_svd": _leading, "linalg_pinv.atol_rtol_float": _leading,
    "linalg_lu_factor_ex": _leading, "linalg_lu": _leading, "_linalg_lu_permutation": _leading,
    "linalg_matrix_exp": _leading, "cholesky_inverse": _leading,
    "matmul": _matmul_rule, "mm": _mm_rule, "bmm": _matmul_rule, "mv": _matmul_rule,
    "_matmul_batched": _matmul_rule,
    "dot": _dot_rule, "vdot": _dot_rule, "addmm": _addmm_rule, "linear": _linear_rule,
    "convolution": _convolution_rule,
    "max_pool2d_with_indices": _pool_rule(2), "max_pool1d_with_indices": _pool_rule(1),
    "avg_pool2d": _pool_rule(2), "avg_pool1d": _pool_rule(1),
    "adaptive_avg_pool2d": _pool_rule(2), "_adaptive_avg_pool2d": _pool_rule(2),
    "max_pool3d_with_indices": _pool_rule(3), "avg_pool3d": _pool_rule(3),
    "_adaptive_avg_pool3d": _pool_rule(3), "adaptive_max_pool2d": _pool_rule(2),
    "adaptive_max_pool3d": _pool_rule(3),
    "nll_loss_forward": _nll_rule,
    "bernoulli": _random_pointwise, "bernoulli.p": _random_pointwise,
    "detach": _detach_rule, "ones_like": _ones_like_rule, "zeros_like": _zeros_like_rule,
    "_local_scalar_dense": _item_rule, "index_add": _index_add_rule,
    "index_add_": _index_add_rule,
    "fill.Tensor": _fill_value_rule, "fill_.Tensor": _fill_value_rule,
    "masked_fill.Tensor": _fill_value_rule, "masked_fill_.Tensor": _fill_value_rule,
    "index_copy": _index_add_rule, "index_copy_": _index_add_rule,
    "index_fill.int_Scalar": _index_fill_rule, "index_fill.int_Tensor": _index_fill_rule,
    "index_fill_.int_Scalar": _index_fill_rule, "index_fill_.int_Tensor": _index_fill_rule,
    "renorm": _renorm_rule, "renorm_": _renorm_rule,
    # distances between rows: leading batch dims broadcast as element-wise operands do
    "_cdist_forward": _pointwise, "_euclidean_dist": _pointwise,
}


_loss.nll_grad_input_for[BatchedTensor] = _nll_grad_input_batched
_random.multinomial_for[BatchedTensor] = _multinomial_batched
_shape.as_strided_for[BatchedTensor] = _as_strided_batched
