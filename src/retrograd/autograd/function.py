"""Custom autograd Functions: user-written forward and backward, as torch.autograd.Function.

The `ctx` a Function's forward and backward receive is its backward node itself (as in PyTorch):
a `<Name>Backward` node, made once per Function subclass, that can hold any attribute.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from retrograd._autograd import views as V
from retrograd._autograd.accumulate_grad import gradient_edge
from retrograd._autograd.anomaly import anomaly
from retrograd._autograd.engine import zeros_for
from retrograd._autograd.node import Error, Node, next_sequence_nr
from retrograd._autograd.saved import SavedVariable
from retrograd._autograd.state import state
from retrograd._ops.inplace import LEAF_INPLACE, bump_version
from retrograd._tensor import Tensor, _wrap

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction"]

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
        return self.saved_tensors

    @property
    def _raw_saved_tensors(self) -> tuple:
        """The SavedVariables themselves (register_hooks on one of them)."""
        return self.__dict__.get("_saved_vars") or ()


class BackwardCFunction(Node, FunctionCtx):
    """The node of one custom Function call. Instances have a __dict__ (ctx attributes)."""

    _forward_cls: type

    def __init__(self) -> None:
        Node.__init__(self)
        self._materialize = True
        self.needs_input_grad = ()

    def name(self) -> str:
        return type(self).__name__

    def apply(self, grad_outputs: list) -> tuple:
        cls = self._forward_cls
        if self._materialize:
            grad_outputs = [zeros_for(m) if g is None else g
                            for g, m in zip(grad_outputs, self._output_meta)]
        versions = [g._version_counter.version if isinstance(g, Tensor) and
                    g._version_counter is not None else None for g in grad_outputs]
        result = cls.backward(self, *grad_outputs)
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
                raise TypeError(f"expected Tensor or None as gradient {pos} of {self.name()}, "
                                f"got {type(g).__name__}")
            out.append(g if nf is not None else None)
        return tuple(out)

    def release_variables(self) -> None:
        saved = self.__dict__.get("_saved_vars")
        if saved:
            for s in saved:
                s.release()
        self._saved_vars = None
        self._released = True


def _warn_if_mutated(node: Node, grads: list, versions: list) -> None:
    for g, v in zip(grads, versions):
        if v is not None and g._version_counter.version != v:
            warnings.warn(GRAD_OUTPUT_MUTATED.format(node._forward_cls.__name__), UserWarning,
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
    call with `MyFunction.apply(*args)`."""

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
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

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        return _apply(cls, args, kwargs)


_NO_SETUP = object()


def _uses_setup_context(cls: type) -> bool:
    return cls.setup_context is not Function.setup_context


def _apply(cls: type, args: tuple, kwargs: dict) -> Any:
    node = cls._backward_cls()
    tensor_pos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    requires = state.grad_enabled and any(args[i]._requires_grad for i in tensor_pos)
    node.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad and
                                  state.grad_enabled for a in args)
    node._tensor_positions = tensor_pos
    node._n_inputs = len(args)
    prev = state.grad_enabled
    state.grad_enabled = False
    try:
        if _uses_setup_context(cls):
            output = cls.forward(*args, **kwargs)
            cls.setup_context(node, args, output)
        else:
            output = cls.forward(node, *args, **kwargs)
    finally:
        state.grad_enabled = prev
    return _wrap_outputs(node, args, tensor_pos, output, requires)


def _wrap_outputs(node: BackwardCFunction, args: tuple, tensor_pos: tuple, output: Any,
                  requires: bool) -> Any:
    is_tuple = isinstance(output, tuple)
    outs = output if is_tuple else (output,)
    dirty = {id(t) for t in node.__dict__.get("_dirty", ())}
    non_diff = {id(t) for t in node.__dict__.get("_non_differentiable", ())}
    inputs_by_id = {id(args[i]): args[i] for i in tensor_pos}
    if requires:
        node.next_functions = tuple(
            gradient_edge(args[i]) if args[i]._requires_grad else (None, 0) for i in tensor_pos)
    for t in node.__dict__.get("_dirty", ()):
        bump_version(t, type(node).__name__)
    results = []
    meta = []
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            continue
        if id(o) in inputs_by_id and id(o) not in dirty:
            # an input returned as-is becomes a view of it (so in-place on it is caught)
            view = _wrap(o._data)
            view._version_counter = o._version_counter
            base = o._view.base if o._view is not None else o
            view._view = V.ViewInfo(base, V.IN_CUSTOM_FUNCTION, (), o._version_counter.version
                                    if o._version_counter else 0)
            o = view
        elif o._view is not None and id(o) not in dirty:
            # a view made in forward: writing it in place would bypass the custom backward
            o._view.creation_meta = V.IN_CUSTOM_FUNCTION
        if requires and o._data.dtype.kind in "fV" and id(outs[nr]) not in non_diff:
            if id(o) in dirty:
                _check_dirty_leaf(o)
                if o._view is not None:  # NOTE [In-place on a view]
                    from retrograd._autograd.copy_slices import rebase_custom_view

                    rebase_custom_view(node, o, nr)
                    results.append(o)
                    meta.append((o._data.shape, o._data.dtype))
                    continue
            o._grad_fn = node
            o._output_nr = nr
            o._requires_grad = True
        elif id(o) in non_diff:
            o._requires_grad = False
        results.append(o)
        meta.append((o._data.shape, o._data.dtype))
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
    """The backward runs without building a graph; differentiating it again raises."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            outputs = fn(ctx, *args)
        finally:
            state.grad_enabled = prev
        if not prev:
            return outputs
        requires = any(isinstance(a, Tensor) and a._requires_grad for a in args)
        if not requires:
            return outputs
        tup = outputs if isinstance(outputs, tuple) else (outputs,)
        edges = tuple(gradient_edge(a) if isinstance(a, Tensor) and a._requires_grad
                      else (None, 0) for a in args)
        err = Error(ONCE_DIFFERENTIABLE, edges)
        err._seq = next_sequence_nr()
        wrapped = []
        for o in tup:
            if isinstance(o, Tensor):
                o = o.detach()
                o._grad_fn = err
                o._requires_grad = True
                err._output_meta = err._output_meta + ((o._data.shape, o._data.dtype),)
            wrapped.append(o)
        return tuple(wrapped) if isinstance(outputs, tuple) else wrapped[0]

    return wrapper
