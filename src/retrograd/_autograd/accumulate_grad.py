"""AccumulateGrad: the node at every leaf that requires grad; it writes `.grad`.

NOTE [Gradient layout contract]
`.grad` is stored so that optimizers touch memory the way the parameter is laid out: if the
parameter is non-overlapping and dense (contiguous, transposed, permuted, ...), `.grad` gets the
parameter's strides; otherwise `.grad` is row-major contiguous. An incoming gradient that already
obeys this and that the engine owns (NOTE [Gradient ownership]: memory it made that nobody else
holds) is stolen (kept without a copy). Otherwise it is copied into an obedient layout. A later
gradient is added in place (`.grad` keeps its identity and memory) unless a double-backward graph
is being built, in which case the sum is taken out of place so that `.grad` carries a grad_fn.

retrograd steals more carefully than PyTorch, which looks only at the tensor's use count: never
a gradient that views part of another array (an expanded or sliced gradient shares memory with
something else), what a custom Function's backward returned (its code may hold it elsewhere), a
view a hook returned, or memory a hook on an earlier node saw (a view's backward passes on a view
of its gradient). As PyTorch, never a gradient a hook kept a reference to.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._autograd import op_seam
from retrograd._autograd.hooks import POST_ACC_RETURNED, check_tensor_result
from retrograd._autograd.node import MAX_SEQUENCE_NR, NODE_FIELDS, CppNode
from retrograd._autograd.state import state
from retrograd._autograd.views import GRADLESS_VIEWS
from retrograd._tensor import Tensor, _is_wrapper, _wrap, leaf_grad_np_dtype

LAYOUT_WARNING = (
    "grad and param do not obey the gradient layout contract. This is not an error, but may "
    "impair performance.\ngrad.sizes() = {}, strides() = {}\nparam.sizes() = {}, strides() = {}"
)
_warned_layout = False


class AccumulateGrad(CppNode):
    __slots__ = ("variable", "_lock")
    _lazy_tensor_hooks = True
    _reads_ownership = True  # an owned gradient becomes .grad without a copy

    if TYPE_CHECKING:
        variable: Tensor
        _lock: threading.Lock

        def __init__(self, variable: Tensor) -> None: ...  # made from ACCUMULATE_GRAD_FIELDS

    def apply(self, grad_outputs: list, owned: int = 0) -> tuple:
        """Accumulate grad_outputs[0] into the leaf's .grad; `owned` (from the engine, NOTE
        [Gradient ownership]) says the gradient is memory only the engine holds, so it may
        become .grad without a copy (post hooks still see it, as in PyTorch)."""
        var = self.variable
        new_grad = grad_outputs[0]
        if new_grad is None or not var._requires_grad:
            return ()
        with self._lock:
            accumulate_grad(var, new_grad, bool(owned))
        new_grad = None
        meta = var._meta
        if meta is not None and meta.post_acc_hooks:
            for hook in tuple(meta.post_acc_hooks.values()):
                out = hook(var)
                if out is not None and out is not var:
                    check_tensor_result(hook, var, out)
                    raise RuntimeError(POST_ACC_RETURNED)
        return ()

    def tensor_pre_hooks(self) -> tuple:
        """A leaf's hooks live on the tensor (this node is only weakly held), so read them now."""
        meta = self.variable._meta
        if meta is None or not meta.hooks:
            return ()
        return tuple(meta.hooks.values())


def accumulate_grad(var: Tensor, new_grad: Tensor, owned: bool = False) -> None:
    """Add new_grad into var.grad; `owned`: new_grad's memory is the engine's alone, so it may
    be kept as .grad."""
    grad = var._grad
    if grad is None:
        if owned and not state.grad_enabled and _stealable(new_grad, var):
            out = _wrap(new_grad._data)
        elif dispatch_modes():
            out = new_grad.clone()  # an op, so tracers see it (NOTE [Op-level tracing])
        else:
            out = clone_obey_contract(new_grad, var)
        var._grad = out
    elif not state.grad_enabled and grad.__class__ is Tensor:  # (a subclass may hold no data)
        if dispatch_modes():
            grad.add_(new_grad)
        else:
            np.add(grad._data, new_grad._data, out=grad._data, casting="unsafe")
            if grad._version_counter is not None:
                grad._version_counter.version += 1
        _check_layout(grad, var)
    else:
        result = grad + new_grad
        _check_layout(result, var)
        var._grad = result


def dispatch_modes() -> list:
    """The active dispatch modes (retrograd._ops.dispatch.mode_stack, one list for the process):
    under one, gradients are summed and copied with ops rather than NumPy, so tracers see them."""
    return op_seam.mode_stack


def _stealable(new_grad: Tensor, var: Tensor) -> bool:
    """An owned gradient kept as .grad as it is: a plain array of the leaf's dtype, writable,
    laid out as the contract asks."""
    arr = new_grad._data
    return (new_grad.__class__ is Tensor and new_grad._grad_fn is None and arr.flags.writeable
            and _grad_dtype_fits(arr.dtype, var) and obeys_layout_contract(arr, var._data))


def _grad_dtype_fits(dtype: np.dtype, var: Tensor) -> bool:
    """Whether a gradient of `dtype` may be .grad as it is (NOTE [grad_dtype])."""
    if dtype == var._data.dtype:
        return True
    wanted = leaf_grad_np_dtype(var)
    return wanted is None or dtype == wanted


def is_non_overlapping_and_dense(a: np.ndarray) -> bool:
    if a.ndim == 0 or a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    dims = sorted((st, sz) for st, sz in zip(a.strides, a.shape) if sz != 1)
    expected = a.itemsize
    for st, sz in dims:
        if st != expected:
            return False
        expected *= sz
    return True


def obeys_layout_contract(grad: np.ndarray, param: np.ndarray) -> bool:
    if grad.shape != param.shape:
        return False
    if grad.strides == param.strides and grad.itemsize == param.itemsize \
            and param.flags.c_contiguous:
        return True  # the common case: both row-major
    if is_non_overlapping_and_dense(param):
        g_item, p_item = grad.itemsize, param.itemsize
        return all(sz == 1 or gs // g_item == ps // p_item
                   for sz, gs, ps in zip(param.shape, grad.strides, param.strides))
    return grad.flags.c_contiguous


def empty_like_layout(param: np.ndarray, dtype=None) -> np.ndarray:
    """An empty array with the parameter's strides if it is dense, else row-major."""
    dtype = param.dtype if dtype is None else dtype
    if param.flags.c_contiguous or not is_non_overlapping_and_dense(param):
        return np.empty(param.shape, dtype)
    order = sorted(range(param.ndim), key=lambda d: -param.strides[d])
    buf = np.empty([param.shape[d] for d in order], dtype)
    return buf.transpose(np.argsort(order))


def clone_obey_contract(new_grad: Tensor, var: Tensor) -> Tensor:
    if not new_grad._data.flags.writeable and _is_wrapper(new_grad):
        return new_grad.clone()  # a wrapper subclass: its class copies what it wraps
    if state.grad_enabled and new_grad._requires_grad:
        return op_seam.copy_into_new(new_grad, empty_like_layout(var._data, new_grad._data.dtype))
    out = empty_like_layout(var._data, new_grad._data.dtype)
    np.copyto(out, new_grad._data)
    return _wrap(out)


def _check_layout(grad: Tensor, var: Tensor) -> None:
    global _warned_layout
    if _warned_layout or obeys_layout_contract(grad._data, var._data):
        return
    _warned_layout = True
    _ws.warn(LAYOUT_WARNING.format(list(grad.shape), list(grad.stride()), list(var.shape),
                                        list(var.stride())), UserWarning, stacklevel=2)


_make_lock = threading.Lock()


def _leaf_lock(t: Tensor) -> threading.Lock:
    """The leaf's .grad lock, made on the first backward through it."""
    meta = t._meta
    lock = None if meta is None else meta.grad_lock
    if lock is None:
        with _make_lock:  # two threads must not give one leaf two locks
            meta = t._get_meta()
            lock = meta.grad_lock
            if lock is None:
                lock = meta.grad_lock = threading.Lock()
    return lock


# NOTE [Field tables]: Node's fields with a leaf's values, set inline (one is made per leaf and
# backward). Threads running backward through one leaf take turns writing its .grad: a lock per
# leaf, held only while .grad is written (never while a hook runs), so a hook may wait for
# another thread's backward. It lives with the leaf, made once: the node is made anew for every
# graph, and nodes of one leaf share it.
ACCUMULATE_GRAD_FIELDS = NODE_FIELDS.extend(AccumulateGrad, "_AccumulateGrad", (
    ("next_functions", "()", "a leaf's node leads nowhere"),
    ("_seq", "_MAX_SEQ", "runs as soon as it is ready (PyTorch gives it UINT64_MAX)"),
    ("_output_meta", "(({variable}._data.shape, {variable}._data.dtype if {variable}._meta is "
                     "None else _grad_np_dtype({variable})),)",
     "the leaf's shape, and its grad_dtype (NOTE [grad_dtype])"),
    ("variable", "{variable}", "the leaf whose .grad it writes"),
    ("_lock", "_leaf_lock({variable})", "the leaf's .grad lock (above)"),
), ("variable",), {"_MAX_SEQ": MAX_SEQUENCE_NR, "_leaf_lock": _leaf_lock,
                    "_grad_np_dtype": leaf_grad_np_dtype})
AccumulateGrad.__init__ = ACCUMULATE_GRAD_FIELDS.constructor(  # type: ignore[method-assign]
    "__init__", "self, variable", target="self", qualname="AccumulateGrad.__init__")


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node: made on demand, held weakly, so reused while alive (two
    threads may each make one; they share the leaf's lock)."""
    ref = t._grad_acc
    if ref is not None:
        node = ref()
        if node is not None:
            return node
    node = AccumulateGrad(t)
    t._grad_acc = weakref.ref(node)
    return node


def gradient_edge(t: Tensor) -> tuple:
    """(node, input_nr): where the gradient w.r.t. t flows. t must require grad."""
    if t._view is not None:
        fn = t.grad_fn
        if fn is None and t._view.creation_meta in GRADLESS_VIEWS and t._view.base._requires_grad:
            return (None, 0)  # a view made with grad mode off (NOTE [View creation meta])
    else:
        fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (grad_accumulator(t), 0)
