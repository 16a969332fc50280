"""NAdam: Adam with Nesterov momentum, its momentum schedule decaying with momentum_decay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._tensor import Tensor
from retrograd.optim import _dispatched
from retrograd.optim.optimizer import (
    Optimizer,
    _adam_moments,
    _add_scalar_,
    _addcdiv_,
    _bump,
    _check_flags,
    _check_hyperparameters,
    _ctype,
    _eval_closure,
    _incr_step,
    _round,
    _scratch,
    _to_scalar,
    _Typed,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """torch.optim.NAdam: mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay)); the
    running product of the mu_t (state 'mu_product') weighs the gradient and the first moment
    in the update. Weight decay is L2 unless decoupled_weight_decay=True."""

    def __init__(self, params: Any, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_hyperparameters(lr, ("epsilon", eps), ("betas", betas),
                               ("weight_decay", weight_decay), ("momentum_decay", momentum_decay))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        _check_flags(defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore((("maximize", False), ("foreach", None), ("capturable", False),
                       ("differentiable", False), ("decoupled_weight_decay", False)),
                      ("step", "mu_product"))

    def _state_of(self, p: Tensor) -> dict[str, Any]:
        return self._lazy_state(p, ("exp_avg", "exp_avg_sq"), (("mu_product", 1.0),))

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            beta1, beta2 = group["betas"]
            wd, momentum_decay = group["weight_decay"], group["momentum_decay"]
            how = _dispatched.path(group)
            if how is not None:  # NOTE [Optimizer dispatch]
                params = [p for p in group["params"] if p._grad is not None]
                _dispatched.nadam(how, params, [self._state_of(p) for p in params], lr, beta1,
                                  beta2, wd, group["eps"], momentum_decay, group["maximize"],
                                  group["decoupled_weight_decay"])
                continue
            typed = _Typed(1 - beta1, beta2, 1 - beta2, group["eps"], wd, 1 - lr * wd)
            flags = (wd != 0, group["decoupled_weight_decay"], group["maximize"])
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._state_of(p)
                step = _incr_step(state["step"])
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product = _scale_scalar_(state["mu_product"], mu)
                mu_product_next = mu_product * mu_next
                per_step = _Typed(1 - beta2 ** step, -lr * (1.0 - mu) / (1.0 - mu_product),
                                  (-lr * mu_next) / (1.0 - mu_product_next))
                self._update(p, state, typed, per_step, *flags)
        return loss

    @staticmethod
    def _update(p: Tensor, state: dict[str, Any], typed: _Typed, per_step: _Typed,
                decay: bool, decoupled: bool, maximize: bool) -> None:
        d = p._data
        ct = _ctype(d)
        one_minus_beta1, beta2, one_minus_beta2, eps, wd, shrink = typed(ct)
        bias_correction2, grad_weight, avg_weight = per_step(ct)
        g, m, v, tmp = _adam_moments(p, state, ct, one_minus_beta1, beta2, one_minus_beta2, wd,
                                     shrink, decay, decoupled, maximize)
        # exp_avg_sq.div(bias_correction2).sqrt(): new tensors of the param's dtype
        denom = _round(np.divide(v, bias_correction2, out=_scratch(v, ct), dtype=ct), d.dtype)
        np.sqrt(denom, out=denom, dtype=ct, casting="unsafe")
        _add_scalar_(denom, eps, ct)
        _addcdiv_(d, g, denom, grad_weight, ct, tmp)
        _addcdiv_(d, m, denom, avg_weight, ct, tmp)
        _bump(p)


def _scale_scalar_(t: Tensor, factor: float) -> float:
    """t *= factor for a 0-dim state tensor, computed in its own dtype; returns the new value."""
    a = t._data
    a[()] = a * a.dtype.type(factor)
    _bump(t)
    return a.item()
