"""RMSprop, optionally centered and with momentum."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._tensor import Tensor
from retrograd.optim.optimizer import (
    Optimizer,
    _add_,
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
    _lerp_,
    _mul_,
    _round,
    _scratch,
    _to_scalar,
    _Typed,
)

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """torch.optim.RMSprop: divides the gradient by the root of a running mean of its square
    (minus the squared running mean of the gradient when centered)."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_hyperparameters(lr, ("epsilon", eps), ("momentum", momentum),
                               ("weight_decay", weight_decay), ("alpha", alpha))
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        _check_flags(defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore((("momentum", 0), ("centered", False), ("foreach", None),
                       ("maximize", False), ("differentiable", False),
                       ("capturable", False)))

    def _state_of(self, p: Tensor, momentum: float, centered: bool) -> dict[str, Any]:
        buffers = ("square_avg",) + ("momentum_buffer",) * (momentum > 0) + ("grad_avg",) * centered
        return self._lazy_state(p, buffers)

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            alpha, momentum, centered = group["alpha"], group["momentum"], group["centered"]
            wd = group["weight_decay"]
            typed = _Typed(-_to_scalar(group["lr"]), alpha, 1 - alpha, group["eps"], wd,
                           momentum)
            flags = (wd != 0, momentum > 0, centered, group["maximize"])
            for p in group["params"]:
                if p._grad is not None:
                    self._update(p, self._state_of(p, momentum, centered), typed, *flags)
        return loss

    @staticmethod
    def _update(p: Tensor, state: dict[str, Any], typed: _Typed, decay: bool,
                use_momentum: bool, centered: bool, maximize: bool) -> None:
        d = p._data
        ct = _ctype(d)
        neg_lr, alpha, one_minus_alpha, eps, wd, momentum = typed(ct)
        g = p._grad._data
        if maximize:
            g = np.negative(g, out=np.empty_like(g))
        _incr_step(state["step"])
        if decay:
            g = _added(g, d, wd, ct)
        tmp = _scratch(d, ct)
        square_avg = state["square_avg"]
        sq = square_avg._data
        _mul_(sq, alpha, ct)
        _addcmul_(sq, g, g, one_minus_alpha, ct, tmp)
        _bump(square_avg)
        if centered:
            grad_avg = state["grad_avg"]
            ga = grad_avg._data
            _lerp_(ga, g, one_minus_alpha, ct, tmp)
            _bump(grad_avg)
            # square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_(): a new tensor
            avg = np.multiply(ga, ga, out=_scratch(ga, ct), dtype=ct)
            np.subtract(sq, avg, out=avg, dtype=ct)
            avg = _round(avg, d.dtype)
            np.sqrt(avg, out=avg, dtype=ct, casting="unsafe")
        else:
            avg = _round(np.sqrt(sq, out=_scratch(sq, ct), dtype=ct), d.dtype)
        _add_scalar_(avg, eps, ct)
        if use_momentum:
            buf = state["momentum_buffer"]
            _mul_(buf._data, momentum, ct)
            _addcdiv_(buf._data, g, avg, 1, ct, tmp)
            _bump(buf)
            _add_(d, buf._data, neg_lr, ct, tmp)
        else:
            _addcdiv_(d, g, avg, neg_lr, ct, tmp)
        _bump(p)
