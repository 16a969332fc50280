"""Adamax: Adam with the second moment replaced by an exponentially weighted infinity norm."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._tensor import Tensor
from retrograd.optim.optimizer import (
    Optimizer,
    _add_scalar_,
    _addcdiv_,
    _added,
    _bump,
    _check_flags,
    _check_hyperparameters,
    _ctype,
    _eval_closure,
    _incr_step,
    _lerp_,
    _mul_,
    _scratch,
    _to_scalar,
    _Typed,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """torch.optim.Adamax: exp_inf = max(beta2 * exp_inf, |grad| + eps), then
    param -= lr / (1 - beta1 ** step) * exp_avg / exp_inf."""

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_hyperparameters(lr, ("epsilon", eps), ("betas", betas),
                               ("weight_decay", weight_decay))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        _check_flags(defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore((("foreach", None), ("maximize", False),
                       ("differentiable", False), ("capturable", False)))

    def _state_of(self, p: Tensor) -> dict[str, Any]:
        return self._lazy_state(p, ("exp_avg", "exp_inf"))

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            wd = group["weight_decay"]
            typed = _Typed(1 - beta1, beta2, group["eps"], wd)
            per_step: dict[float, _Typed] = {}  # -clr, per step count
            flags = (wd != 0, group["maximize"])
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._state_of(p)
                step = _incr_step(state["step"])
                neg_clr = per_step.get(step)
                if neg_clr is None:
                    neg_clr = per_step[step] = _Typed(-(lr / (1 - beta1 ** step)))
                self._update(p, state, typed, neg_clr, *flags)
        return loss

    @staticmethod
    def _update(p: Tensor, state: dict[str, Any], typed: _Typed, neg_clr: _Typed,
                decay: bool, maximize: bool) -> None:
        d = p._data
        ct = _ctype(d)
        one_minus_beta1, beta2, eps, wd = typed(ct)
        g = p._grad._data
        if maximize:
            g = np.negative(g, out=np.empty_like(g))
        if decay:
            g = _added(g, d, wd, ct)
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        m, u = exp_avg._data, exp_inf._data
        tmp = _scratch(d, ct)
        _lerp_(m, g, one_minus_beta1, ct, tmp)
        _bump(exp_avg)
        _mul_(u, beta2, ct)
        # grad.abs().add_(eps): a new tensor of the gradient's dtype
        bound = np.abs(g, out=np.empty_like(g))
        _add_scalar_(bound, eps, ct)
        np.maximum(u, bound, out=u)
        _bump(exp_inf)
        _addcdiv_(d, m, u, neg_clr(ct)[0], ct, tmp)
        _bump(p)

