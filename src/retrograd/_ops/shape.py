"""View ops (views share memory and the version counter with their base) and reshaping.

Schemas mark views with an alias annotation, `Tensor(a) self -> Tensor(a)`; the registry then
records the view on the output (retrograd._autograd.views). Forwards return NumPy views with
torch's strides (as_strided where NumPy's choice for a size-1 dim differs).

The backward of select / slice / diagonal is an op of its own (select_backward, ...): it embeds
the gradient in zeros, and its own derivative is the view again, so double backward needs no
extra code. Multi-output views (unbind, split) zero-fill the gradients of unused outputs.
Copies that rearrange data (cat, stack, repeat, flip, roll, tril/triu) are here too.

The NumPy kernels the declarations run are in kernels/shape.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from retrograd import _dtype as D
from retrograd._dims import wrap_dim
from retrograd._numpy_names import numpy_names
from retrograd._ops.arg_check import check_tensor_list, int_list_function
from retrograd._ops.dtype_views import view_dtype
from retrograd._ops.kernels.shape import (
    _as_strided_grad_forward,
    _as_strided_rel_forward,
    _cat_forward,
    _diagonal_backward_forward,
    _diagonal_forward,
    _expand_forward,
    _flip_forward,
    _index_arg,
    _inverse_perm,
    _permute_forward,
    _repeat_forward,
    _roll_forward,
    _select_backward_forward,
    _select_forward,
    _slice_backward_forward,
    _slice_forward,
    _split_backward_array,
    _split_dim_sizes,
    _split_forward,
    _split_with_sizes_forward,
    _squeeze_dim_forward,
    _squeeze_dims_forward,
    _stack_forward,
    _t_forward,
    _transpose_forward,
    _tri_forward,
    _unbind_backward_array,
    _unbind_forward,
    _unsqueeze_forward,
    _view_forward,
    _viewable,
    infer_size,
)
from retrograd._ops.overloads import composite, overloaded
from retrograd._ops.registry import op, register, register_method
from retrograd._tensor import Tensor

_SIZE_SEQUENCES = (tuple, list)


def size_args(args: tuple) -> tuple:
    """Accept both f(2, 3) and f((2, 3)) / f(torch.Size) like torch's varargs size methods."""
    if len(args) == 1:
        first = args[0]
        if isinstance(first, _SIZE_SEQUENCES) or (
                isinstance(first, (Sequence, np.ndarray)) and not isinstance(first, Tensor)):
            args = first
    for s in args:
        if s.__class__ is not int:
            return tuple(int(s) for s in args)
    return tuple(args)


_view = op("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", _view_forward,
           grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
           array_grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
           function=False, method=False)


def view(self: Tensor, *shape):
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return view_dtype(self, shape[0])
    return _view(self, size_args(shape))


register_method("view", view)


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return _view(self, other._data.shape)


register_method("view_as", view_as)


_reshape_copy = op("_reshape_copy(Tensor self, int[] size) -> Tensor",
                   lambda a, size: np.reshape(a, size, order="C").copy(),
                   node="UnsafeViewBackward0",
                   grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
                   function=False, method=False)


def reshape(input: Tensor, *shape) -> Tensor:
    size = infer_size(size_args(shape), input._data.size)
    if _viewable(input._data, size):
        return _view(input, size)
    return _reshape_copy(input, size)


register_method("reshape", reshape)
register("reshape", int_list_function("reshape", reshape, "shape"))


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return reshape(self, other._data.shape)


register_method("reshape_as", reshape_as)


def _sum_to(grad, shape):
    from retrograd._ops.reduction_helpers import sum_to

    return sum_to(grad, shape)


def _sum_to_array(grad, shape):
    from retrograd._ops.reduction_helpers import sum_to_array

    return sum_to_array(grad, tuple(shape))


_expand = op("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
             _expand_forward, grads={"self": lambda grad, self_shape: _sum_to(grad, self_shape)},
             array_grads={"self": lambda grad, self_shape: _sum_to_array(grad, self_shape)},
             function=False, method=False)


def expand(self: Tensor, *sizes) -> Tensor:
    return _expand(self, size_args(sizes))


register_method("expand", expand)


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return _expand(self, other._data.shape)


register_method("expand_as", expand_as)


_permute = op("permute(Tensor(a) self, int[] dims) -> Tensor(a)", _permute_forward,
              grads={"self": lambda grad, dims:
                     grad.permute(_inverse_perm([d % max(len(dims), 1) for d in dims]))},
              array_grads={"self": lambda grad, dims: np.transpose(
                  grad, _inverse_perm([d % max(len(dims), 1) for d in dims]))},
              function=False, method=False)


def permute(input: Tensor, *dims) -> Tensor:
    return _permute(input, size_args(dims))


register("permute", permute, method=True)


transpose = op("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
               _transpose_forward,
               grads={"self": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)},
               array_grads={"self": lambda grad, dim0, dim1: _transpose_forward(grad, dim0,
                                                                               dim1)})
register_method("swapaxes", transpose)
register("swapaxes", transpose)
register_method("swapdims", transpose)
register("swapdims", transpose)


t = op("t(Tensor(a) self) -> Tensor(a)", _t_forward, grads={"self": lambda grad: grad.t()})


unsqueeze = op("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", _unsqueeze_forward,
               grads={"self": lambda grad, dim, self_shape: grad.reshape(self_shape)},
               array_grads={"self": lambda grad, dim, self_shape: grad.reshape(self_shape)})


# --- as_strided ------------------------------------------------------------------------------


_as_strided_grad = op(
    "_as_strided_grad(Tensor grad_output, int[] out_size, int[] out_stride, int out_offset, "
    "int[] in_size, int[] in_stride, int in_offset) -> Tensor", _as_strided_grad_forward,
    node="AsStridedBackward0Backward0",
    grads={"grad_output": lambda grad, out_size, out_stride, out_offset, in_size, in_stride,
           in_offset: _as_strided_grad(grad, in_size, in_stride, in_offset, out_size, out_stride,
                                       out_offset)},
    function=False, method=False)


_as_strided_rel = op(
    "_as_strided_rel(Tensor(a) self, int[] size, int[] stride, int delta, "
    "int? storage_offset=None) -> Tensor(a)",
    _as_strided_rel_forward, node="AsStridedBackward0",
    # the formula reads storage_offset so that the node keeps the user's argument
    # (grad_fn._saved_storage_offset, as torch's); the gradient needs only delta
    grads={"self": lambda grad, self_shape, self_strides, size, stride, delta, storage_offset:
           _as_strided_grad(grad, size, stride, delta, self_shape, self_strides, 0)},
    function=False, method=False)


# Tensor subclass -> its as_strided, for classes whose storage is not their own array's
# (BatchedTensor: each member's view is placed in that member, by its batching rule)
as_strided_for: dict = {}


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    if input.__class__ is not Tensor and input.__class__ in as_strided_for:
        return as_strided_for[input.__class__](input, size, stride, storage_offset)
    size, stride, delta = as_strided_geometry(input, size, stride, storage_offset)
    return _as_strided_rel(input, size, stride, delta, storage_offset)


def as_strided_geometry(input: Tensor, size, stride, storage_offset: int | None) -> tuple:
    """(size, stride, the element offset from input's own start) of as_strided's view, with
    torch's checks that it fits in the storage."""
    from retrograd._autograd.views import root_storage
    from retrograd._autograd.views import storage_offset as offset_of
    from retrograd.storage import root_shift

    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    own = offset_of(input)
    shift = root_shift(input)  # storage_offset counts from the storage, `own` from the root
    target = own if storage_offset is None else storage_offset - shift
    needed = target + 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    available = root_storage(input).size
    if needed > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{target + shift}, and itemsize {input._data.itemsize} requiring a storage size of "
            f"{(needed + shift) * input._data.itemsize} are out of bounds for storage of size "
            f"{(available + shift) * input._data.itemsize}")
    return size, stride, target - own


register("as_strided", as_strided, method=True)


# --- helpers for the ops below ---------------------------------------------------------------


def _zeros(shape, like: Tensor) -> Tensor:
    from retrograd._tensor import _wrap

    return _wrap(np.zeros(tuple(shape), like._data.dtype))


# --- alias, squeeze, unsqueeze-like ----------------------------------------------------------

alias = op("alias(Tensor(a) self) -> Tensor(a)", lambda a: a.view(),
           grads={"self": lambda grad: grad}, function=False, method=False)


_squeeze = op("squeeze(Tensor(a) self) -> Tensor(a)", np.squeeze,
              grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
              array_grads={"self": lambda grad, self_shape: grad.reshape(self_shape)})


_squeeze_dim = op("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", _squeeze_dim_forward,
                  grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
                  array_grads={"self": lambda grad, self_shape: grad.reshape(self_shape)})


_squeeze_dims = op("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", _squeeze_dims_forward,
                   grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
                   array_grads={"self": lambda grad, self_shape: grad.reshape(self_shape)})
squeeze = overloaded("squeeze")


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    nd = input._data.ndim
    if nd == 0:
        return reshape(input, (1,))
    start, end = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    shape = input._data.shape
    n = 1
    for s in shape[start:end + 1]:
        n *= s
    return reshape(input, shape[:start] + (n,) + shape[end + 1:])


register("flatten", flatten, method=True)


def ravel(input: Tensor) -> Tensor:
    # torch: contiguous() then view(-1), so the result is always a view (of a copy if needed)
    return _view(input.contiguous(), (-1,))


register("ravel", ravel, method=True)


@numpy_names
def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    shape = input._data.shape
    d = wrap_dim(dim, len(shape))
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = shape[d] if shape else 1
    if -1 not in sizes:
        prod = 1
        for s in sizes:
            prod *= s
        if prod != n:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                               f"size of dim {dim} ({n}) in the input tensor")
    else:
        sizes = infer_size(sizes, n)
    return _view(input, shape[:d] + sizes + shape[d + 1:])


register("unflatten", unflatten)


def _unflatten_method(self: Tensor, dim: int, sizes) -> Tensor:
    # Tensor.unflatten is written in Python in torch (for named dimensions), so unlike
    # torch.unflatten it takes torch's argument names only (NOTE [NumPy argument names])
    return unflatten(self, dim, sizes)


register_method("unflatten", _unflatten_method)


def _movedim(input: Tensor, source, destination) -> Tensor:
    nd = input._data.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src_w = [wrap_dim(d, nd) for d in src]
    dst_w = [wrap_dim(d, nd) for d in dst]
    if len(set(src_w)) != len(src_w):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(dst_w)) != len(dst_w):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    if nd == 0:
        return alias(input)
    perm = [-1] * max(nd, 0)
    for s, d in zip(src_w, dst_w):
        perm[d] = s
    rest = iter(d for d in range(nd) if d not in src_w)
    perm = [p if p != -1 else next(rest) for p in perm]
    return _permute(input, perm)


# torch's composites of permute (PermuteBackward0); moveaxis is movedim under numpy's name
def _movedim_form() -> Callable:
    """A function of its own for each overload (each carries its declaration)."""
    def movedim_form(input: Tensor, source, destination) -> Tensor:
        return _movedim(input, source, destination)

    return movedim_form


for _name in ("movedim", "moveaxis"):
    composite(f"{_name}.int(Tensor(a) self, int source, int destination) -> Tensor(a)",
              _movedim_form())
    composite(f"{_name}.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
              _movedim_form())
movedim = overloaded("movedim")


# --- select / slice / narrow ------------------------------------------------------------------


select_backward = op(
    "select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
    _select_backward_forward,
    grads={"grad_output": lambda grad, dim, index: select(grad, dim, index)},
    function=False, method=False)

select = op("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", _select_forward,
            grads={"self": lambda grad, self_shape, dim, index:
                   select_backward(grad, self_shape, dim, index)},
            array_grads={"self": lambda grad, self_shape, dim, index:
                         _select_backward_forward(grad, self_shape, dim, index)})


slice_backward = op(
    "slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, "
    "SymInt step) -> Tensor", _slice_backward_forward,
    grads={"grad_output": lambda grad, dim, start, end, step:
           slice_op(grad, dim, start, end, step)},
    function=False, method=False)

slice_op = op("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, "
              "SymInt step=1) -> Tensor(a)", _slice_forward,
              grads={"self": lambda grad, self_shape, dim, start, end, step:
                     slice_backward(grad, self_shape, dim, start, end, step)},
              array_grads={"self": lambda grad, self_shape, dim, start, end, step:
                           _slice_backward_forward(grad, self_shape, dim, start, end, step)},
              function=False, method=False)


def _narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    shape = input._data.shape
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, len(shape))
    start, length = _index_arg(start), _index_arg(length)
    n = shape[d]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return slice_op(input, d, start, start + length, 1)


def _narrow_tensor_start(input: Tensor, dim: int, start: Tensor, length: int) -> Tensor:
    if start._data.ndim != 0 or start._data.dtype.kind not in "iu":
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return _narrow(input, dim, int(start._data), length)


# both overloads are torch's composites of slice (SliceBackward0)
composite("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)", _narrow)
composite("narrow.Tensor(Tensor(a) self, int dim, Tensor start, SymInt length) -> Tensor(a)",
          _narrow_tensor_start)
narrow = overloaded("narrow")


# --- diagonal -----------------------------------------------------------------------------------


diagonal_backward = op(
    "diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, "
    "int dim2) -> Tensor", _diagonal_backward_forward,
    grads={"grad_output": lambda grad, offset, dim1, dim2: diagonal(grad, offset, dim1, dim2)},
    function=False, method=False)

diagonal = op("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",
              _diagonal_forward,
              grads={"self": lambda grad, self_shape, offset, dim1, dim2:
                     diagonal_backward(grad, self_shape, offset, dim1, dim2)})


# --- multi-output views: unbind, split, chunk -------------------------------------------------


def _fill_missing(grads, shapes, like: Tensor) -> list:
    return [g if g is not None else _zeros(s, like) for g, s in zip(grads, shapes)]


def _unbind_backward(grads, grad, self_shape, dim):
    d = wrap_dim(dim, len(self_shape))
    shape = self_shape[:d] + self_shape[d + 1:]
    return stack(_fill_missing(grads, [shape] * len(grads), grad), d)


_unbind = op("unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]", _unbind_forward,
             grads={"self": _unbind_backward}, array_grads={"self": _unbind_backward_array},
             function=False, method=False)


@numpy_names
def unbind(input: Tensor, dim: int = 0) -> tuple:
    return tuple(_unbind(input, dim))


register("unbind", unbind, method=True)


def _split_backward(grads, grad, self_shape, dim, sizes):
    d = wrap_dim(dim, len(self_shape))
    shapes = [self_shape[:d] + (s,) + self_shape[d + 1:] for s in sizes]
    return cat(_fill_missing(grads, shapes, grad), d)


_SPLIT_GRADS = {"self": lambda grads, grad, self_shape, split_size, dim: _split_backward(
    grads, grad, self_shape, dim, _split_dim_sizes(self_shape, split_size, dim))}
_SPLIT_ARRAY_GRADS = {"self": lambda grads, grad, self_shape, split_size, dim:
                      _split_backward_array(grads, grad, self_shape, dim,
                                            _split_dim_sizes(self_shape, split_size, dim))}
_split = op("split.Tensor(Tensor(a) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
            _split_forward, grads=_SPLIT_GRADS, array_grads=_SPLIT_ARRAY_GRADS,
            function=False, method=False)


_SPLIT_WITH_SIZES_GRADS = {"self": lambda grads, grad, self_shape, split_sizes, dim:
                           _split_backward(grads, grad, self_shape, dim, split_sizes)}
_split_with_sizes = op(
    "split_with_sizes(Tensor(a) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
    _split_with_sizes_forward, grads=_SPLIT_WITH_SIZES_GRADS, function=False, method=False)


@numpy_names
def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    return tuple(_split_with_sizes(input, list(split_sizes), dim))


register("split_with_sizes", split_with_sizes, method=True)


def _split_sizes_arg(sizes) -> list:
    """split's list of sizes, checked as torch checks split_with_sizes' argument."""
    if sizes.__class__ is list or sizes.__class__ is tuple:
        for s in sizes:
            if s.__class__ is not int:
                break
        else:  # the common case: Python ints
            return list(sizes)
    if not isinstance(sizes, (list, tuple)):
        raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
                        f"of ints, not {type(sizes).__name__}")
    for i, s in enumerate(sizes):
        if type(s) is int or isinstance(s, (int, np.integer)) and not isinstance(s, bool):
            continue
        if i == 0:  # torch's parser looks at the first element before unpacking
            raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be "
                            f"tuple of ints, but found element of type {type(s).__name__} at "
                            "pos 0")
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' failed to unpack the object "
                        f"at pos {i + 1} with error \"type must be tuple of ints,but got "
                        f"{type(s).__name__}\"")
    return list(sizes)


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    # torch's split is Python: a 0-dim tensor becomes an int, an int splits evenly, anything
    # else is split_with_sizes' list of sizes
    size = split_size_or_sections
    if isinstance(size, Tensor) and size.ndim == 0:
        size = int(size.item())
    if type(size) is int or isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        return tuple(_split(tensor, size, dim))
    return tuple(_split_with_sizes(tensor, _split_sizes_arg(size), dim))


register("split", split)
register_method("split", lambda self, split_size, dim=0: split(self, split_size, dim))


# torch's unsafe variants: the same pieces (sharing memory with the input), but not tracked as
# views, so writing one in place is allowed and is the caller's responsibility
unsafe_split = op("unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]",
                  _split_forward, grads=_SPLIT_GRADS, array_grads=_SPLIT_ARRAY_GRADS)
unsafe_split_with_sizes = op(
    "unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]",
    _split_with_sizes_forward, grads=_SPLIT_WITH_SIZES_GRADS)


@numpy_names
def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    shape = input._data.shape
    if not shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = shape[wrap_dim(dim, len(shape))]
    if n == 0:
        return tuple(unsafe_split_with_sizes(input, [0] * chunks, dim))
    return tuple(unsafe_split(input, (n + chunks - 1) // chunks, dim))


register("unsafe_chunk", unsafe_chunk, method=True)


@numpy_names
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    shape = input._data.shape
    if not shape:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = shape[wrap_dim(dim, len(shape))]
    if n == 0:  # split(0) would give one piece; torch keeps `chunks` empty pieces
        return tuple(_split_with_sizes(input, [0] * chunks, dim))
    return tuple(_split(input, (n + chunks - 1) // chunks, dim))


register("chunk", chunk, method=True)


# --- cat / stack --------------------------------------------------------------------------------


def _cat_backward(grad, shapes, dim):
    ref = next((s for s in shapes if s != (0,)), None)
    out, start = [], 0
    d = wrap_dim(dim, len(ref)) if ref is not None else 0
    for s in shapes:
        if s == (0,) and len(ref or ()) != 1:
            out.append(_zeros(s, grad))
            continue
        out.append(slice_op(grad, d, start, start + s[d], 1))
        start += s[d]
    return out


# only the shapes are saved, so changing an input in place after cat is fine (as in torch)
cat = op("cat(Tensor[] tensors, int dim=0) -> Tensor", _cat_forward,
         grads={"tensors": lambda grad, tensors_shape, dim:
                _cat_backward(grad, tensors_shape, dim)})
register("concat", cat)
register("concatenate", cat)


def _stack_backward(grad, dim):
    d = wrap_dim(dim, grad._data.ndim)
    return [select(grad, d, i) for i in range(grad._data.shape[d])]


stack = op("stack(Tensor[] tensors, int dim=0) -> Tensor", _stack_forward,
           grads={"tensors": _stack_backward})


def _atleast(t: Tensor, n: int) -> Tensor:
    nd = t._data.ndim
    if nd >= n:
        return t
    if nd == 0:
        return reshape(t, (1,) * n)
    if n == 2 or nd == 2:
        return t.unsqueeze(0) if n == 2 else t.unsqueeze(-1)
    return t.unsqueeze(0).unsqueeze(-1)


def _atleast_fn(n: int):
    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            return tuple(_atleast(t, n) for t in tensors[0])
        if len(tensors) == 1:
            return _atleast(tensors[0], n)
        return tuple(_atleast(t, n) for t in tensors)

    fn.__name__ = f"atleast_{n}d"
    return fn


for _n in (1, 2, 3):
    register(f"atleast_{_n}d", _atleast_fn(_n))


def hstack(tensors) -> Tensor:
    check_tensor_list("hstack", tensors)
    _non_empty("hstack", tensors)
    ts = [_atleast(t, 1) for t in tensors]
    return cat(ts, 0 if ts and ts[0]._data.ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    return _vstack("vstack", tensors)


def row_stack(tensors) -> Tensor:
    return _vstack("row_stack", tensors)


def _vstack(name: str, tensors) -> Tensor:
    check_tensor_list(name, tensors)
    _non_empty("vstack", tensors)  # (torch's message names vstack for row_stack too)
    return cat([_atleast(t, 2) for t in tensors], 0)


def _non_empty(name: str, tensors) -> None:
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def dstack(tensors) -> Tensor:
    check_tensor_list("dstack", tensors)
    _non_empty("dstack", tensors)
    return cat([_atleast(t, 3) for t in tensors], 2)


register("hstack", hstack)
register("vstack", vstack)
register("row_stack", row_stack)
register("dstack", dstack)


# --- copies: repeat, tile, flip, roll, tril/triu ----------------------------------------------


def _repeat_backward(grad, repeats, self_shape):
    lead = len(repeats) - len(self_shape)
    split, dims = list(repeats[:lead]), list(range(lead))
    for r, s in zip(repeats[lead:], self_shape):
        dims.append(len(split))
        split += [r, s]
    return grad.reshape(split).sum(dims).reshape(self_shape) if dims else grad.clone()


repeat = op("repeat(Tensor self, SymInt[] repeats) -> Tensor", _repeat_forward,
            grads={"self": _repeat_backward}, function=False, method=False)
register_method("repeat", lambda self, *sizes: repeat(self, size_args(sizes)))


def tile(input: Tensor, *dims, **kw) -> Tensor:
    reps = size_args((kw.pop("dims"),) if "dims" in kw else dims)
    nd = input._data.ndim
    if len(reps) < nd:
        reps = (1,) * (nd - len(reps)) + reps
    return repeat(input, reps)


register_method("tile", tile)
register("tile", int_list_function("tile", tile, "dims"))


_flip = op("flip(Tensor self, int[] dims) -> Tensor", _flip_forward,
           grads={"self": lambda grad, dims: _flip(grad, dims)}, function=False, method=False)


def flip(input: Tensor, *dims, **kw) -> Tensor:
    if "dims" in kw:
        dims = (kw.pop("dims"),)
    return _flip(input, size_args(dims))


register_method("flip", flip)
register("flip", int_list_function("flip", flip, "dims"))


def fliplr(input: Tensor) -> Tensor:
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip(input, (0,))


register("fliplr", fliplr, method=True)
register("flipud", flipud, method=True)


_roll = op("roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor", _roll_forward,
           grads={"self": lambda grad, shifts, dims: _roll(grad, [-s for s in shifts], dims)},
           function=False, method=False)


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    shifts = [shifts] if isinstance(shifts, int) else [int(s) for s in shifts]
    dims = [] if dims is None else [dims] if isinstance(dims, int) else list(dims)
    return _roll(input, shifts, dims)


register("roll", roll, method=True)


tril = op("tril(Tensor self, int diagonal=0) -> Tensor", _tri_forward(np.tril, "tril"),
          grads={"self": lambda grad, diagonal: tril(grad, diagonal)})
triu = op("triu(Tensor self, int diagonal=0) -> Tensor", _tri_forward(np.triu, "triu"),
          grads={"self": lambda grad, diagonal: triu(grad, diagonal)})
