"""autocast: regions where listed ops run in a lower-precision dtype (NOTE [Autocast] in
retrograd.amp._policy), with torch's context-manager, decorator and state-function API."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from retrograd import _dtype as D
from retrograd import _errors as E
from retrograd import _warning_site as _ws
from retrograd._ops import dispatch
from retrograd.amp._policy import AutocastMode

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                 "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")
_AUTOCAST_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "maia",
                     "privateuseone")
_DEFAULT_DTYPE = {"cuda": D.float16, "mps": D.float16, "mtia": D.float16, "maia": D.float16}


class _State(threading.local):
    """Autocast state, per thread as in torch."""

    def __init__(self) -> None:
        self.enabled: dict[str, bool] = dict.fromkeys(_AUTOCAST_DEVICES, False)
        self.dtype = {d: _DEFAULT_DTYPE.get(d, D.bfloat16) for d in _AUTOCAST_DEVICES}
        self.cache_enabled = True
        self.nesting = 0
        self.cache: dict[int, tuple] = {}


_state = _State()
_mode = AutocastMode(_state)
_enabled_threads: set[int] = set()  # the mode is on the stack while this is non-empty
_lock = threading.Lock()


def _device_type(device_type: str) -> str:
    name = device_type.split(":")[0]
    if name not in _DEVICE_TYPES:
        raise RuntimeError(E.DEVICE_STRING.format(device_type))
    if name not in _AUTOCAST_DEVICES:
        raise RuntimeError(E.AUTOCAST_DEVICE.format(device_type))
    return name


def _sync_mode() -> None:
    """Puts the mode on the dispatch stack while any thread has CPU autocast on."""
    ident = threading.get_ident()
    with _lock:
        if _state.enabled["cpu"]:
            _enabled_threads.add(ident)
        else:
            _enabled_threads.discard(ident)
        on = _mode in dispatch.mode_stack
        if _enabled_threads and not on:
            dispatch.mode_stack.append(_mode)
            dispatch.autocast = _mode
        elif not _enabled_threads and on:
            dispatch.mode_stack.remove(_mode)
            dispatch.autocast = None


# --- state functions (torch.is_autocast_enabled etc.) -------------------------------------------

def deprecated_device_alias(device: str, name: str) -> None:
    """The FutureWarning of torch.<device>.amp.<name> (cuda's and cpu's aliases of this
    module's classes), pointing at the caller of the alias's constructor."""
    _ws.warn(f"`torch.{device}.amp.{name}(args...)` is deprecated. Please use "
             f"`torch.amp.{name}('{device}', args...)` instead.", FutureWarning, stacklevel=3)


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast supports `device_type` ('cpu', 'cuda', ...)."""
    name = device_type.split(":")[0]
    if name not in _DEVICE_TYPES:
        raise RuntimeError(E.DEVICE_STRING.format(device_type))
    return name in _AUTOCAST_DEVICES


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for `device_type` (without one: for CUDA, as torch)."""
    return _state.enabled[_device_type(device_type or "cuda")]


def set_autocast_enabled(device_type: str, enabled: bool | None = None) -> None:
    if enabled is None:  # the deprecated one-argument form sets CUDA's
        device_type, enabled = "cuda", device_type
    _state.enabled[_device_type(device_type)] = bool(enabled)
    _sync_mode()


def get_autocast_dtype(device_type: str) -> D.dtype:
    """The dtype lower-precision ops produce under autocast on `device_type`."""
    return _state.dtype[_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype: D.dtype) -> None:
    _state.dtype[_device_type(device_type)] = dtype


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


def _deprecated(old: str, new: str, fn: Callable, *args):
    _ws.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.",
             DeprecationWarning, stacklevel=3)
    return fn(*args)


def is_autocast_cpu_enabled() -> bool:
    return _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')",
                       is_autocast_enabled, "cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled", "set_autocast_enabled('cpu', enabled)",
                set_autocast_enabled, "cpu", enabled)


def get_autocast_cpu_dtype() -> D.dtype:
    return _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')",
                       get_autocast_dtype, "cpu")


def set_autocast_cpu_dtype(dtype: D.dtype) -> None:
    _deprecated("set_autocast_cpu_dtype", "set_autocast_dtype('cpu', dtype)",
                set_autocast_dtype, "cpu", dtype)


def get_autocast_gpu_dtype() -> D.dtype:
    return _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')",
                       get_autocast_dtype, "cuda")


def set_autocast_gpu_dtype(dtype: D.dtype) -> None:
    _deprecated("set_autocast_gpu_dtype", "set_autocast_dtype('cuda', dtype)",
                set_autocast_dtype, "cuda", dtype)


# --- the context manager ---------------------------------------------------------------------

class autocast:
    """torch.autocast: inside the region, ops of the lower-precision list run in `dtype`
    (default bfloat16 on CPU) and ops of the float32 list in float32. Usable as a context
    manager or a decorator; regions nest, and autocast(enabled=False) turns casting off inside.
    There is no CUDA here: autocast('cuda') warns and does nothing, as torch does without CUDA.
    """

    def __init__(self, device_type: str, dtype: D.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(E.AUTOCAST_DEVICE_TYPE.format(type(device_type)))
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(E.AUTOCAST_DEVICE.format(device_type))
        self._cache_enabled = (is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled:
            if device_type == "cuda":
                _ws.warn(E.AUTOCAST_NO_CUDA, stacklevel=2)
                enabled = False
            elif self.fast_dtype not in (D.bfloat16, D.float16):
                _ws.warn(E.AUTOCAST_CPU_DTYPE.replace("CPU", device_type.upper()),
                         stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self) -> autocast:
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func: Callable) -> Callable:
        if not callable(func):
            raise TypeError(E.AUTOCAST_NOT_CALLABLE.format(type(func).__name__))
        args = (self.device, self.fast_dtype, self._enabled, self._cache_enabled)

        @functools.wraps(func)
        def decorated(*a: Any, **kw: Any) -> Any:
            # a fresh region per call, so that recursive calls restore the state they found
            region = autocast.__new__(type(self))
            region.device, region.fast_dtype, region._enabled, region._cache_enabled = args
            with region:
                return func(*a, **kw)

        decorated.__script_unsupported = "@autocast() decorator is not supported in script mode"
        return decorated


def _snapshot(device_type: str = "cpu") -> tuple:
    """The autocast state of `device_type` now, for `_replay` to re-enter later (checkpoint
    recomputes its function under the state its forward ran in)."""
    return (device_type, get_autocast_dtype(device_type), is_autocast_enabled(device_type),
            is_autocast_cache_enabled())


def _replay(snapshot: tuple) -> autocast:
    """A fresh region that sets the state `_snapshot` recorded (no validation: it was valid)."""
    region = autocast.__new__(autocast)
    region.device, region.fast_dtype, region._enabled, region._cache_enabled = snapshot
    return region


# --- custom autograd Functions under autocast ---------------------------------------------------

def custom_fwd(fwd: Callable | None = None, *, device_type: str,
               cast_inputs: D.dtype | None = None) -> Callable:
    """Decorates a custom Function's forward: its backward (decorated with custom_bwd) will
    run with the autocast state forward saw; with cast_inputs, forward runs with autocast off
    on its floating inputs cast to that dtype (when called inside an autocast region)."""
    if not isinstance(device_type, str):
        raise ValueError(E.AUTOCAST_DEVICE_TYPE.format(type(device_type)))
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast_floating(args, cast_inputs),
                           **_cast_floating(kwargs, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str) -> Callable:
    """Decorates a custom Function's backward (see custom_fwd)."""
    if not isinstance(device_type, str):
        raise ValueError(E.AUTOCAST_DEVICE_TYPE.format(type(device_type)))
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd


def _cast_floating(value: Any, dtype: D.dtype) -> Any:
    from retrograd._tensor import Tensor

    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() and value.dtype is not D.float64 \
            else value
    if isinstance(value, dict):
        return {k: _cast_floating(v, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_floating(v, dtype) for v in value)
    return value
