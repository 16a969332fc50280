"""SavedVariable: a tensor a node keeps for its backward formula.

NOTE [Saving without cycles]
An input (or a leaf) is saved as the tensor itself: its grad_fn is some earlier node, so no
cycle arises. An op's own output would point back at the node that saves it, so for outputs only
the array, version counter and output_nr are kept, and unpack() rebuilds a tensor whose grad_fn is
the node asking (`saved_for`). Nodes therefore die by reference counting alone.

NOTE [Version check]
The version of the tensor's counter is recorded at save time; unpack() compares it with the
current version and raises the error users know from PyTorch when an in-place op changed the
tensor in between. With pack/unpack hooks the check is skipped, as in PyTorch: the hooks own the
value from then on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd import _errors as E
from retrograd._autograd import op_seam
from retrograd._autograd.state import state
from retrograd._tensor import Tensor, _wrap

INFERENCE_SAVE = (
    "Inference tensors cannot be saved for backward. To work around you can make a clone to get "
    "a normal tensor and use it in autograd."
)
DETACHED_INPLACE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
    "This is not supported, please use out-of-place `.detach()` instead"
)
PACK_MODIFIED = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook can not be modified by in-place operations as this can lead to unexpected side-effects. "
    "Please open an issue if you need to perform in-place operations on the input to a pack hook."
)
HOOKS_TWICE = (
    "Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only one "
    "pair of hooks is allowed at a time."
)
HOOKS_FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
    "of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need to "
    "access saved variables after calling backward."
)
HOOKS_ARGUMENTS = (
    "register_hooks(): incompatible function arguments. The following argument types are "
    "supported:\n    1. (self: retrograd._C._autograd.SavedTensor, arg0: "
    "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\nInvoked with: {}"
)
HOOKS_NONE = "Calling register_hooks on a saved tensor with value None is forbidden"
VERSION_MISMATCH = (
    "one of the variables needed for gradient computation has been modified by an inplace "
    "operation: [{} {}]{} is at version {}; expected version {} instead."
)
HINT_ANOMALY_OFF = (
    " Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True)."
)
HINT_ANOMALY_ON = (
    " Hint: the backtrace further above shows the operation that failed to compute its gradient. "
    "The variable in question was changed in there or anywhere later. Good luck!"
)


def _incompatible_arguments(saved: SavedTensor, args: tuple, kwargs: dict) -> str:
    """torch's (pybind's) TypeError text for a register_hooks call it cannot match."""
    invoked = ", ".join([f"<retrograd._C._autograd.SavedTensor object at {id(saved):#x}>",
                         *map(repr, args)])
    if kwargs:
        invoked += "; kwargs: " + ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return HOOKS_ARGUMENTS.format(invoked)


class SavedTensor:
    """The public type of a saved tensor (grad_fn._raw_saved_<name>); only autograd makes them."""

    __slots__ = ()

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")


class SavedVariable(SavedTensor):
    __slots__ = ("_data", "_original", "_version", "_vc", "_output_nr", "_is_leaf",
                 "_requires_grad", "_hooks", "_grad_fn", "_grad_acc", "_none", "_shape")

    def __init__(self, tensor: Tensor | None, is_output: bool) -> None:
        self._hooks = None
        self._grad_fn = None
        self._grad_acc = None
        if tensor is None:
            self._none = True
            self._data = None
            self._original = False
            return
        self._none = False
        vc = tensor._version_counter
        if vc is None:
            raise RuntimeError(INFERENCE_SAVE)
        self._version = vc.version
        self._is_leaf = leaf = tensor._grad_fn is None
        self._output_nr = tensor._output_nr
        if state.saved_hooks:
            from retrograd._autograd.saved_hooks import default_hooks

            hooks = default_hooks()
            if hooks is not None:
                self._original = False
                self._save_metadata(tensor, is_output)
                self._pack(hooks, tensor)
                return
        if not is_output or leaf:
            self._original = True
            self._data = tensor
            return
        self._original = False
        self._vc = vc
        self._requires_grad = tensor._requires_grad
        self._data = tensor._data

    def _save_metadata(self, tensor: Tensor, is_output: bool) -> None:
        self._vc = tensor._version_counter
        self._requires_grad = tensor._requires_grad
        if self._is_leaf:
            if tensor._requires_grad:
                from retrograd._autograd.accumulate_grad import grad_accumulator

                self._grad_acc = grad_accumulator(tensor)
        elif not is_output:
            self._grad_fn = tensor._grad_fn

    def _pack(self, hooks: tuple, tensor: Tensor) -> None:
        pack, unpack = hooks
        version = tensor._version_counter.version
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            packed = pack(tensor.detach() if self._original else tensor)
        finally:
            state.grad_enabled = prev
        if tensor._version_counter.version != version:
            raise RuntimeError(PACK_MODIFIED)
        self._hooks = (packed, unpack)
        self._shape = tensor._data.shape
        self._data = None

    def unpack(self, saved_for: Any = None) -> Tensor | None:
        if self._none:
            return None
        data = self._data
        hooks = self._hooks
        if data is None and hooks is None:
            raise RuntimeError(E.BACKWARD_TWICE)
        if hooks is None:
            if self._original:
                grad_fn = data._grad_fn
                if not self._is_leaf and grad_fn is None:
                    if saved_for is None or _detached_for_backward(data, saved_for):
                        raise RuntimeError(DETACHED_INPLACE)
                    grad_fn = saved_for
                vc = data._version_counter
            else:
                grad_fn = None if self._is_leaf else saved_for
                vc = self._vc
            if vc.version != self._version:
                raise RuntimeError(self._version_message(grad_fn, vc))
            if self._original:
                return data
            arr = data
        else:
            grad_fn = self._grad_fn if self._grad_fn is not None or self._is_leaf else saved_for
            value = hooks[1](hooks[0])
            if not isinstance(value, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                                f"got result of type {type(value).__name__}")
            if value._data.shape != self._shape:
                _check_unpacked_shape(self._shape, value._data.shape)
            if grad_fn is None and not self._requires_grad and not value._requires_grad:
                return value
            arr = value._data
        if hooks is not None and value.__class__ is not Tensor \
                and hasattr(type(value), "__torch_dispatch__"):
            out = op_seam.shallow_copy(value)  # NOTE [Wrapper subclasses]
        else:
            out = _wrap(arr)
        if grad_fn is not None:
            out._grad_fn = grad_fn
            out._output_nr = self._output_nr
            out._requires_grad = True
        else:
            out._requires_grad = self._requires_grad
            if self._grad_acc is not None:
                import weakref

                out._grad_acc = weakref.ref(self._grad_acc)
        if hooks is None:
            out._version_counter = self._vc
        return out

    def _version_message(self, grad_fn, vc) -> str:
        from retrograd._autograd.anomaly import anomaly_enabled

        data = self._data
        if self._original:
            tensor_type, shape = data.type(), list(data._data.shape)
        else:
            tensor_type = "retrograd." + _legacy_of(data)
            shape = list(data.shape)
        where = f", which is output {self._output_nr} of {grad_fn.name()}," if grad_fn else ""
        msg = VERSION_MISMATCH.format(tensor_type, shape, where, vc.version, self._version)
        msg += HINT_ANOMALY_ON if anomaly_enabled() else HINT_ANOMALY_OFF
        last_op = getattr(vc, "last_op", None)
        if last_op is not None:
            site = getattr(vc, "last_site", None)
            msg += f" (retrograd: the last in-place change was {last_op}"
            msg += f" at {site[0]}:{site[1]})" if site else ")"
        return msg

    def register_hooks(self, *args: Callable, **kwargs: Any) -> None:
        """register_hooks(pack_hook, unpack_hook): positional only, as torch's binding."""
        if kwargs or len(args) != 2 or not (callable(args[0]) and callable(args[1])):
            raise TypeError(_incompatible_arguments(self, args, kwargs))
        pack_hook, unpack_hook = args
        if self._hooks is not None:
            raise RuntimeError(HOOKS_TWICE)
        if self._data is None:
            raise RuntimeError(HOOKS_NONE if self._none else HOOKS_FREED)
        if self._original:
            tensor = self._data
            self._save_metadata(tensor, False)
        else:
            tensor = _wrap(self._data)
            tensor._version_counter = self._vc
        self._pack((pack_hook, unpack_hook), tensor)

    def release(self) -> None:
        self._data = None
        self._hooks = None
        self._grad_fn = None

    def __repr__(self) -> str:
        return f"<retrograd.autograd.graph.SavedTensor object at {hex(id(self))}>"


def _detached_for_backward(data: Tensor, saved_for: Any) -> bool:
    """An op node's backward reads its saved input, which was detached in place since. PyTorch
    refuses this (its op nodes unpack inputs without naming themselves), while a custom
    Function's saved_tensors, or a node's _saved_* attributes read outside backward, still give
    the tensor back. A view whose grad_fn is rebuilt lazily still requires grad."""
    return (not data._requires_grad and getattr(saved_for, "_op_formulas", False)
            and state.graph_task is not None)


def _check_unpacked_shape(saved: tuple, got: tuple) -> None:
    """An unpack hook gave back a tensor of another shape. One that does not broadcast with the
    saved shape would fail inside the formula; raise the error PyTorch's formula raises there
    (the gradient, of the saved shape, is its first operand)."""
    err = op_seam.broadcast_error(saved, got)
    if err is not None:
        raise err


def _legacy_of(arr) -> str:
    from retrograd._dtype import from_numpy_dtype

    return from_numpy_dtype(arr.dtype)._legacy
