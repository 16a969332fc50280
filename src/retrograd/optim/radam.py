"""RAdam: Adam whose adaptive step is switched on and rectified by the variance of its
second-moment estimate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._tensor import Tensor
from retrograd.optim import _dispatched
from retrograd.optim.optimizer import (
    Optimizer,
    _adam_moments,
    _add_,
    _add_scalar_,
    _bump,
    _check_flags,
    _check_hyperparameters,
    _ctype,
    _eval_closure,
    _incr_step,
    _to_scalar,
    _Typed,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """torch.optim.RAdam: while the approximated simple moving average length rho_t is at most
    5 the step is plain momentum (lr * bias-corrected exp_avg); past it, Adam's adaptive step
    times the rectification term. Weight decay is L2 unless decoupled_weight_decay=True."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        _check_hyperparameters(lr, ("epsilon", eps), ("betas", betas),
                               ("weight_decay", weight_decay))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        _check_flags(defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore((("foreach", None), ("maximize", False),
                       ("differentiable", False), ("decoupled_weight_decay", False),
                       ("capturable", False)))

    def _state_of(self, p: Tensor) -> dict[str, Any]:
        return self._lazy_state(p, ("exp_avg", "exp_avg_sq"))

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            wd = group["weight_decay"]
            how = _dispatched.path(group)
            if how is not None:  # NOTE [Optimizer dispatch]
                params = [p for p in group["params"] if p._grad is not None]
                _dispatched.radam(how, params, [self._state_of(p) for p in params], lr, beta1,
                                  beta2, wd, group["eps"], group["maximize"],
                                  group["decoupled_weight_decay"])
                continue
            typed = _Typed(1 - beta1, beta2, 1 - beta2, group["eps"], wd, 1 - lr * wd, lr)
            per_step: dict[float, tuple[_Typed, bool]] = {}
            flags = (wd != 0, group["decoupled_weight_decay"], group["maximize"])
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._state_of(p)
                step = _incr_step(state["step"])
                corrections = per_step.get(step)
                if corrections is None:
                    corrections = per_step[step] = _rectification(beta1, beta2, step)
                self._update(p, state, typed, *corrections, *flags)
        return loss

    @staticmethod
    def _update(p: Tensor, state: dict[str, Any], typed: _Typed, corrections: _Typed,
                rectified: bool, decay: bool, decoupled: bool, maximize: bool) -> None:
        d = p._data
        ct = _ctype(d)
        one_minus_beta1, beta2, one_minus_beta2, eps, wd, shrink, lr = typed(ct)
        bias_correction1, bias_correction2_sqrt, rect = corrections(ct)
        g, m, v, tmp = _adam_moments(p, state, ct, one_minus_beta1, beta2, one_minus_beta2, wd,
                                     shrink, decay, decoupled, maximize)
        # every product below is a new tensor of the param's dtype, rounded to it
        update = np.empty_like(d)
        np.divide(m, bias_correction1, out=update, dtype=ct, casting="unsafe")
        np.multiply(update, lr, out=update, dtype=ct, casting="unsafe")
        if rectified:
            # bias_correction2 ** 0.5 / exp_avg_sq.sqrt().add_(eps); a number divided by a
            # tensor is the tensor's reciprocal times the number
            adaptive = np.empty_like(d)
            np.sqrt(v, out=adaptive, dtype=ct, casting="unsafe")
            _add_scalar_(adaptive, eps, ct)
            np.reciprocal(adaptive, out=adaptive, dtype=ct, casting="unsafe")
            np.multiply(adaptive, bias_correction2_sqrt, out=adaptive, dtype=ct,
                        casting="unsafe")
            np.multiply(update, adaptive, out=update, dtype=ct, casting="unsafe")
            np.multiply(update, rect, out=update, dtype=ct, casting="unsafe")
        _add_(d, update, -1.0, ct, tmp)
        _bump(p)


def _rectification(beta1: float, beta2: float, step: float) -> tuple[_Typed, bool]:
    """The step's bias corrections and, once rho_t > 5, the variance rectification term."""
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    rectified = rho_t > 5.0
    rect = 1.0
    if rectified:
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
    return _Typed(bias_correction1, bias_correction2 ** 0.5, rect), rectified
