"""Optimizer: param groups, per-parameter state, state_dict round trips and step hooks.

The arithmetic of every update (NOTE [Optimizer arithmetic]) is in retrograd._ops.optim_kernels.
"""

from __future__ import annotations

import functools
from collections import OrderedDict, defaultdict
from collections.abc import Callable
from copy import deepcopy
from itertools import chain
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._autograd.hooks import RemovableHandle
from retrograd._autograd.state import state as _grad_state
from retrograd._ops.optim_kernels import (
    _add_ as _add_,
)
from retrograd._ops.optim_kernels import (
    _add_scalar_ as _add_scalar_,
)
from retrograd._ops.optim_kernels import (
    _addc as _addc,
)
from retrograd._ops.optim_kernels import (
    _addcdiv_ as _addcdiv_,
)
from retrograd._ops.optim_kernels import (
    _addcmul_ as _addcmul_,
)
from retrograd._ops.optim_kernels import (
    _added as _added,
)
from retrograd._ops.optim_kernels import (
    _as_add_scalar as _as_add_scalar,
)
from retrograd._ops.optim_kernels import (  # the arithmetic, used by every optimizer
    _ctype as _ctype,
)
from retrograd._ops.optim_kernels import (
    _lerp_ as _lerp_,
)
from retrograd._ops.optim_kernels import (
    _mul_ as _mul_,
)
from retrograd._ops.optim_kernels import (
    _plus_scalar as _plus_scalar,
)
from retrograd._ops.optim_kernels import (
    _round as _round,
)
from retrograd._ops.optim_kernels import (
    _scratch as _scratch,
)
from retrograd._ops.optim_kernels import (
    adam_moments,
)
from retrograd._tensor import Tensor, _wrap

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
           "required"]

StateDict = dict[str, Any]


class _RequiredParameter:
    """Marks a hyperparameter every param group must give (torch.optim.optimizer.required)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_pre_hooks: OrderedDict = OrderedDict()
_global_post_hooks: OrderedDict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """A hook(optimizer, args, kwargs) run before every optimizer's step."""
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """A hook(optimizer, args, kwargs) run after every optimizer's step."""
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


# --- helpers shared by the algorithms (the arithmetic: retrograd._ops.optim_kernels) --------

class _Typed:
    """Hyperparameters as NumPy scalars of each computation type, converted once per step
    (a NumPy scalar costs as much to make as a small ufunc call)."""

    __slots__ = ("values", "cache")

    def __init__(self, *values: float) -> None:
        self.values = values
        self.cache: dict[type, tuple] = {}

    def __call__(self, ct: type) -> tuple:
        typed = self.cache.get(ct)
        if typed is None:
            typed = self.cache[ct] = tuple(ct(v) for v in self.values)
        return typed


def _bump(t: Tensor) -> None:
    vc = t._version_counter
    if vc is not None:
        vc.version += 1


def _zeros_like(p: Tensor) -> Tensor:
    return _wrap(np.zeros_like(p._data))


def _step_tensor(value: float = 0.0, fused: bool = False) -> Tensor:
    """The per-parameter step counter: a 0-dim float tensor (float64 under a float64 default;
    always float32 for the fused kernels, as torch's)."""
    dt = np.float64 if D.get_default_dtype() is D.float64 and not fused else np.float32
    return _wrap(np.array(value, dtype=dt))


def _incr_step(step_t: Tensor) -> float:
    """step_t += 1; returns the new step as a Python float."""
    a = step_t._data
    a[()] = a.item() + 1  # rounds to the counter's dtype as torch's `step_t += 1` does
    _bump(step_t)
    return a.item()


def _to_scalar(x) -> float:
    """A hyperparameter (number or 1-element tensor) as a Python number."""
    return x.item() if isinstance(x, Tensor) else x


def _lr_operand(x):
    """A hyperparameter as torch's optimizers compute with it: a number stays a number, a
    tensor becomes a 0-dim tensor (so its arithmetic happens at the tensor's precision)."""
    return x.squeeze() if isinstance(x, Tensor) and x.dim() != 0 else x


def _check_flags(defaults: dict[str, Any]) -> None:
    """Flags that select torch's other kernels: they are accepted (the math is the same here),
    with torch's conflicts rejected; differentiable steps are not available."""
    fused, foreach = defaults.get("fused"), defaults.get("foreach")
    if defaults.get("differentiable"):
        if fused:
            raise RuntimeError("`fused` does not support `differentiable`")
        raise NotImplementedError("retrograd.optim: differentiable=True is not supported; "
                                  "optimizer steps do not record autograd history")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_beta_range(betas: tuple) -> None:
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _check_hyperparameters(lr: Any, *named: tuple[str, Any]) -> None:
    """torch's constructor checks, in the order given: a tensor lr has one element, lr and each
    named value are non-negative (rho at most 1; betas each in [0, 1))."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    for label, value in named:
        if label == "betas":
            _check_beta_range(value)
        elif not (0.0 <= value <= 1.0 if label == "rho" else 0.0 <= value):
            raise ValueError(f"Invalid {label} value: {value}")


def _typename(obj: Any) -> str:
    """torch.typename: a tensor's legacy type name, else the object's qualified type name."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__ or ""
    return cls.__qualname__ if module in ("", "builtins") else f"{module}.{cls.__qualname__}"


# --- step wrapper: hooks, grad mode, re-entrancy ----------------------------------------------

def _run_pre_hooks(opt: Optimizer, step: Callable, args: tuple, kwargs: dict):
    for hook in chain(_global_pre_hooks.values(), opt._optimizer_step_pre_hooks.values()):
        result = hook(opt, args, kwargs)
        if result is not None:
            if isinstance(result, tuple) and len(result) == 2:
                args, kwargs = result
            else:
                raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                   f"new_kwargs), but got {result}.")
    return args, kwargs


def _hooked_step(step: Callable) -> Callable:
    """Wraps a subclass's step: step hooks around it, grad mode off inside it.

    A subclass step that calls super().step() runs the hooks once (the outer call only).
    """

    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any):
        if self.__dict__.get("_in_step"):
            return step(self, *args, **kwargs)
        if _global_pre_hooks or self._optimizer_step_pre_hooks:
            args, kwargs = _run_pre_hooks(self, step, args, kwargs)
        prev = _grad_state.grad_enabled
        self._in_step = True
        try:
            _grad_state.grad_enabled = False
            with np.errstate(all="ignore"):  # inf/nan propagate silently, as in torch
                out = step(self, *args, **kwargs)
        finally:
            _grad_state.grad_enabled = prev
            self._in_step = False
        self._opt_called = True  # lets lr schedulers check the call order
        if _global_post_hooks or self._optimizer_step_post_hooks:
            for hook in chain(self._optimizer_step_post_hooks.values(),
                              _global_post_hooks.values()):
                hook(self, args, kwargs)
        return out

    wrapper._hooked = True
    return wrapper


def _eval_closure(closure: Callable | None):
    """Runs a step's closure with grad mode on (steps otherwise run under no_grad)."""
    if closure is None:
        return None
    prev = _grad_state.grad_enabled
    _grad_state.grad_enabled = True
    try:
        return closure()
    finally:
        _grad_state.grad_enabled = prev


def _adam_moments(p: Tensor, state: dict, ct: type, one_minus_beta1, beta2, one_minus_beta2,
                  wd, shrink, decay: bool, decoupled: bool, maximize: bool) -> tuple:
    """The step Adam, NAdam and RAdam share (optim_kernels.adam_moments) on a parameter and its
    state, versions bumped. Returns the gradient used, the moments' arrays and the scratch
    buffer, which the update rules go on with."""
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    m, v = exp_avg._data, exp_avg_sq._data
    g, tmp = adam_moments(p._data, p._grad._data, m, v, ct, one_minus_beta1, beta2,
                          one_minus_beta2, wd, shrink, decay, decoupled, maximize)
    _bump(exp_avg)
    _bump(exp_avg_sq)
    return g, m, v, tmp


class Optimizer:
    """Base class of all optimizers (torch.optim.Optimizer).

    Args:
        params: an iterable of tensors, of (name, tensor) pairs, or of dicts defining param
            groups.
        defaults: the default value of each hyperparameter, used by groups that don't set it.
    """

    # the hook signatures torch names (self, args, kwargs) -> (args, kwargs) | None / None
    OptimizerPreHook = Callable[..., "tuple[tuple, dict] | None"]
    OptimizerPostHook = Callable[..., None]
    # what subclasses' steps are wrapped with (torch's decorator of the same name)
    profile_hook_step = staticmethod(_hooked_step)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_state_dict_post_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: OrderedDict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: OrderedDict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # --- pickling / deepcopy ---------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.defaults.setdefault("differentiable", False)


    def _lazy_state(self, p: Tensor, buffers: tuple, counters: tuple = (),
                    fused: bool = False) -> dict:
        """The state of `p`, made on its first step in torch's key order: the step counter,
        the other counters (name, start value; 0-dim tensors), then zero buffers like `p`."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor(fused=fused)
            for name, value in counters:
                state[name] = _step_tensor(value)
            for name in buffers:
                state[name] = _zeros_like(p)
        return state

    def _restore(self, defaults: tuple, counters: tuple = ("step",)) -> None:
        """After unpickling an older optimizer: fill group options it did not know and turn
        plain-number counters in the state back into tensors (torch keeps them as tensors)."""
        for group in self.param_groups:
            for key, value in defaults:
                group.setdefault(key, value)
            for p in group["params"]:
                p_state = self.state.get(p, {})
                for key in counters if p_state else ():
                    if not isinstance(p_state[key], Tensor):
                        p_state[key] = _step_tensor(float(p_state[key]))
    def __repr__(self) -> str:
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        return "\n".join(lines) + "\n)"

    # --- param groups ------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Adds a group of parameters with its own hyperparameters (defaults fill the rest)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        self._split_names(param_group, params)
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf
                                                                        or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        self._check_new_group(param_group)
        self.param_groups.append(param_group)

    @staticmethod
    def _split_names(param_group: dict[str, Any], params: list) -> None:
        """(name, tensor) pairs become params plus a 'param_names' list."""
        names = [p[0] for p in params if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names

    def _check_new_group(self, param_group: dict[str, Any]) -> None:
        params = param_group["params"]
        ids = {id(p) for p in params}
        if len(params) != len(ids):
            _ws.warn("optimizer contains a parameter group with duplicate parameters; in "
                     "future, this will cause an error; see "
                     "github.com/pytorch/pytorch/issues/40967 for more information",
                     stacklevel=4)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")

    # --- gradients ---------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients: to None (default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                    continue
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                if g._data.flags.writeable:
                    g._data.fill(0)
                else:  # e.g. a broadcast view: give it storage of its own
                    g._data = np.zeros(g._data.shape, g._data.dtype)
                _bump(g)

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        raise NotImplementedError

    # --- hooks -------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before step()."""
        return self._add_hook(self._optimizer_step_pre_hooks, hook, False)

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(optimizer, args, kwargs) -> None, after step()."""
        return self._add_hook(self._optimizer_step_post_hooks, hook, False)

    def register_state_dict_pre_hook(self, hook: Callable,
                                     prepend: bool = False) -> RemovableHandle:
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable,
                                      prepend: bool = False) -> RemovableHandle:
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable,
                                          prepend: bool = False) -> RemovableHandle:
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable,
                                           prepend: bool = False) -> RemovableHandle:
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _add_hook(table: OrderedDict, hook: Callable, prepend: bool) -> RemovableHandle:
        handle = RemovableHandle(table)
        table[handle.id] = hook
        if prepend:
            table.move_to_end(handle.id, last=False)
        return handle

    # --- state dict --------------------------------------------------------------------------
    def state_dict(self) -> StateDict:
        """{'state': {index: per-parameter state}, 'param_groups': [group with 'params' as
        indices]}; indices number the parameters in group order. Tensors are not copied."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        out = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, out)
            if result is not None:
                out = result
        return out

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Loads a state_dict() of an optimizer whose groups have the same sizes."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        new_state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                new_state[param] = _cast_state(param, v, _group_flags(k, saved_groups))
            else:
                new_state[k] = v
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": new_state, "param_groups": saved_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)


def _group_flags(param_id: int, groups: list[dict[str, Any]]) -> bool:
    """Whether the saved group holding param_id keeps 'step' on the param's device (fused or
    capturable), in which case the step counter is cast to float32 like the state."""
    for g in groups:
        if param_id in g["params"]:
            return bool(g.get("fused", False) or g.get("capturable", False))
    return False


def _cast_state(param: Tensor, value: Any, step_as_state: bool, key: Any = None) -> Any:
    """A loaded state value for `param`: floating tensors take the param's dtype (the step
    counter keeps its own unless fused/capturable); containers are rebuilt."""
    if isinstance(value, Tensor):
        if key == "step":
            if step_as_state and value.dtype is not D.float32:
                return _wrap(value._data.astype(np.float32))
            return value
        if param.is_floating_point() and value.dtype is not param.dtype:
            return _wrap(value._data.astype(param.dtype.np))
        return value
    if isinstance(value, dict):
        return {k: _cast_state(param, v, step_as_state, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v, step_as_state) for v in value)
    return value
