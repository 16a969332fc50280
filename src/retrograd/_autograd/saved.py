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
from typing import TYPE_CHECKING, Any

from retrograd import _errors as E
from retrograd._autograd import op_seam
from retrograd._autograd.saved_hooks import default_hooks
from retrograd._autograd.state import state
from retrograd._fields import UNSET, FieldTable
from retrograd._generated import compile_function
from retrograd._tensor import TENSOR_FIELDS, Tensor, _is_wrapper, _wrap

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

    if TYPE_CHECKING:  # the slots' types, for the modules that read them
        _data: Any
        _original: bool
        _version: int
        _vc: Any
        _output_nr: int
        _is_leaf: bool
        _requires_grad: bool
        _hooks: tuple | None
        _grad_fn: Any
        _grad_acc: Any
        _none: bool
        _shape: tuple

        def __init__(self, tensor: Tensor | None, is_output: bool) -> None:
            ...  # made from the field tables below

        def unpack(self, saved_for: Any = None) -> Tensor | None:
            ...  # made from the unpack rules below

        def release(self) -> None: ...  # made from release_text below

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

    def _unpack_checked(self, saved_for: Any) -> Tensor | None:
        """unpack() beyond its shortcuts (NOTE [Unpack rules]): None, freed values, hooks, and
        the checks that raise."""
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
        if hooks is not None and value.__class__ is not Tensor and _is_wrapper(value):
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

    def __repr__(self) -> str:
        return f"<retrograd.autograd.graph.SavedTensor object at {hex(id(self))}>"


# NOTE [Field tables]: a SavedVariable is made in one of four shapes. These tables give each
# shape's fields; the constructor below, the inline save of the generated save functions
# (registry._compile_save) and saved_tensor() are made from them.
_NOT_HOOKED = (
    ("_hooks", "None", "(packed value, unpack hook) under saved-tensor hooks: set by _pack"),
    ("_grad_fn", "None", "kept only under hooks, for a saved input (unpack's grad_fn)"),
    ("_grad_acc", "None", "kept only under hooks, for a saved leaf that requires grad"),
)
# an input, or a leaf: the tensor itself (its grad_fn is an earlier node: no cycle)
SAVED_TENSOR_FIELDS = FieldTable(SavedVariable, "_SV", (
    *_NOT_HOOKED,
    ("_none", "False", "a tensor, not None, was saved"),
    ("_version", "{version}", "the version at save time (NOTE [Version check])"),
    ("_is_leaf", "{is_leaf}", "a leaf is unpacked without a grad_fn"),
    ("_output_nr", "{tensor}._output_nr", "names the output in the version error"),
    ("_original", "True", "_data is the tensor itself"),
    ("_data", "{tensor}", "the tensor itself"),
    ("_vc", UNSET, "read from the tensor itself"),
    ("_requires_grad", UNSET, "read from the tensor itself"),
    ("_shape", UNSET, "kept only under hooks, by _pack"),
), ("tensor", "version", "is_leaf"))
# an op's own output (it has a grad_fn): the array and counter only (NOTE [Saving without
# cycles]); unpack rebuilds a tensor whose grad_fn is the node asking
SAVED_ARRAY_FIELDS = SAVED_TENSOR_FIELDS.extend(SavedVariable, "_SV", (
    ("_is_leaf", "False", "only an output with a grad_fn is saved this way"),
    ("_original", "False", "_data is the array, not the tensor"),
    ("_data", "{tensor}._data", "the output's array"),
    ("_vc", "{vc}", "the output's version counter: the version check and the rebuilt tensor's"),
    ("_requires_grad", "{tensor}._requires_grad", "the rebuilt tensor's, when no node asks"),
), ("vc",))
# under saved-tensor hooks: _save_metadata and _pack fill the rest
SAVED_HOOKED_FIELDS = SAVED_TENSOR_FIELDS.extend(SavedVariable, "_SV", (
    ("_original", "False", "the hooks own the value: the pack hook sees the tensor as it is"),
    ("_data", UNSET, "None once packed: set by _pack"),
    ("_vc", UNSET, "set by _save_metadata"),
    ("_requires_grad", UNSET, "set by _save_metadata"),
    ("_shape", UNSET, "set by _pack: the unpacked value must have it"),
))
# None saved (an optional input that was not given)
SAVED_NONE_FIELDS = SAVED_TENSOR_FIELDS.extend(SavedVariable, "_SV", (
    ("_none", "True", "unpack gives None back"),
    ("_version", UNSET, "no tensor, no version"),
    ("_is_leaf", UNSET, "no tensor"),
    ("_output_nr", UNSET, "no tensor"),
    ("_original", "False", "no tensor"),
    ("_data", "None", "no tensor"),
))

_SAVED_TENSOR = {"tensor": "tensor", "version": "vc.version", "is_leaf": "leaf", "vc": "vc"}
_init_lines = ["def __init__(self, tensor, is_output):",
               "    if tensor is None:",
               *SAVED_NONE_FIELDS.lines("self", indent="        "),
               "        return",
               "    vc = tensor._version_counter",
               "    if vc is None:",
               "        raise RuntimeError(_INFERENCE_SAVE)",
               "    leaf = tensor._grad_fn is None",
               "    if _state.saved_hooks:",
               "        hooks = _default_hooks()",
               "        if hooks is not None:",
               *SAVED_HOOKED_FIELDS.lines("self", _SAVED_TENSOR, indent="            "),
               "            self._save_metadata(tensor, is_output)",
               "            self._pack(hooks, tensor)",
               "            return",
               "    if not is_output or leaf:",
               *SAVED_TENSOR_FIELDS.lines("self", _SAVED_TENSOR, indent="        "),
               "    else:",
               *SAVED_ARRAY_FIELDS.lines("self", _SAVED_TENSOR, indent="        ")]
SavedVariable.__init__ = compile_function(  # type: ignore[method-assign]
    "__init__", _init_lines, {**SAVED_TENSOR_FIELDS.names, "_state": state,
                              "_default_hooks": default_hooks, "_INFERENCE_SAVE": INFERENCE_SAVE,
                              "__name__": __name__},
    "SavedVariable __init__", "SavedVariable.__init__")

saved_tensor = SAVED_TENSOR_FIELDS.constructor("saved_tensor", "tensor, version, is_leaf")
saved_tensor.__doc__ = ("A SavedVariable keeping `tensor` itself, made as if saved at `version`, "
                        "with no hooks (CopySlices hands a saved output over as a view).")


# NOTE [Unpack rules]
# A saved value comes back without any check failing, and with nothing to rebuild, when
# KEEP_TENSOR holds for a tensor kept as itself (not modified in place since it was saved, and
# not detached in place since, unless it is a leaf), or KEEP_ARRAY for an output kept as its
# array (its counter unmodified; the tensor is rebuilt around it, with the asking node as
# grad_fn). These two are the only statement of the rules: SavedVariable.unpack and the
# generated backward functions (unpack_lines) are made from them; everything else
# (None, freed values, hooks, the errors) is SavedVariable._unpack_checked's.
KEEP_TENSOR = ("{t}._version_counter.version == {s}._version"
               " and ({t}._grad_fn is not None or {s}._is_leaf)")
KEEP_ARRAY = "{s}._vc.version == {s}._version"


def unpack_lines(j: int, arrays: bool, may_be_list: bool) -> list:
    """Code that unpacks saved value s<j> into v<j> in a generated backward: the tensor (or,
    with `arrays`, its array) by the unpack rules inline, anything else through unpack()."""
    s, v = f"s{j}", f"v{j}"
    keep_tensor = KEEP_TENSOR.format(s=s, t="t")
    if not arrays:
        lines = [f"    if {s}.__class__ is _SV:",
                 f"        t = {s}._data",
                 f"        if {s}._original and t is not None and {keep_tensor}:",
                 f"            {v} = t",
                 "        else:",
                 f"            {v} = {s}.unpack(node)"]
        if may_be_list:
            lines += [f"    elif {s}.__class__ is tuple and {s} and {s}[0].__class__ is _SV:",
                      f"        {v} = [sv.unpack(node) for sv in {s}]"]
        return lines + ["    else:", f"        {v} = {s}"]
    return [f"    if {s}.__class__ is _SV:",
            f"        t = {s}._data",
            "        if t is None:",
            f"            {v} = _arr({s}.unpack(node))",
            f"        elif {s}._original:",
            f"            if {keep_tensor}:",
            f"                {v} = t._data",
            "            else:",
            f"                {v} = _arr({s}.unpack(node))",
            f"        elif {KEEP_ARRAY.format(s=s)}:",
            f"            {v} = t",
            "        else:",
            f"            {v} = _arr({s}.unpack(node))",
            "    else:",
            f"        {v} = {s}"]


# an output's array comes back as a fresh tensor of the node asking (a _data not None that is
# no tensor is always SAVED_ARRAY_FIELDS': hooks and release leave None there)
_unpack_lines = ["def unpack(self, saved_for=None):",
                 "    t = self._data",
                 "    if self._original:",
                 f"        if t is not None and {KEEP_TENSOR.format(s='self', t='t')}:",
                 "            return t",
                 f"    elif t is not None and saved_for is not None and "
                 f"{KEEP_ARRAY.format(s='self')}:",
                 "        r = _new(_T)",
                 *TENSOR_FIELDS.lines("r", {"data": "t"}, indent="        ", override={
                     "_requires_grad": "True", "_grad_fn": "saved_for",
                     "_output_nr": "self._output_nr", "_version_counter": "self._vc"}),
                 "        return r",
                 "    return self._unpack_checked(saved_for)"]
SavedVariable.unpack = compile_function(  # type: ignore[method-assign]
    "unpack", _unpack_lines, {**TENSOR_FIELDS.names, "__name__": __name__},
    "SavedVariable unpack", "SavedVariable.unpack")


def release_text(s: str) -> str:
    """The statement that frees saved value `s` after backward (what it kept and what its hooks
    hold; the object stays, so register_hooks can report the release)."""
    return f"{s}._data = {s}._hooks = {s}._grad_fn = None"


SavedVariable.release = compile_function(  # type: ignore[method-assign]
    "release", ["def release(self):", "    " + release_text("self")], {"__name__": __name__},
    "SavedVariable release", "SavedVariable.release")


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
