"""Module: the base class of layers, with torch.nn.Module's API and semantics.

Parameters, buffers and submodules live in three dicts (`_parameters`, `_buffers`, `_modules`)
filled by `__setattr__` and read back by `__getattr__`, so `self.weight = Parameter(...)` both
registers and exposes the tensor. Calling a module runs forward pre-hooks, `forward`, forward
hooks and, when backward hooks exist, wraps inputs and outputs for them (retrograd.nn.hooks).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._autograd.hooks import RemovableHandle
from retrograd._device import checked as checked_device
from retrograd._device import device as _device
from retrograd._tensor import Tensor, _is_wrapper
from retrograd.autograd.grad_mode import no_grad
from retrograd.nn.hooks import BackwardHook
from retrograd.nn.parameter import Buffer, Parameter, buffer_persistent, is_lazy

__all__ = [
    "Module", "register_module_forward_pre_hook", "register_module_forward_hook",
    "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
    "register_module_backward_hook", "register_module_buffer_registration_hook",
    "register_module_module_registration_hook", "register_module_parameter_registration_hook",
]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    """Indent every line but the first (blank lines stay empty)."""
    first, *rest = text.split("\n")
    if not rest:
        return text
    pad = " " * spaces
    return "\n".join([first] + [pad + line if line.strip() else "" for line in rest])


def _typename(obj: Any) -> str:
    """torch.typename: 'retrograd.FloatTensor' for tensors, the qualified class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "") or ""
    name = type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


class _WrappedHook:
    """A hook that is handed its module (held weakly) as first argument."""

    def __init__(self, hook: Callable, module: Module | None = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not self.with_module:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)

    def __getstate__(self) -> dict:
        out = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            out["module"] = self.module()
        return out

    def __setstate__(self, st: dict) -> None:
        self.hook = st["hook"]
        self.with_module = st["with_module"]
        if self.with_module:
            if st["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(st["module"])


# --- hooks shared by every module (debugging / profiling), as torch's globals ---------------------
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()
_global_parameter_registration_hooks: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_forward_hooks_with_kwargs: OrderedDict = OrderedDict()
_global_is_full_backward_hook: bool | None = None


def _add(table: OrderedDict, hook: Callable, *extra: OrderedDict,
         prepend: bool = False) -> RemovableHandle:
    handle = RemovableHandle(table, *extra)
    table[handle.id] = hook
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


def _any_global_hook() -> bool:
    return bool(_global_backward_pre_hooks or _global_backward_hooks or _global_forward_pre_hooks
                or _global_forward_hooks)


def register_module_buffer_registration_hook(hook: Callable) -> RemovableHandle:
    """hook(module, name, buffer) runs on every register_buffer; may return a new buffer."""
    return _add(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    """hook(module, name, submodule) runs on every submodule registration."""
    return _add(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    """hook(module, name, param) runs on every register_parameter."""
    return _add(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """A forward pre-hook for all modules, run before each module's own."""
    return _add(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """A forward hook for all modules, run before each module's own."""
    handle = _add(_global_forward_hooks, hook, _global_forward_hooks_always_called,
                  _global_forward_hooks_with_kwargs)
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    return _add(_global_backward_pre_hooks, hook)


def _set_global_hook_kind(full: bool) -> None:
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = full


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    _set_global_hook_kind(True)
    return _add(_global_backward_hooks, hook)


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    _set_global_hook_kind(False)
    return _add(_global_backward_hooks, hook)


def _forward_unimplemented(self: Module, *input: Any) -> None:
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              '"forward" function')


def _refused_device(name: str) -> Callable:
    """Module.cuda() and its kin: retrograd has no such device, so they raise."""

    def move(self: Module, device: Any = None) -> Module:
        _device(name)  # raises: retrograd computes on the CPU only
        return self

    move.__name__ = move.__qualname__ = name
    return move


def _parse_to(args: tuple, kwargs: dict) -> tuple[Any, D.dtype | None]:
    """(device, dtype) from Module.to's overloads: to(device, dtype), to(dtype), to(tensor)."""
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected "
                        f"keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, _device, int)) and not isinstance(a, bool):
            dev = a
        elif a is not None and not isinstance(a, (bool, float)):  # (as Tensor.to reads them)
            from retrograd._ops.copy import invalid_to_arguments

            raise invalid_to_arguments(args)
    if dev is not None:
        dev = checked_device(dev)  # raises for devices retrograd does not have
    return dev, dtype


class Module:
    """Base class for all neural network modules."""

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False
    _compiled_call_impl: Callable | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if not self.call_super_init and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if not self.call_super_init and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        # set through object.__setattr__: these are the tables __setattr__ itself consults
        init = object.__setattr__
        init(self, "training", True)
        init(self, "_parameters", {})
        init(self, "_buffers", {})
        init(self, "_non_persistent_buffers_set", set())
        init(self, "_backward_pre_hooks", OrderedDict())
        init(self, "_backward_hooks", OrderedDict())
        init(self, "_is_full_backward_hook", None)
        init(self, "_forward_hooks", OrderedDict())
        init(self, "_forward_hooks_with_kwargs", OrderedDict())
        init(self, "_forward_hooks_always_called", OrderedDict())
        init(self, "_forward_pre_hooks", OrderedDict())
        init(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        init(self, "_state_dict_hooks", OrderedDict())
        init(self, "_state_dict_pre_hooks", OrderedDict())
        init(self, "_load_state_dict_pre_hooks", OrderedDict())
        init(self, "_load_state_dict_post_hooks", OrderedDict())
        init(self, "_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    # --- registration ---------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not a parameter (in state_dict when persistent)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        for hook in _global_buffer_registration_hooks.values():
            out = hook(self, name, tensor)
            if out is not None:
                tensor = out
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None, a placeholder that state_dict skips)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             "function of another Tensor, compute the value in the forward() "
                             "method.")
        for hook in _global_parameter_registration_hooks.values():
            out = hook(self, name, param)
            if out is not None:
                param = out
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as the attribute `name`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            out = hook(self, name, module)
            if out is not None:
                module = out
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path `target` ('' is self)."""
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, leaf = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, leaf):
            raise AttributeError(parent._get_name() + " has no attribute `" + leaf + "`")
        if hasattr(parent, leaf) and not isinstance(getattr(parent, leaf), Module):
            raise AttributeError("`" + leaf + "` is not an nn.Module")
        setattr(parent, leaf, module)

    def get_parameter(self, target: str) -> Parameter:
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        buf = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buf

    def get_extra_state(self) -> Any:
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called.")

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called.")

    # --- conversion -----------------------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Replace every parameter's and buffer's data with fn(tensor), keeping the objects."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            grad = param._grad
            # swap the storage in place: the Parameter object (held by optimizers) survives
            param.data = applied
            if grad is not None:
                with no_grad():
                    param._grad.data = fn(grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Give every parameter and buffer uninitialized memory of its shape and dtype (the
        objects stay: optimizers keep theirs), for a model to be initialized afterwards."""
        from retrograd import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call fn on every submodule (children first, as torch) and on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Cast floating point parameters and buffers to a dtype; devices other than cpu raise."""
        _, dtype = _parse_to(args, dict(kwargs))
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")
        fmt = kwargs.get("memory_format")

        def convert(t: Tensor) -> Tensor:
            cast = dtype if dtype is not None and t.is_floating_point() else None
            if fmt is not None and t.dim() in (4, 5):  # torch lays out only conv-like weights
                return t.to(cast, memory_format=fmt)
            return t.to(cast) if cast is not None else t

        return self._apply(convert)

    def cpu(self) -> Module:
        return self

    cuda = _refused_device("cuda")
    xpu = _refused_device("xpu")
    mtia = _refused_device("mtia")
    ipu = _refused_device("ipu")

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> Module:
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def share_memory(self) -> Module:
        # as torch's _apply: parameters, their gradients and buffers (an uninitialized
        # parameter raises its own error)
        # (one pass finds the aliases of all of them; a class with its own share_memory_, such
        # as an uninitialized parameter, which raises, is called on its own)
        from retrograd.storage import share_memory_of

        plain = []
        for t in itertools.chain(self.parameters(), self.buffers()):
            for x in (t, t.grad):
                if x is None:
                    continue
                if type(x).share_memory_ is Tensor.share_memory_ and not _is_wrapper(x):
                    plain.append(x)
                else:
                    x.share_memory_()
        share_memory_of(plain)
        return self

    # --- hooks ----------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """hook(module, args) (or (module, args, kwargs)) before forward; may replace inputs."""
        handle = _add(self._forward_pre_hooks, hook, self._forward_pre_hooks_with_kwargs,
                      prepend=prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """hook(module, args, output) (or (module, args, kwargs, output)); may replace output."""
        handle = _add(self._forward_hooks, hook, self._forward_hooks_with_kwargs,
                      self._forward_hooks_always_called, prepend=prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable,
                                        prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_output) when the outputs' gradients are known; may replace them."""
        return _add(self._backward_pre_hooks, hook, prepend=prepend)

    def register_full_backward_hook(self, hook: Callable,
                                    prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_input, grad_output) once per backward; may replace grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        return _add(self._backward_hooks, hook, prepend=prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Deprecated: a hook on the grad_fn of the output (torch's non-full backward hook)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return _add(self._backward_hooks, hook)

    def _get_backward_hooks(self) -> tuple[list, list]:
        """(full backward hooks, non-full backward hooks), globals first."""
        full: list = []
        legacy: list = []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        elif _global_is_full_backward_hook is False:
            legacy += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        elif self._is_full_backward_hook is False:
            legacy += self._backward_hooks.values()
        return full, legacy

    def _get_backward_pre_hooks(self) -> list:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    # --- calling --------------------------------------------------------------------------------
    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        if self._compiled_call_impl is not None:  # set by compile()
            return self._compiled_call_impl(*args, **kwargs)
        # _eager_call's body, inline: one call frame less on every module call
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _any_global_hook()):
            return self.forward(*args, **kwargs)
        return _call_with_hooks(self, args, kwargs)

    def _eager_call(self, *args: Any, **kwargs: Any) -> Any:
        """A call without the compiled path (what compile() captures)."""
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or _any_global_hook()):
            return self.forward(*args, **kwargs)
        return _call_with_hooks(self, args, kwargs)

    def _wrapped_call_impl(self, *args: Any, **kwargs: Any) -> Any:
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    __call__: Callable[..., Any] = _call_impl

    # --- attributes -----------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        st = self.__dict__.copy()
        st.pop("_compiled_call_impl", None)
        return st

    def __setstate__(self, st: dict) -> None:
        self.__dict__.update(st)
        defaults = {"_forward_pre_hooks": OrderedDict, "_forward_pre_hooks_with_kwargs":
                    OrderedDict, "_forward_hooks_with_kwargs": OrderedDict,
                    "_forward_hooks_always_called": OrderedDict, "_state_dict_hooks":
                    OrderedDict, "_state_dict_pre_hooks": OrderedDict,
                    "_load_state_dict_pre_hooks": OrderedDict, "_load_state_dict_post_hooks":
                    OrderedDict, "_non_persistent_buffers_set": set, "_backward_pre_hooks":
                    OrderedDict}
        for key, make in defaults.items():
            if key not in self.__dict__:
                object.__setattr__(self, key, make())
        if "_is_full_backward_hook" not in self.__dict__:
            object.__setattr__(self, "_is_full_backward_hook", None)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            members = d.get(table)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _discard(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module) or (modules is not None and name in modules):
            self._set_module_attr(name, value, modules)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            self._set_buffer_attr(name, value)
            return
        object.__setattr__(self, name, value)

    def _set_module_attr(self, name: str, value: Any, modules: dict | None) -> None:
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _discard(name, self.__dict__, self._parameters, self._buffers,
                     self._non_persistent_buffers_set)
        elif value is not None:
            raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                            "(torch.nn.Module or None expected)")
        for hook in _global_module_registration_hooks.values():
            out = hook(self, name, value)
            if out is not None:
                value = out
        modules[name] = value

    def _set_buffer_attr(self, name: str, value: Any) -> None:
        if value is not None and not isinstance(value, Tensor):
            raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(torch.nn.Buffer, torch.Tensor or None expected)")
        if isinstance(value, Buffer):
            persistent = buffer_persistent(value)
        else:
            persistent = name not in self._non_persistent_buffers_set
        register = self.register_buffer
        if getattr(register, "__func__", None) is Module.register_buffer or \
                "persistent" in inspect.signature(register).parameters:
            register(name, value, persistent)
        elif not persistent:
            raise RuntimeError("Registering a non-persistent buffer on a Module subclass that "
                               "implements register_buffer() without the persistent argument "
                               "is not allowed.")
        else:
            register(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    # --- state_dict -----------------------------------------------------------------------------
    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return _add(self._state_dict_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata) -> None after state_dict."""
        hook._from_public_api = True
        return _add(self._state_dict_hooks, hook)

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, prefix, keep_vars) before state_dict."""
        return _add(self._state_dict_pre_hooks, hook)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict:
        """An OrderedDict of parameters and persistent buffers, keyed by dotted name."""
        if args:
            _ws.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                     "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                     "#torch.nn.Module.state_dict for details.", FutureWarning, stacklevel=2)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if getattr(hook, "_from_public_api", False):
                if result is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif result is not None:
                destination = result
        return destination

    def _register_load_state_dict_pre_hook(self, hook: Callable,
                                           with_module: bool = False) -> RemovableHandle:
        return _add(self._load_state_dict_pre_hooks,
                    _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) before this module loads its part of a state_dict."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, incompatible_keys) after load_state_dict; may edit the key lists."""
        return _add(self._load_state_dict_post_hooks, hook)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        """Copy this module's own parameters and buffers (not its children's) from state_dict."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key in state_dict:
                self._load_one(name, key, param, state_dict[key], assign, error_msgs)
            elif strict:
                missing_keys.append(key)
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                head, dot, _ = key[len(prefix):].partition(".")
                known = self._modules if dot else local_state
                if head not in known:
                    unexpected_keys.append(key)

    def _load_one(self, name: str, key: str, param: Tensor, value: Any, assign: bool,
                  error_msgs: list) -> None:
        if not isinstance(value, Tensor):
            error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor '
                              f"or Tensor-like object from checkpoint but received {type(value)}")
            return
        # an uninitialized parameter takes any shape (copy_ checks); reading an uninitialized
        # value's shape raises, as in torch
        lazy = is_lazy(param)
        if not lazy and len(param.shape) == 0 and len(value.shape) == 1 and value.shape[0] == 1:
            value = value[0]  # old checkpoints saved scalars as 1-element vectors
        if not lazy and value.shape != param.shape:
            error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                              f"{value.shape} from checkpoint, the shape in current model is "
                              f"{param.shape}.")
            return
        try:
            with no_grad():
                if assign:
                    if isinstance(param, Parameter) and not isinstance(value, Parameter):
                        value = Parameter(value, requires_grad=param.requires_grad)
                    elif isinstance(param, Parameter):
                        value.requires_grad_(param.requires_grad)
                    setattr(self, name, value)
                else:
                    param.copy_(value)
        except Exception as ex:  # noqa: BLE001 - reported with the other load errors, as torch
            error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in '
                              f"the model are {param.size()} and whose dimensions in the "
                              f"checkpoint are {value.size()}, an exception occurred : "
                              f"{ex.args}.")

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from state_dict; returns (missing_keys, unexpected_keys).

        With strict=True, missing or unexpected keys raise RuntimeError (torch's message)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata
        _load_tree(self, state_dict, "", metadata, assign, missing, unexpected, errors)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # --- traversal ------------------------------------------------------------------------------
    def _named_members(self, get_members: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (module_prefix + "." + k if module_prefix else k), v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """Pre-order walk of the module tree: ('', self), then ('child', ...), ..."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                                remove_duplicate)

    # --- modes and gradients --------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            g = p._grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
                continue
            if g.grad_fn is not None:
                g.detach_()
            else:
                g.requires_grad_(False)
            g.zero_()

    # --- printing -------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The layer's settings, printed inside its parentheses; override in subclasses."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return self._get_name() + "(" + body + ")"

    def __dir__(self) -> list[str]:
        keys = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules,
                *self._buffers]
        return sorted(k for k in keys if not k[0].isdigit())

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's calls in place (retrograd.compile's arguments)."""
        from retrograd._compile import compile as compile_

        compile_(self, *args, **kwargs)



def _discard(name: str, *tables: Any) -> None:
    for table in tables:
        if name in table:
            if isinstance(table, dict):
                del table[name]
            else:
                table.discard(name)


def _load_tree(module: Module, local_state: dict, prefix: str, metadata: Any, assign: bool,
               missing: list, unexpected: list, errors: list) -> None:
    """load_state_dict's walk: load `module`'s own state, then each child's slice of it."""
    local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
    if assign:
        local_metadata["assign_to_params_buffers"] = assign
    module._load_from_state_dict(local_state, prefix, local_metadata, True, missing, unexpected,
                                 errors)
    for name, child in module._modules.items():
        if child is None:
            continue
        child_prefix = prefix + name + "."
        child_state = {k: v for k, v in local_state.items() if k.startswith(child_prefix)}
        _load_tree(child, child_state, child_prefix, metadata, assign, missing, unexpected,
                   errors)
    keys = _IncompatibleKeys(missing, unexpected)
    for hook in module._load_state_dict_post_hooks.values():
        if hook(module, keys) is not None:
            raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` "
                                 "are not expected to return new values, if incompatible_keys "
                                 "need to be modified, it should be done inplace.")


def _call_with_hooks(module: Module, args: tuple, kwargs: dict) -> Any:
    """Module.__call__ when hooks exist: pre-hooks, backward-hook wrapping, forward, hooks."""
    called_always: set[int] = set()
    result = None
    try:
        full_hooks, legacy_hooks = ([], [])
        if module._backward_hooks or _global_backward_hooks:
            full_hooks, legacy_hooks = module._get_backward_hooks()
        pre_hooks = []
        if module._backward_pre_hooks or _global_backward_pre_hooks:
            pre_hooks = module._get_backward_pre_hooks()
        args, kwargs = _run_forward_pre_hooks(module, args, kwargs)
        bw_hook = None
        if full_hooks or pre_hooks:
            bw_hook = BackwardHook(module, full_hooks, pre_hooks)
            args = bw_hook.setup_input_hook(args)
        result = module.forward(*args, **kwargs)
        for hook_id, hook in (*_global_forward_hooks.items(), *module._forward_hooks.items()):
            if hook_id in module._forward_hooks_always_called or \
                    hook_id in _global_forward_hooks_always_called:
                called_always.add(hook_id)
            if hook_id in module._forward_hooks_with_kwargs or \
                    hook_id in _global_forward_hooks_with_kwargs:
                out = hook(module, args, kwargs, result)
            else:
                out = hook(module, args, result)
            if out is not None:
                result = out
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                _ws.warn("For backward hooks to be called, module output should be a "
                         f"Tensor or a tuple of Tensors but received {type(result)}",
                         stacklevel=3)
            result = bw_hook.setup_output_hook(result)
        if legacy_hooks:
            _attach_legacy_backward_hooks(module, legacy_hooks, args, result)
        return result
    except Exception:
        _run_always_called_hooks(module, args, kwargs, result, called_always)
        raise


def _run_forward_pre_hooks(module: Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    for hook_id, hook in (*_global_forward_pre_hooks.items(),
                          *module._forward_pre_hooks.items()):
        if hook_id in module._forward_pre_hooks_with_kwargs:
            out = hook(module, args, kwargs)
            if out is not None:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {out}.")
                args, kwargs = out
        else:
            out = hook(module, args)
            if out is not None:
                args = out if isinstance(out, tuple) else (out,)
    return args, kwargs


def _run_always_called_hooks(module: Module, args: tuple, kwargs: dict, result: Any,
                             called: set[int]) -> None:
    """After forward raised: run the always_call forward hooks that did not run yet."""
    for hook_id, hook in _global_forward_hooks.items():
        if hook_id in _global_forward_hooks_always_called and hook_id not in called:
            try:
                out = hook(module, args, result)
                result = out if out is not None else result
            except Exception as e:  # noqa: BLE001 - torch silences these with a warning
                _ws.warn("global module forward hook with ``always_call=True`` raised an "
                         f"exception that was silenced as another error was raised in "
                         f"forward: {e}", stacklevel=3)
    for hook_id, hook in module._forward_hooks.items():
        if hook_id in module._forward_hooks_always_called and hook_id not in called:
            try:
                if hook_id in module._forward_hooks_with_kwargs:
                    out = hook(module, args, kwargs, result)
                else:
                    out = hook(module, args, result)
                result = out if out is not None else result
            except Exception as e:  # noqa: BLE001 - torch silences these with a warning
                _ws.warn("module forward hook with ``always_call=True`` raised an exception "
                         f"that was silenced as another error was raised in forward: {e}",
                         stacklevel=3)


def _attach_legacy_backward_hooks(module: Module, hooks: list, args: tuple,
                                  result: Any) -> None:
    """register_backward_hook's hooks: post-hooks on the grad_fn of the (first) output."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) \
            if isinstance(var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is not None:
        for hook in hooks:
            grad_fn.register_hook(_WrappedHook(hook, module))
        _warn_legacy_backward_hook(args, result, grad_fn)


_LEGACY_HOOK_WARNINGS = {
    "output": "Using non-full backward hooks on a Module that does not return a single Tensor "
              "or a tuple of Tensors is deprecated and will be removed in future versions. This "
              "hook will be missing some of the grad_output. Please use "
              "register_full_backward_hook to get the documented behavior.",
    "input": "Using non-full backward hooks on a Module that does not take as input a single "
             "Tensor or a tuple of Tensors is deprecated and will be removed in future versions. "
             "This hook will be missing some of the grad_input. Please use "
             "register_full_backward_hook to get the documented behavior.",
    "nested": "Using a non-full backward hook when outputs are nested in python data structure "
              "is deprecated and will be removed in future versions. This hook will be missing "
              "some grad_output.",
    "nodes": "Using a non-full backward hook when outputs are generated by different autograd "
             "Nodes is deprecated and will be removed in future versions. This hook will be "
             "missing some grad_output. Please use register_full_backward_hook to get the "
             "documented behavior.",
    "forward": "Using a non-full backward hook when the forward contains multiple autograd "
               "Nodes is deprecated and will be removed in future versions. This hook will be "
               "missing some grad_input. Please use register_full_backward_hook to get the "
               "documented behavior.",
}


def _legacy_hook_problem(inputs: Any, result: Any, grad_fn: Any) -> str | None:
    """Why a non-full backward hook will see incomplete gradients (torch's cases), or None."""
    outs = (result,) if isinstance(result, Tensor) else result
    if not (isinstance(outs, tuple) and all(isinstance(r, Tensor) for r in outs)):
        return "output"
    ins = (inputs,) if isinstance(inputs, Tensor) else inputs
    if not (isinstance(ins, tuple) and all(isinstance(i, Tensor) for i in ins)):
        return "input"
    out_fns = {id(r.grad_fn) for r in outs if r.grad_fn is not None}
    if not out_fns or (len(out_fns) == 1 and id(grad_fn) not in out_fns):
        return "nested"
    if len(out_fns) > 1:
        return "nodes"
    in_fns = {id(i.grad_fn) for i in ins if i.grad_fn is not None}
    if in_fns != {id(fn) for fn, _ in grad_fn.next_functions}:  # (None counts, as in torch)
        return "forward"
    return None


def _warn_legacy_backward_hook(inputs: Any, result: Any, grad_fn: Any) -> None:
    problem = _legacy_hook_problem(inputs, result, grad_fn)
    if problem is not None:
        _ws.warn(_LEGACY_HOOK_WARNINGS[problem], FutureWarning, stacklevel=4)
