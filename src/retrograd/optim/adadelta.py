"""Adadelta: steps scaled by the ratio of running RMS of past updates to that of gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._tensor import Tensor
from retrograd.optim.optimizer import (
    Optimizer,
    _add_,
    _addcmul_,
    _added,
    _bump,
    _check_flags,
    _check_hyperparameters,
    _ctype,
    _eval_closure,
    _incr_step,
    _mul_,
    _plus_scalar,
    _scratch,
    _to_scalar,
    _Typed,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """torch.optim.Adadelta: delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * grad,
    both averages decaying with rho; param -= lr * delta."""

    def __init__(self, params: Any, lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_hyperparameters(lr, ("rho", rho), ("epsilon", eps),
                               ("weight_decay", weight_decay))
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        _check_flags(defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore((("foreach", None), ("maximize", False),
                       ("differentiable", False), ("capturable", False)))

    def _state_of(self, p: Tensor) -> dict[str, Any]:
        return self._lazy_state(p, ("square_avg", "acc_delta"))

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            rho, wd = group["rho"], group["weight_decay"]
            typed = _Typed(-_to_scalar(group["lr"]), rho, 1 - rho, group["eps"], wd)
            flags = (wd != 0, group["maximize"])
            for p in group["params"]:
                if p._grad is not None:
                    self._update(p, self._state_of(p), typed, *flags)
        return loss

    @staticmethod
    def _update(p: Tensor, state: dict[str, Any], typed: _Typed, decay: bool,
                maximize: bool) -> None:
        d = p._data
        ct = _ctype(d)
        neg_lr, rho, one_minus_rho, eps, wd = typed(ct)
        _incr_step(state["step"])
        g = p._grad._data
        if maximize:
            g = np.negative(g, out=np.empty_like(g))
        if decay:
            g = _added(g, d, wd, ct)
        tmp = _scratch(d, ct)
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        sq, acc = square_avg._data, acc_delta._data
        _mul_(sq, rho, ct)
        _addcmul_(sq, g, g, one_minus_rho, ct, tmp)
        _bump(square_avg)
        # std and delta are new tensors of the param's dtype, each op rounding to it
        std = _plus_scalar(sq, eps, ct)
        np.sqrt(std, out=std, dtype=ct, casting="unsafe")
        delta = _plus_scalar(acc, eps, ct)
        np.sqrt(delta, out=delta, dtype=ct, casting="unsafe")
        np.divide(delta, std, out=delta, dtype=ct, casting="unsafe")
        np.multiply(delta, g, out=delta, dtype=ct, casting="unsafe")
        _mul_(acc, rho, ct)
        _addcmul_(acc, delta, delta, one_minus_rho, ct, tmp)
        _bump(acc_delta)
        _add_(d, delta, neg_lr, ct, tmp)
        _bump(p)
