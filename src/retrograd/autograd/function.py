"""Custom autograd Functions: user-written forward and backward, as torch.autograd.Function.

The `ctx` a Function's forward and backward receive is its backward node itself (as in PyTorch):
a `<Name>Backward` node, made once per Function subclass, that can hold any attribute.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable
from typing import Any

from retrograd import _warning_site as _ws
from retrograd._autograd import views as V
from retrograd._autograd.accumulate_grad import gradient_edge
from retrograd._autograd.anomaly import anomaly
from retrograd._autograd.engine import zeros_for
from retrograd._autograd.node import Error, Node
from retrograd._autograd.saved import SavedVariable
from retrograd._autograd.state import state
from retrograd._ops import forward_ad as _fw
from retrograd._ops import torch_function as _torch_function
from retrograd._ops.inplace import LEAF_INPLACE, bump_version
from retrograd._tensor import Tensor, _wrap
from retrograd.autograd import _function_jvp

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction",
           "InplaceFunction"]

ONCE_DIFFERENTIABLE = (
    "trying to differentiate twice a function that was marked with @once_differentiable"
)
NO_BACKWARD = (
    "You must implement either the backward or vjp method for your custom autograd.Function to "
    "use it with backward mode AD."
)
NO_FORWARD = (
    "You must implement the forward function for custom autograd.Function."
)
INCORRECT_COUNT = "function {} returned an incorrect number of gradients (expected {}, got {})"
SAVE_NOT_TENSOR = "save_for_backward can only save variables, but argument {} is of type {}"
LEGACY_FUNCTION = (
    "Legacy autograd function with non-static forward method is deprecated. Please use "
    "new-style autograd function with static forward method. (Example: "
    "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
)
BACKWARD_AND_VJP = (
    "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should "
    "only implement one of them."
)
NO_VMAP = (
    "To use autograd.Function with vmap, you must either override the vmap staticmethod or "
    "set generate_vmap_rule=True."
)
SAVED_VARIABLES_DEPRECATED = "'saved_variables' is deprecated; use 'saved_tensors'"
BAD_GRAD_TYPE = "expected Variable or None (got {})"
DIRTY_NOT_RETURNED = (
    "Some elements marked as dirty during the forward method were not returned as output. The "
    "inputs that are modified inplace must all be outputs of the Function."
)
DIRTY_NOT_INPUT = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
    "mutated should be passed to ctx.mark_dirty()."
)
DIRTY_VIEW_MULTI_OUTPUT = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one "
    "doing the inplace that returns a single Tensor and a second one that does the other "
    "operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do "
    "this change."
)
GRAD_OUTPUT_MUTATED = (
    "{}.backward modified its grad_output in place. The engine may hand the same gradient "
    "tensor to other nodes, so this can silently corrupt other gradients; clone grad_output "
    "before changing it."
)


class FunctionCtx:
    """The methods a ctx offers; mixed into every Function's backward node."""

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(SAVE_NOT_TENSOR.format(i, type(t).__name__))
        self._to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        saved = self.__dict__.get("_saved_vars")
        if saved is None:
            if self.__dict__.get("_released"):
                from retrograd import _errors as E

                raise RuntimeError(E.BACKWARD_TWICE)
            return self.__dict__.get("_to_save") or ()
        return tuple(s.unpack(self) for s in saved)

    @property
    def saved_variables(self) -> tuple:
        _ws.warn(SAVED_VARIABLES_DEPRECATED, DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    @property
    def _raw_saved_tensors(self) -> tuple:
        """The SavedVariables themselves (register_hooks on one of them)."""
        saved = self.__dict__.get("_saved_vars")
        if saved is None and self.__dict__.get("_released"):
            from retrograd import _errors as E

            raise RuntimeError(E.BACKWARD_TWICE)
        return saved or ()


class BackwardCFunction(Node, FunctionCtx):
    """The node of one custom Function call. Instances have a __dict__ (ctx attributes)."""

    _forward_cls: type

    def __init__(self) -> None:
        Node.__init__(self)
        self._materialize = True
        self.needs_input_grad = ()

    def name(self) -> str:
        return type(self).__name__

    def apply(self, grad_outputs: list, needed: tuple | None = None) -> tuple:
        # `needed` is what CopySlices passes when this node is the history of a dirty view;
        # a custom backward computes every gradient anyway
        user_fn = _user_backward(self._forward_cls)
        if self._materialize:
            grad_outputs = _materialize(self, grad_outputs)
        versions = [g._version_counter.version if isinstance(g, Tensor) and
                    g._version_counter is not None else None for g in grad_outputs]
        # the user's backward sees __torch_function__ as its caller did (NOTE [Torch function])
        inside = (state.torch_function_subclass_off, state.torch_function_off)
        state.torch_function_subclass_off, state.torch_function_off = state.torch_function_outer
        try:
            result = user_fn(self, *grad_outputs)
        finally:
            state.torch_function_subclass_off, state.torch_function_off = inside
        _warn_if_mutated(self, grad_outputs, versions)
        if not isinstance(result, tuple):
            result = (result,)
        positions = self._tensor_positions
        n_inputs = self._n_inputs
        if len(result) < n_inputs or (len(result) > n_inputs and any(
                r is not None for r in result[n_inputs:])):
            raise RuntimeError(INCORRECT_COUNT.format(self.name(), n_inputs, len(result)))
        out = []
        for pos, (nf, _) in zip(positions, self.next_functions):
            g = result[pos]
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(BAD_GRAD_TYPE.format(type(g).__name__))
            out.append(g if nf is not None else None)
        return tuple(out)

    def __call__(self, *grad_outputs: Any) -> Any:
        # as in torch, a custom Function's node is run by the engine only
        raise TypeError(f"'{type(self).__name__}' object is not callable")

    def release_variables(self) -> None:
        saved = self.__dict__.get("_saved_vars")
        if saved:
            for s in saved:
                s.release()
        self._saved_vars = None
        self._released = True


def _user_backward(cls: type) -> Callable:
    """The Function's backward, or its vjp (an alias that may be defined instead)."""
    backward, vjp = cls.backward, cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError(BACKWARD_AND_VJP)
    return vjp if vjp is not Function.vjp else backward


def _materialize(node: BackwardCFunction, grads: list) -> list:
    """Zeros for missing gradients of Tensor outputs; non-Tensor outputs get None, and so do
    non-differentiable ones when ctx._materialize_non_diff_grads is False."""
    keep_none = () if node.__dict__.get("_materialize_non_diff_grads", True) else \
        node.__dict__.get("_non_diff_nrs", ())
    return [zeros_for(m) if g is None and m[1] is not None and nr not in keep_none else g
            for nr, (g, m) in enumerate(zip(grads, node._output_meta))]


def _warn_if_mutated(node: Node, grads: list, versions: list) -> None:
    for g, v in zip(grads, versions):
        if v is not None and g._version_counter.version != v:
            _ws.warn(GRAD_OUTPUT_MUTATED.format(node._forward_cls.__name__), UserWarning,
                     stacklevel=4)
            return


class FunctionMeta(type):
    """Gives each Function subclass its own backward node class, `<Name>Backward`."""

    def __init__(cls, name: str, bases: tuple, attrs: dict) -> None:
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Subclass with static `forward` (and optionally `setup_context`) and `backward`;
    call with `MyFunction.apply(*args)`.

    >>> import retrograd as torch
    >>> class Cube(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         (x,) = ctx.saved_tensors
    ...         return grad * 3 * x ** 2
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> y = Cube.apply(x)
    >>> y.grad_fn.name()
    'CubeBackward'
    >>> y.sum().backward()
    >>> x.grad.tolist()
    [3.0, 12.0]
    """

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _ws.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                 "are all static, so you should invoke them on the class itself. "
                 "Instantiating an autograd function will raise an error in a future "
                 "version of PyTorch.", DeprecationWarning, stacklevel=2)

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(NO_FORWARD)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        return _NO_SETUP

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(NO_BACKWARD)

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        raise NotImplementedError(NO_VMAP)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(LEGACY_FUNCTION)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        if _uses_setup_context(cls):
            args, kwargs = _bind_defaults(cls.forward, args, kwargs)
        return _apply(cls, args, kwargs)


class InplaceFunction(Function):
    """Kept for old code: a Function that records whether it should work in place."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


_NO_SETUP = object()


def _uses_setup_context(cls: type) -> bool:
    return cls.setup_context is not Function.setup_context


_signatures: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _bind_defaults(forward: Callable, args: tuple, kwargs: dict) -> tuple:
    """(args, kwargs) as forward sees them, defaults filled in: setup_context's `inputs` then
    holds every argument forward has, as in torch."""
    key = getattr(forward, "__func__", forward)
    sig = _signatures.get(key)
    if sig is None:
        sig = _signatures[key] = inspect.signature(forward)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args, bound.kwargs


def _apply(cls: type, args: tuple, kwargs: dict) -> Any:
    node = cls._backward_cls()
    tensor_pos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    requires = state.grad_enabled and any(args[i]._requires_grad for i in tensor_pos)
    node.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad and
                                  state.grad_enabled for a in args)
    node._tensor_positions = tensor_pos
    node._n_inputs = len(args)
    # forward-mode AD: forward sees plain values, cls.jvp gives the outputs' tangents
    tangents = _function_jvp.input_tangents(args) if _fw.levels else None
    prev = state.grad_enabled
    state.grad_enabled = False
    try:
        if tangents is not None:
            with _fw.suspended():
                output = _run_forward(cls, node, args, kwargs)
        else:
            output = _run_forward(cls, node, args, kwargs)
    finally:
        state.grad_enabled = prev
    result = _wrap_outputs(node, args, tensor_pos, output, requires)
    if tangents is not None:
        _function_jvp.run_jvp(cls, node, args, tangents, result)
    return result


def _run_forward(cls: type, node: BackwardCFunction, args: tuple, kwargs: dict) -> Any:
    if _uses_setup_context(cls):
        output = cls.forward(*args, **kwargs)
        cls.setup_context(node, args, output)
        return output
    return cls.forward(node, *args, **kwargs)


def _wrap_outputs(node: BackwardCFunction, args: tuple, tensor_pos: tuple, output: Any,
                  requires: bool) -> Any:
    is_tuple = isinstance(output, tuple)
    outs = output if is_tuple else (output,)
    dirty_list = node.__dict__.get("_dirty", ())
    dirty = {id(t) for t in dirty_list}
    non_diff = {id(t) for t in node.__dict__.get("_non_differentiable", ())}
    inputs_by_id = {id(args[i]): args[i] for i in tensor_pos}
    if dirty:
        _check_dirty(dirty_list, inputs_by_id, outs)
    if requires:
        node.next_functions = tuple(
            gradient_edge(args[i]) if args[i]._requires_grad else (None, 0) for i in tensor_pos)
    for t in dirty_list:
        bump_version(t, type(node).__name__)
    results = []
    meta = []
    non_diff_nrs = []
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            continue
        if id(o) in inputs_by_id and id(o) not in dirty and type(o) is not Tensor and \
                _torch_function.takes_part(type(o)):
            o = _view_as_self_through_torch_function(o)
        elif id(o) in inputs_by_id and id(o) not in dirty:
            # an input returned as-is becomes a view of it (so in-place on it is caught)
            view = _wrap(o._data)
            view._version_counter = o._version_counter
            base = o._view.base if o._view is not None else o
            view._view = V.ViewInfo(base, V.IN_CUSTOM_FUNCTION, (), o._version_counter.version
                                    if o._version_counter else 0)
            o = view
        if id(outs[nr]) in non_diff:
            non_diff_nrs.append(nr)
        elif not requires and o._view is not None and id(o) not in dirty:
            # made in forward, applied with grad mode off: still refused in place as torch
            o._view.creation_meta = V.IN_CUSTOM_FUNCTION
        if requires and o._data.dtype.kind in "fV" and id(outs[nr]) not in non_diff:
            if id(o) in dirty and o._view is not None and \
                    o._view.creation_meta != V.NO_GRAD_MODE:
                _rebase_dirty_view(node, o, outs)
            else:
                if id(o) in dirty:
                    _check_dirty_leaf(o)
                elif o._view is not None and o._view.creation_meta != V.IN_CUSTOM_FUNCTION:
                    # a view made inside forward: in-place on it would bypass the custom
                    # backward, so it is marked as torch marks it
                    _mark_custom_view(o, outs)
                o._grad_fn = node
                o._output_nr = nr
                o._requires_grad = True
        elif id(o) in non_diff:
            o._requires_grad = False
        results.append(o)
        meta.append((o._data.shape, o._data.dtype))
    if non_diff_nrs:
        node._non_diff_nrs = frozenset(non_diff_nrs)
    # non-Tensor outputs get (shape (), dtype None): they never receive a gradient
    node._output_meta = tuple(meta) if len(meta) == len(outs) else tuple(
        (o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), None) for o in outs)
    if requires:
        _save(node, results)
        if anomaly.enabled:
            from retrograd._autograd.anomaly_report import record_forward_trace

            record_forward_trace(node)
    else:
        node.__dict__.pop("_to_save", None)
    return tuple(results) if is_tuple else results[0]


def _view_as_self_through_torch_function(t: Tensor) -> Any:
    """An input returned as-is, for a Tensor subclass that defines __torch_function__: torch
    makes the output with view_as (grad mode off) through that override, so the subclass's
    own handling (and type) carries over to the output."""
    cls = type(t)
    prev = state.grad_enabled
    state.grad_enabled = False
    try:
        out = cls.__torch_function__(Tensor.view_as, (cls,), (t, t), {})
    finally:
        state.grad_enabled = prev
    info = out._view if isinstance(out, Tensor) else None
    if info is not None:  # a view of the input: in-place on it is refused as torch does
        info.creation_meta = V.IN_CUSTOM_FUNCTION
    return out


def _mark_custom_view(view: Tensor, outs: tuple) -> None:
    info = view._view
    multi = sum(isinstance(o, Tensor) for o in outs) > 1
    info.creation_meta = V.MULTI_OUTPUT_NODE if multi else V.IN_CUSTOM_FUNCTION
    vc = view._version_counter
    info.version = vc.version if vc is not None else 0


def _check_dirty(dirty: tuple, inputs_by_id: dict, outs: tuple) -> None:
    out_ids = {id(o) for o in outs if isinstance(o, Tensor)}
    for t in dirty:
        if id(t) not in inputs_by_id:
            _ws.warn(DIRTY_NOT_INPUT, UserWarning, stacklevel=5)
    if any(id(t) not in out_ids for t in dirty):
        raise RuntimeError(DIRTY_NOT_RETURNED)


def _rebase_dirty_view(node: BackwardCFunction, view: Tensor, outs: tuple) -> None:
    """A dirty input that is a view: the Function's node becomes the history of the view's
    base through CopySlices, exactly as for a built-in in-place op on a view (NOTE [In-place
    on a view]); edge 0 of the node stands for the view's old value, as in torch."""
    from retrograd._autograd.copy_slices import rebase_custom_view

    if sum(isinstance(o, Tensor) for o in outs) > 1:
        raise RuntimeError(DIRTY_VIEW_MULTI_OUTPUT)
    rebase_custom_view(node, view, 0)


def _check_dirty_leaf(t: Tensor) -> None:
    if t._grad_fn is None and t._requires_grad and t._view is None:
        raise RuntimeError(LEAF_INPLACE)


def _save(node: BackwardCFunction, outputs: list) -> None:
    to_save = node.__dict__.pop("_to_save", None)
    if to_save is None:
        return
    out_ids = {id(o) for o in outputs if isinstance(o, Tensor)}
    node._saved_vars = tuple(SavedVariable(t, t is not None and id(t) in out_ids)
                             for t in to_save)


def once_differentiable(fn: Callable) -> Callable:
    """The backward runs without building a graph; differentiating it again raises.

    When grad mode is on (create_graph) and some argument requires grad, each output is
    replaced by a detached copy made a leaf that requires grad, and all of them are joined
    under one `Error` node: the graph torch builds, so node names and edges match, and
    backward through it raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            outputs = fn(ctx, *args, **kwargs)
        finally:
            state.grad_enabled = prev
        if not prev:
            return outputs
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        tup = outputs if isinstance(outputs, tuple) else (outputs,)
        leaves = []
        for o in tup:
            if isinstance(o, Tensor):
                o = o.detach()
                o.requires_grad = True
            leaves.append(o)
        edges = tuple(gradient_edge(o) if isinstance(o, Tensor) else (None, 0) for o in leaves)
        meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), None)
                     for o in leaves)
        err = Error(ONCE_DIFFERENTIABLE, edges, meta)
        wrapped = []
        for nr, o in enumerate(leaves):
            if isinstance(o, Tensor):
                alias = _wrap(o._data)
                alias._version_counter = o._version_counter
                alias._grad_fn = err
                alias._output_nr = nr
                alias._requires_grad = True
                o = alias
            wrapped.append(o)
        return tuple(wrapped) if isinstance(outputs, tuple) else wrapped[0]

    return wrapper
