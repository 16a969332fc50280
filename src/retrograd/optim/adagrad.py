"""Adagrad: per-coordinate learning rates from the running sum of squared gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._tensor import Tensor, _wrap
from retrograd.optim.optimizer import (
    Optimizer,
    _add_scalar_,
    _addcdiv_,
    _addcmul_,
    _added,
    _bump,
    _check_flags,
    _check_hyperparameters,
    _ctype,
    _eval_closure,
    _incr_step,
    _round,
    _scratch,
    _step_tensor,
    _to_scalar,
    _Typed,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """torch.optim.Adagrad: param -= clr * grad / (sqrt(sum of grad**2) + eps), with
    clr = lr / (1 + (step - 1) * lr_decay). State is created for every parameter up front."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_hyperparameters(lr, ("lr_decay", lr_decay), ("weight_decay", weight_decay),
                               ("initial_accumulator_value", initial_accumulator_value),
                               ("epsilon", eps))
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        _check_flags(defaults)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, initial_accumulator_value)

    def _init_state(self, p: Tensor, initial_accumulator_value: float) -> dict[str, Any]:
        state = self.state[p]
        state["step"] = _step_tensor()
        state["sum"] = _wrap(np.full_like(p._data, initial_accumulator_value))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            for key, value in (("foreach", None), ("maximize", False),
                               ("differentiable", False), ("fused", None)):
                group.setdefault(key, value)
        for s in self.state.values():
            if s and not isinstance(s.get("step"), Tensor):
                s["step"] = _step_tensor(float(s["step"]))

    def share_memory(self) -> None:
        """No-op: state lives in this process's memory (torch shares it across processes)."""

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr, lr_decay, wd = _to_scalar(group["lr"]), group["lr_decay"], group["weight_decay"]
            typed = _Typed(group["eps"], wd)
            per_step: dict[float, _Typed] = {}  # -clr, per step count
            flags = (wd != 0, group["maximize"])
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state = self._init_state(p, self.defaults["initial_accumulator_value"])
                step = _incr_step(state["step"])
                neg_clr = per_step.get(step)
                if neg_clr is None:
                    neg_clr = per_step[step] = _Typed(-(lr / (1 + (step - 1) * lr_decay)))
                self._update(p, state, typed, neg_clr, *flags)
        return loss

    @staticmethod
    def _update(p: Tensor, state: dict[str, Any], typed: _Typed, neg_clr: _Typed, decay: bool,
                maximize: bool) -> None:
        d = p._data
        ct = _ctype(d)
        eps, wd = typed(ct)
        g = p._grad._data
        if maximize:
            g = np.negative(g, out=np.empty_like(g))
        if decay:
            g = _added(g, d, wd, ct)
        tmp = _scratch(d, ct)
        state_sum = state["sum"]
        _addcmul_(state_sum._data, g, g, 1, ct, tmp)
        _bump(state_sum)
        std = _round(np.sqrt(state_sum._data, out=_scratch(d, ct), dtype=ct), d.dtype)
        _add_scalar_(std, eps, ct)
        _addcdiv_(d, g, std, neg_clr(ct)[0], ct, tmp)
        _bump(p)
