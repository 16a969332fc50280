"""The public graph API: Node, GradientEdge, get_gradient_edge, increment_version,
saved-tensor hooks, save_on_cpu, disable_saved_tensors_hooks, register_multi_grad_hook,
allow_mutation_on_saved_tensors, and debug logging of every node backward executes."""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import NamedTuple

from retrograd._autograd.hooks import RemovableHandle
from retrograd._autograd.node import Node as _Node
from retrograd._autograd.state import state
from retrograd._tensor import Tensor

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "Node", "GradientEdge",
           "get_gradient_edge", "increment_version"]

log = logging.getLogger(__name__)


class _VirtualBase(type):
    """isinstance/issubclass answer for every node class, though none inherits from Node."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _Node)

    def __subclasscheck__(cls, sub) -> bool:
        return sub is cls or (isinstance(sub, type) and issubclass(sub, _Node))


class Node(metaclass=_VirtualBase):
    """The public type of graph nodes, as in torch a virtual base: every node (op nodes,
    AccumulateGrad, custom Function nodes) is an instance, none has it in its mro. Their
    shared API: name(), next_functions, metadata, register_hook(), register_prehook()."""

    def __init__(self, *args, **kwargs) -> None:
        raise TypeError("Node is the abstract base of autograd's nodes: it cannot be "
                        "instantiated")


class GradientEdge(NamedTuple):
    """An edge of the graph: the gradient flowing into `node` at input `output_nr`."""

    node: Node
    output_nr: int


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients")
    from retrograd._autograd.accumulate_grad import gradient_edge

    return GradientEdge(*gradient_edge(tensor))


def _grad_fn_or_grad_acc(t: Tensor) -> _Node | None:
    if t.requires_grad and t.grad_fn is None:
        from retrograd._autograd.accumulate_grad import grad_accumulator

        return grad_accumulator(t)
    return t.grad_fn


def increment_version(tensor: Tensor | Sequence[Tensor]) -> None:
    """Tell autograd a tensor was modified in place behind its back (e.g. through data_ptr).

    >>> import retrograd as torch
    >>> x = torch.ones(2)
    >>> x._version
    0
    >>> x.numpy()[0] = 5.0  # a write autograd cannot see
    >>> torch.autograd.graph.increment_version(x)
    >>> x._version
    1
    """
    tensors = (tensor,) if isinstance(tensor, Tensor) else tensor
    for t in tensors:
        vc = t._version_counter
        if vc is None:  # an inference tensor: no version to bump, as in torch
            continue
        vc.version += 1
        vc.last_op = "increment_version"
        vc.last_site = None


class saved_tensors_hooks:
    """Context manager: pack_hook(tensor) runs when an op saves a tensor for backward, and
    unpack_hook(packed) when backward needs it back. The innermost pair applies (PyTorch's
    rule); with compose=True the pair is combined with the enclosing one instead (see NOTE
    [Composed hooks] in retrograd._autograd.saved_hooks).

    >>> import retrograd as torch
    >>> packed = []
    >>> def pack(t):
    ...     packed.append(t.shape)
    ...     return t.clone()
    >>> x = torch.ones(3, requires_grad=True)
    >>> with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
    ...     y = (x * x).sum()
    >>> packed  # mul saved both of its inputs
    [retrograd.Size([3]), retrograd.Size([3])]
    >>> y.backward()
    >>> x.grad.tolist()
    [2.0, 2.0, 2.0]
    """

    def __init__(self, pack_hook, unpack_hook, compose: bool = False) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook
        self.compose = compose

    def __enter__(self) -> saved_tensors_hooks:
        from retrograd._autograd.saved_hooks import push_hooks

        push_hooks(self.pack_hook, self.unpack_hook, self.compose)
        return self

    def __exit__(self, *exc) -> None:
        from retrograd._autograd.saved_hooks import pop_hooks

        pop_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward. retrograd
    computes on the CPU, so, as the seed says for CPU tensors, no copy is made.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with torch.autograd.graph.save_on_cpu():
    ...     y = (x.exp() * x).sum()
    >>> y.backward()
    >>> [round(g, 4) for g in x.grad.tolist()]  # (1 + x) e^x
    [5.4366, 22.1672]
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed) -> Tensor:
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Inside, using saved-tensor hooks raises RuntimeError(error_message); nesting restores the
    enclosing message on exit. Entering while saved-tensor hooks are active raises it."""
    if state.saved_hooks:
        raise RuntimeError(error_message)
    prev = state.saved_hooks_disabled_msg
    state.saved_hooks_disabled_msg = error_message
    try:
        yield
    finally:
        state.saved_hooks_disabled_msg = prev


# --- multi-grad hooks --------------------------------------------------------------------------


def current_graph_task_id() -> int:
    task = state.graph_task
    return -1 if task is None else task.id


def will_engine_execute_node(node: Node) -> bool:
    """Whether `node` runs in the current backward (see GraphTask.will_execute)."""
    task = state.graph_task
    if task is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward "
                           "pass")
    return task.will_execute(node)


def current_autograd_node() -> Node | None:
    task = state.graph_task
    return None if task is None else task.current_node


class _MultiHandle(RemovableHandle):
    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, st) -> None:
        self.handles = st


def register_multi_grad_hook(tensors: Sequence[Tensor], fn: Callable, *,
                             mode: str = "all") -> RemovableHandle:
    """"all": fn(grads) once the gradients of every tensor this backward reaches are computed
    (None for the others); "any": fn(grad) with the first gradient computed in a backward.
    State is kept per backward call (graph task), so concurrent backward calls don't mix.

    >>> import retrograd as torch
    >>> a = torch.ones(2, requires_grad=True)
    >>> b = torch.ones(2, requires_grad=True)
    >>> seen = []
    >>> handle = torch.autograd.graph.register_multi_grad_hook(
    ...     (a, b), lambda grads: seen.append([g is not None for g in grads]))
    >>> (a * 2).sum().backward()  # b is not reached: its grad is None
    >>> seen
    [[True, False]]
    >>> handle.remove()
    """
    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    lock = threading.Lock()
    if mode == "all":
        count: dict = {}
        buffers: dict = {}
        expected: dict = {}
        nodes = [_grad_fn_or_grad_acc(t) for t in tensors]
        n = len(tensors)

        def inner(idx: int):
            def hook(grad):
                task_id = current_graph_task_id()
                assert task_id != -1, "expected this hook to be called inside a backward call"
                with lock:
                    if task_id not in count:
                        count[task_id] = 0
                        buffers[task_id] = [None] * n
                        expected[task_id] = sum(will_engine_execute_node(g) for g in nodes
                                                if g is not None)
                    buffers[task_id][idx] = grad
                    count[task_id] += 1
                    done = count[task_id] == expected[task_id]
                    if done:
                        grads = buffers.pop(task_id)
                        del count[task_id], expected[task_id]
                if done:
                    fn(grads)

            return hook

        handles = tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors))
    else:
        ran: dict = collections.defaultdict(bool)

        def wrapped(grad):
            task_id = current_graph_task_id()
            assert task_id != -1, "expected this hook to be called inside a backward call"
            with lock:
                prev, ran[task_id] = ran[task_id], True
            if prev:
                return None
            return fn(grad)

        handles = tuple(t.register_hook(wrapped) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)


# --- allow_mutation_on_saved_tensors -----------------------------------------------------------

BACKWARD_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                    "in which the graph was originally recorded.")
NESTED = "allow_mutation_on_saved_tensors contexts cannot be nested"
_mutation_depth = 0


class _Handle:
    """What a saved tensor is packed into; its identity keys the original and the clone."""

    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    def __init__(self) -> None:
        self.cloned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.original: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.sid_to_tid: dict = collections.defaultdict(set)

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


def _storage_id(t: Tensor) -> tuple:
    root = t._view.base if t._view is not None else t
    return (id(root._data.base if root._data.base is not None else root._data), t._version)


def _tensor_id(t: Tensor) -> tuple:
    return (id(t), t.data_ptr(), t._version)


class _swap_with_cloned(saved_tensors_hooks):
    def __init__(self, ctx: _AllowMutationOnSavedContext) -> None:
        def pack_hook(t: Tensor) -> _Handle:
            tid, sid = _tensor_id(t), _storage_id(t)
            ctx.sid_to_tid[sid].add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = t
            return handle

        def unpack_hook(handle: _Handle) -> Tensor:
            assert _mutation_depth > 0, BACKWARD_OUTSIDE
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            assert handle in ctx.original, BACKWARD_OUTSIDE
            return ctx.original[handle]

        super().__init__(pack_hook, unpack_hook)


def _clone_before_mutate_mode(ctx: _AllowMutationOnSavedContext):
    from retrograd.utils._python_dispatch import TorchDispatchMode

    class _CloneArgBeforeMutateMode(TorchDispatchMode):
        """Before an op writes a tensor (the schema's `(a!)` annotations say which), clone
        every saved tensor that shares its storage and version."""

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            for idx, arg in enumerate(func._schema.args):
                if not arg.is_written:
                    continue
                t = kwargs.get(arg.name) if arg.kwarg_only else args[idx]
                if not isinstance(t, Tensor):
                    continue
                for tid in ctx.sid_to_tid.get(_storage_id(t), ()):
                    handle = ctx.tid_to_weakhandle.get(tid)
                    if handle is None or handle in ctx.cloned:
                        continue  # freed by a backward already, or cloned before
                    prev = state.grad_enabled
                    state.grad_enabled = False
                    try:
                        ctx.cloned[handle] = ctx.original[handle].clone()
                    finally:
                        state.grad_enabled = prev
                    del ctx.original[handle]
            return func(*args, **kwargs)

    return _CloneArgBeforeMutateMode()


@contextlib.contextmanager
def allow_mutation_on_saved_tensors(allow_nesting: bool = False):
    """Tensors saved for backward are cloned when mutated in place inside the context, so
    backward sees the values they had when saved. Run forward and backward inside it.

    Nesting is an error, as in PyTorch; retrograd's allow_nesting=True lets an inner context
    join the outer one instead.

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> with torch.autograd.graph.allow_mutation_on_saved_tensors():
    ...     y = x.clone()
    ...     z = (y * y).sum()  # saves y
    ...     _ = y.add_(10.0)   # would make backward fail outside the context
    ...     z.backward()
    >>> x.grad.tolist()  # computed with the saved values, 2 * [1, 2]
    [2.0, 4.0]
    """
    global _mutation_depth
    if _mutation_depth > 0:
        if not allow_nesting:
            raise RuntimeError(NESTED)
        _mutation_depth += 1
        try:
            yield _current_mutation_ctx[-1]
        finally:
            _mutation_depth -= 1
        return
    ctx = _AllowMutationOnSavedContext()
    _current_mutation_ctx.append(ctx)
    with _swap_with_cloned(ctx), _clone_before_mutate_mode(ctx):
        _mutation_depth = 1
        try:
            yield ctx
        finally:
            ctx.clear()
            _mutation_depth = 0
            _current_mutation_ctx.pop()


_current_mutation_ctx: list = []


# --- debug logging -----------------------------------------------------------------------------

_DTYPE_ABBR = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
               "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2", "int64": "i64",
               "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "b8"}


def _fmt(t: Tensor | None) -> str:
    if t is None:
        return "None"
    return f"{_DTYPE_ABBR[t.dtype.name]}[{', '.join(map(str, t.shape))}]"


def _iter_graph(roots: list):
    seen = set()
    queue: collections.deque = collections.deque()
    for node in roots:
        if node is not None and node not in seen:
            seen.add(node)
            queue.append(node)
    while queue:
        node = queue.popleft()
        for fn, _ in node.next_functions:
            if fn is not None and fn not in seen:
                seen.add(fn)
                queue.append(fn)
        yield node


def register_logging_hooks_on_whole_graph(outputs: list) -> Callable[[], None]:
    """Log every node backward executes, with the shapes of its incoming gradients."""
    roots = [o.node if isinstance(o, GradientEdge) else _grad_fn_or_grad_acc(o) for o in outputs]

    def prehook(grad_outputs):
        node = current_autograd_node()
        log.debug("Executing: %s with grad_outputs: [%s]", node,
                  ",".join(_fmt(g) for g in grad_outputs))

    handles = [node.register_prehook(prehook) for node in _iter_graph(roots)]

    def unregister() -> None:
        for h in handles:
            h.remove()

    return unregister


def _logging_enabled() -> bool:
    return log.getEffectiveLevel() <= logging.DEBUG

