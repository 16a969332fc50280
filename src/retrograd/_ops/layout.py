"""Output memory layout of pointwise ops, chosen as torch's TensorIterator chooses it.

NumPy gives a row-major result when its inputs disagree on layout; torch orders the output's
dimensions by the strides of the inputs, first input first. Only needed when some input is not
row-major contiguous, so the common case costs one flag test per input.

Broadcasting failures are reported with torch's message (RuntimeError) instead of NumPy's
ValueError; the check runs only after NumPy has failed, so it costs nothing on success.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from retrograd import _dtype as D
from retrograd import _errors as E

INPLACE_SHAPE = "output with shape {} doesn't match the broadcast shape {}"

# torch computes log(-1) = nan, 1/0 = inf, exp(1000) = inf without a word; NumPy warns. The
# filter covers only warnings raised by op forwards (called from these modules or from the
# generated entry points of retrograd._ops.fastpath) and by the generated array formulas
# (retrograd._ops.array_formulas), and costs nothing when nothing is raised.
QUIET_MODULES = (r"retrograd\._ops\."
                 r"(pointwise|activation|comparison|layout|fastpath|kernels\.pointwise|"
                 r"array_formulas)$")
warnings.filterwarnings("ignore", category=RuntimeWarning, module=QUIET_MODULES)


def label_entry_points(functions) -> None:
    """Name the module of generated op entry points, so that the filter above sees NumPy's
    warnings from forwards they call directly (a ufunc like np.log has no Python frame: the
    warning is attributed to the generated function, whose namespace has no __name__)."""
    for fn in functions:
        g = getattr(fn, "__globals__", None)
        if g is not None and "_op" in g and "__name__" not in g:
            g["__name__"] = "retrograd._ops.fastpath"


def _should_swap(dim0: int, dim1: int, shape: tuple, strides: list) -> int:
    for st in strides:
        s0, s1 = st[dim0], st[dim1]
        if s0 == 0 or s1 == 0:
            continue
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        if shape[dim0] > shape[dim1]:
            return 1
    return 0


def torch_order(shape: tuple, arrays: list) -> list:
    """Dims from fastest- to slowest-varying, as TensorIterator's reorder_dimensions gives."""
    nd = len(shape)
    strides = []
    for a in arrays:
        lead = nd - a.ndim
        st = [0] * lead + [0 if a.shape[i] == 1 else a.strides[i] for i in range(a.ndim)]
        strides.append(st)
    perm = list(range(nd - 1, -1, -1))
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = _should_swap(perm[d0], perm[d1], shape, strides)
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def empty_for(shape: tuple, dtype, arrays: list) -> np.ndarray:
    """An uninitialized output of `shape` laid out the way torch lays out a pointwise result."""
    perm = torch_order(shape, arrays)
    slow_to_fast = perm[::-1]
    buf = np.empty([shape[d] for d in slow_to_fast], dtype)
    return buf.transpose(np.argsort(slow_to_fast))


def c_layout(a: np.ndarray) -> np.ndarray:
    """`a` with row-major strides, size-1 dims included (torch's contiguous reduction output)."""
    if a.ndim == 0:
        return a
    expected, acc = [], a.itemsize
    for n in reversed(a.shape):
        expected.append(acc)
        acc *= max(n, 1)
    if a.strides == tuple(reversed(expected)) or a.size == 0:
        return a
    out = np.empty(a.shape, a.dtype)
    out[...] = a
    return out


# --- broadcasting errors ------------------------------------------------------------------------


def broadcast_error(*shapes: tuple) -> RuntimeError | None:
    """torch's error for shapes that do not broadcast (None if they do).

    torch folds the operands' shapes left to right and compares each new shape with the shape
    so far from the last dim backwards; "tensor a" is the shape so far.
    """
    acc: tuple | None = None
    for shape in shapes:
        if acc is None:
            acc = tuple(shape)
            continue
        nd = max(len(acc), len(shape))
        a = (1,) * (nd - len(acc)) + acc
        b = (1,) * (nd - len(shape)) + tuple(shape)
        out = []
        for d in range(nd - 1, -1, -1):
            if a[d] != b[d] and a[d] != 1 and b[d] != 1:
                return RuntimeError(E.BROADCAST.format(a[d], b[d], d))
            out.append(b[d] if a[d] == 1 else a[d])
        acc = tuple(reversed(out))
    return None


def raise_broadcast(*operands) -> None:
    """Re-raise a NumPy broadcasting ValueError with torch's message (called from except)."""
    err = broadcast_error(*(np.shape(x) for x in operands if type(x) is np.ndarray))
    if err is not None:
        raise err from None


def inplace_shape_error(dst_shape: tuple, shape: tuple) -> RuntimeError:
    return RuntimeError(INPLACE_SHAPE.format(list(dst_shape), list(shape)))


# --- forwards with torch's layout ----------------------------------------------------------------


def _weak_scalar(arr: np.ndarray, value):
    """A Python scalar operand as torch uses it with an array of the computation dtype."""
    kind = arr.dtype.kind
    # ml_dtypes' bfloat16 / float8 do not treat Python floats as weak: bfloat16 + 2.5 would
    # become float32 in NumPy, so the scalar is converted to the array's dtype first.
    if kind == "V" and type(value) in (float, int, bool):
        return arr.dtype.type(value)
    # an int outside an integer dtype's range wraps around in torch (uint8: -2 is 254)
    if kind in "iu" and type(value) is int and not 0 <= value <= 127:
        return _wrapped_int(value, arr.dtype)
    return value


def binary(ufunc, bool_out: bool = False) -> Callable:
    """A forward for a binary ufunc that lays its output out like torch (bool_out: the ufunc
    returns bools, as comparisons do)."""

    def forward(a, b):
        ta, tb = type(a) is np.ndarray, type(b) is np.ndarray
        if not tb and ta:
            b = _weak_scalar(a, b)
        elif not ta and tb:
            a = _weak_scalar(b, a)
        try:
            # 0-d and 1-d inputs, or row-major ones, give a row-major result in both libraries
            if (not ta or a.ndim < 2 or a.flags.c_contiguous) and (
                    not tb or b.ndim < 2 or b.flags.c_contiguous):
                return ufunc(a, b)
            arrays = [x for x in (a, b) if type(x) is np.ndarray]
            shape = np.broadcast_shapes(*(x.shape for x in arrays))
            if len(shape) < 2:
                return ufunc(a, b)
            if not isinstance(ufunc, np.ufunc):  # a wrapper (promotion, ldexp): no out=
                res = ufunc(a, b)
                out = empty_for(shape, res.dtype, arrays)
                out[...] = res
                return out
            out = empty_for(shape, np.bool_ if bool_out else np.result_type(a, b), arrays)
            return ufunc(a, b, out=out)
        except ValueError:
            raise_broadcast(a, b)
            raise

    forward.__name__ = ufunc.__name__
    # generated entry points call the ufunc directly for row-major arrays (see fastpath.py)
    forward.ufunc = None if bool_out else ufunc
    return forward


def relayout(result, inputs: tuple):
    """`result` moved into torch's layout for a pointwise op over `inputs` (no copy if it is)."""
    if type(result) is not np.ndarray or result.ndim < 2:
        return result
    arrays = [x for x in inputs if type(x) is np.ndarray]
    if all(x.ndim < 2 or x.flags.c_contiguous for x in arrays):
        if result.flags.c_contiguous:
            return result
        return np.ascontiguousarray(result)
    out = empty_for(result.shape, result.dtype, arrays)
    if out.strides == result.strides:
        return result
    np.copyto(out, result)
    return out


def pointwise(fn: Callable) -> Callable:
    """A forward for a pointwise function of several arrays (tensors first, options after):
    torch's broadcasting error and torch's output layout."""

    def forward(*args):
        try:
            out = fn(*args)
        except ValueError:
            raise_broadcast(*args)
            raise
        return relayout(out, args)

    forward.__name__ = getattr(fn, "__name__", "forward")
    return forward


# --- type promotion over arrays and Python scalars -----------------------------------------------

CAST_ERROR = "result type {} can't be cast to the desired output type {}"
NOT_IMPLEMENTED = "\"{}\" not implemented for '{}'"


def type_name(np_dtype) -> str:
    """torch's ScalarType name of a NumPy dtype: Float, Long, Bool, BFloat16, ..."""
    return D.legacy_name(D.from_numpy_dtype(np_dtype))


def tensor_type_name(np_dtype) -> str:
    """The legacy tensor type torch names in some messages: torch.FloatTensor, ..."""
    return "torch." + D.from_numpy_dtype(np_dtype)._legacy


def not_implemented(kernel: str, np_dtype) -> NotImplementedError:
    return NotImplementedError(NOT_IMPLEMENTED.format(kernel, type_name(np_dtype)))


def result_dtype(operands) -> D.dtype:
    """torch.result_type over arrays (0-d ones are the middle tier) and Python scalars."""
    dim_t = zero_t = None
    wrapped = -1
    for x in operands:
        if type(x) is np.ndarray:
            d = D.from_numpy_dtype(x.dtype)
            if x.ndim:
                dim_t = d if dim_t is None else D.promote_types(dim_t, d)
            else:
                zero_t = d if zero_t is None else D.promote_types(zero_t, d)
        elif x is not None:
            c = D.scalar_category(x)
            wrapped = c if c > wrapped else wrapped
    result = dim_t
    if zero_t is not None and (result is None or zero_t.category > result.category):
        result = zero_t
    if wrapped >= 0 and (result is None or wrapped > result.category):
        result = (D.bool, D.int64, D.get_default_dtype())[wrapped]
    return result


def _as_dtype(x, np_dtype):
    if type(x) is np.ndarray:
        return x if x.dtype == np_dtype else x.astype(np_dtype)
    if x is None or isinstance(x, (list, tuple, str)):
        return x
    if np_dtype.kind == "f":
        return float(x)
    if np_dtype.kind == "V":
        return np_dtype.type(x)
    if np_dtype.kind == "b":
        return bool(x)
    return _wrapped_int(x, np_dtype)


def _wrapped_int(x, np_dtype):
    """A Python int in an integer dtype, wrapping around as torch's casts do (uint8: -2 -> 254)."""
    x = int(x)
    if 0 <= x <= 127:
        return x
    return np.asarray(x).astype(np_dtype)[()]


_nd = np.ndarray


def _needs_cast(args: tuple, positions: tuple, to_float: bool) -> bool:
    """False when NumPy already computes in torch's dtype: one float/int dtype, weak scalars."""
    first = None
    scalars = False
    for i in positions:
        x = args[i]
        if x.__class__ is _nd:
            if first is None:
                first = x.dtype
            elif x.dtype is not first and x.dtype != first:
                return True
        elif x is not None:
            scalars = True
    if first is None:
        return True
    kind = first.kind
    if kind != "f" and (kind == "V" or to_float):
        return True
    if not scalars:
        return False
    for i in positions:
        x = args[i]
        t = x.__class__
        if t is _nd or x is None or t is bool:
            continue
        if t is float:
            if kind != "f":
                return True
        elif t is int:
            if kind == "b" or (kind != "f" and not 0 <= x <= 127):
                return True  # NumPy rejects ints out of the array dtype's range
        else:
            return True
    return False


def promote_args(args: tuple, positions: tuple, to_float: bool = False) -> tuple:
    """Cast the operands at `positions` to torch's result dtype (integers to the default float
    dtype too when `to_float`), so NumPy computes in exactly that dtype."""
    if not _needs_cast(args, positions, to_float):
        return args
    target = result_dtype([args[i] for i in positions])
    if to_float and target.category != 2:
        target = D.get_default_dtype()
    np_target = target.np
    out = list(args)
    for i in positions:
        out[i] = _as_dtype(args[i], np_target)
    return tuple(out)


def promoting(fn: Callable, positions: tuple, to_float: bool = False) -> Callable:
    """A forward that casts its operands at `positions` to torch's result dtype, then runs fn."""

    def forward(*args):
        return fn(*promote_args(args, positions, to_float))

    forward.__name__ = getattr(fn, "__name__", "forward")
    forward.positions = positions
    return forward


# --- in-place forwards --------------------------------------------------------------------------


def write_result(dst: np.ndarray, res) -> None:
    """Store an out-of-place result into the tensor's array, with torch's checks."""
    shape = np.shape(res)
    if shape != dst.shape:
        if len(shape) > dst.ndim or np.broadcast_shapes(shape, dst.shape) != dst.shape:
            raise inplace_shape_error(dst.shape, np.broadcast_shapes(shape, dst.shape))
    res_dtype = res.dtype if hasattr(res, "dtype") else np.result_type(res)
    if res_dtype != dst.dtype and D.from_numpy_dtype(res_dtype).category > \
            D.from_numpy_dtype(dst.dtype).category:
        raise RuntimeError(CAST_ERROR.format(type_name(res_dtype), type_name(dst.dtype)))
    np.copyto(dst, res, casting="unsafe")


def check_inplace_operands(dst: np.ndarray, args: tuple, positions: tuple,
                           result: np.dtype | None) -> None:
    """torch's checks before an in-place op runs: the operands broadcast to dst's shape, and
    the result dtype (when known in advance) can be cast to dst's dtype."""
    shapes = [args[i].shape for i in positions if args[i].__class__ is _nd]
    if any(sh != dst.shape for sh in shapes):
        err = broadcast_error(*shapes)
        if err is not None:
            raise err
        full = np.broadcast_shapes(*shapes)
        if full != dst.shape:
            raise inplace_shape_error(dst.shape, full)
    if result is not None and result != dst.dtype and \
            D.from_numpy_dtype(result).category > D.from_numpy_dtype(dst.dtype).category:
        raise RuntimeError(CAST_ERROR.format(type_name(result), type_name(dst.dtype)))


def inplace_forward(compute: Callable, promote: str | None = None,
                    positions: tuple = (0,), bool_result: bool = False) -> Callable:
    """The forward of `op_` from the forward of `op`: check, compute out of place, write back.

    `promote` is the registry's promotion mode of the out-of-place op (its forward then expects
    promoted operands at `positions`, the tensor arguments); forwards that promote themselves
    pass None. bool_result: the op gives bools (comparisons), castable to any dtype.
    """
    to_float = promote == "float"

    def forward(*args):
        dst = args[0]
        result = None
        if promote is not None and not bool_result:
            target = result_dtype([args[i] for i in positions])
            if to_float and target.category != 2:
                target = D.get_default_dtype()
            result = target.np
        check_inplace_operands(dst, args, positions, result)
        if promote is not None:
            args = promote_args(args, positions, to_float)
        write_result(dst, compute(*args))

    return forward


def inplace_of(fn: Callable, *, name: str | None = None, function: bool | str = False,
               direct: Callable | None = None, check: Callable | None = None,
               node: str | None = None) -> Callable:
    """Declare `name` (default: the op's name + "_") as the in-place variant of the declared
    op `fn`: same arguments with self written, same formulas and node name.

    direct(dst, *args), if given, writes the result straight into dst; it is used when the
    operands already have dst's floating dtype (so no promotion or cast check is needed).
    check(*args), if given, runs first (argument checks torch makes before any other).
    node: the node's name where torch's differs from the op's (threshold_: ThresholdBackward1).
    """
    from retrograd._ops.registry import op

    od = fn.opdef
    s = od.schema
    head, rest = s.text.split("(", 1)
    base, dot, overload = head.partition(".")
    args_part = rest.rsplit("->", 1)[0].replace("Tensor self", "Tensor(a!) self", 1)
    text = f"{name or base + '_'}{dot}{overload}({args_part}-> Tensor(a!)"
    tensor_names = [od.arg_names[i] for i in od.tensor_idx]
    grads = {", ".join(tensor_names[i] for i in f.inputs): f.fn for f in od.formulas}
    forward = inplace_forward(od.forward, od.promote, od.tensor_idx)
    if check is not None:
        forward = _checked(check, forward)
    if direct is not None:
        forward = _with_direct(forward, direct, od.tensor_idx)
    return op(text, forward, grads=grads, node=node or od.node_name, function=function)


def _checked(check: Callable, forward: Callable) -> Callable:
    def checked(*args):
        check(*args)
        forward(*args)

    return checked


def _with_direct(general: Callable, direct: Callable, positions: tuple) -> Callable:
    others = positions[1:]

    def forward(*args):
        dst = args[0]
        dt = dst.dtype
        if dt.kind == "f":
            for i in others:
                x = args[i]
                c = x.__class__
                if c is _nd:
                    if x.dtype is not dt:
                        break
                elif c is not float and c is not int and c is not bool and x is not None:
                    break
            else:
                try:
                    direct(*args)
                    return
                except ValueError:
                    pass  # a shape problem: the general path reports it as torch does
        general(*args)

    return forward
