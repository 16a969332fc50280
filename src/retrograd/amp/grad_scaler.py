"""GradScaler: loss scaling for mixed-precision training, with torch.amp.GradScaler's API.

The scale multiplies the loss so that small gradients survive narrow dtypes; unscale_ divides
the gradients back in place (noting any inf/nan), step skips the optimizer step when one was
found, and update shrinks the scale after such a step or grows it after growth_interval clean
steps in a row. The scale is a 0-dim float32 tensor and the growth tracker a 0-dim int32 one,
updated with float32 arithmetic as torch's _amp_update_scale_ does.
"""

from __future__ import annotations

from collections import abc, defaultdict
from enum import Enum
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor, _wrap

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _bump(t: Tensor) -> None:
    vc = t._version_counter
    if vc is not None:
        vc.version += 1


class GradScaler:
    """torch.amp.GradScaler. `device` is 'cpu' (or 'cuda', which is not available here: the
    scaler then warns and disables itself, as torch does without CUDA). A disabled scaler is a
    pass-through: scale returns its input, step calls optimizer.step, the rest do nothing."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            _ws.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                     "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None  # made on the first scale()
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: defaultdict = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier " \
              "in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self) -> None:
        self._scale = _wrap(np.array(self._init_scale, dtype=np.float32))
        self._growth_tracker = _wrap(np.array(self._init_growth_tracker, dtype=np.int32))

    # --- scaling -----------------------------------------------------------------------------
    def scale(self, outputs: Any) -> Any:
        """outputs * scale, for a tensor or (nested) iterables of tensors."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._lazy_init_scale_growth_tracker()
        scale = self._scale
        if isinstance(outputs, Tensor):
            return outputs * scale

        def apply_scale(val: Any) -> Any:
            if isinstance(val, Tensor):
                return val * scale
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(iterable)
                return iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale: Tensor, found_inf: Tensor,
                        allow_fp16: bool) -> dict[str, Tensor]:
        """Multiplies every gradient by inv_scale in place; found_inf becomes 1 if any
        gradient held an inf or nan."""
        inv = inv_scale._data.item()
        non_finite = False
        for group in optimizer.param_groups:
            for param in group["params"]:
                if not isinstance(param, Tensor):
                    raise AssertionError(
                        f"expected param to be torch.Tensor, got {type(param).__name__}")
                grad = param._grad
                if grad is None:
                    continue
                if not allow_fp16 and grad.dtype is D.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                g = grad._data
                if not non_finite and not np.isfinite(g).all():
                    non_finite = True
                if inv != 1.0:
                    # computed in float32 (float64 for float64 grads) like torch's kernel
                    ct = np.float64 if g.dtype == np.float64 else np.float32
                    np.multiply(g, ct(inv), out=g, dtype=ct, casting="unsafe")
                    _bump(grad)
        if non_finite:
            found_inf._data[()] = 1.0
        return {"cpu": found_inf}

    def unscale_(self, optimizer) -> None:
        """Divides optimizer's gradients by the scale (once per step), recording infs/nans."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # the reciprocal in float64, then rounded to float32, as torch does
        inv_scale = _wrap(np.array(1.0 / self._scale._data.astype(np.float64).item(),
                                   dtype=np.float32))
        found_inf = _wrap(np.array(0.0, dtype=np.float32))
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale,
                                                                       found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state: dict[str, Any], *args: Any,
                        **kwargs: Any):
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args: Any, **kwargs: Any):
        """Unscales the gradients (unless unscale_ was called) and runs optimizer.step unless
        they held an inf or nan; returns what optimizer.step returned, or None if skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Ends the iteration: sets the scale to new_scale if given, else backs it off if any
        step this iteration found an inf/nan, or grows it after growth_interval clean ones."""
        if not self._enabled:
            return
        scale, growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale._data[()] = new_scale
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if not isinstance(new_scale, Tensor) or new_scale.device.type != "cpu":
                    raise AssertionError(reason)
                if new_scale.numel() != 1 or new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale._data[()] = new_scale._data.reshape(()).astype(np.float32)
            _bump(scale)
        else:
            found_infs = [found_inf for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = sum(f._data.item() for f in found_infs)
            self._update_scale(found != 0)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _update_scale(self, found_inf: bool) -> None:
        s, tracker = self._scale._data, self._growth_tracker._data
        f32 = np.float32
        if found_inf:
            s[()] = s * f32(self._backoff_factor)
            tracker[()] = 0
        else:
            successful = int(tracker) + 1
            if successful == self._growth_interval:
                grown = s * f32(self._growth_factor)
                if np.isfinite(grown):
                    s[()] = grown
                tracker[()] = 0
            else:
                tracker[()] = successful
        _bump(self._scale)
        _bump(self._growth_tracker)

    # --- accessors and state -----------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else int(self._growth_tracker.item()))
        return 0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker as Python
        numbers; {} when disabled."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale._data[()] = state_dict["scale"]
            _bump(self._scale)
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker._data[()] = state_dict["_growth_tracker"]
            _bump(self._growth_tracker)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            # the tensors are rebuilt lazily from the numbers
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer) -> dict[str, Tensor]:
        self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = _wrap(np.array(1.0, dtype=np.float32))
        found_inf = _wrap(np.array(0.0, dtype=np.float32))
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = (
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True))
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer) -> dict[str, Tensor]:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
