"""SGD with optional momentum, Nesterov momentum, weight decay and maximization."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._tensor import Tensor, _wrap
from retrograd.optim import _dispatched
from retrograd.optim.optimizer import (
    Optimizer,
    _add_,
    _added,
    _bump,
    _check_flags,
    _ctype,
    _eval_closure,
    _mul_,
    _to_scalar,
    _Typed,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    """torch.optim.SGD: the momentum buffer starts as the first gradient (no dampening on it),
    then buf = momentum * buf + (1 - dampening) * grad."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float | Tensor = 0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_flags(defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr, wd = _to_scalar(group["lr"]), _to_scalar(group["weight_decay"])
            momentum = group["momentum"]
            how = _dispatched.path(group)
            if how is not None:  # NOTE [Optimizer dispatch]
                params = [p for p in group["params"] if p._grad is not None]
                _dispatched.sgd(how, params, [self.state[p] for p in params], lr, momentum,
                                group["dampening"], wd, group["nesterov"], group["maximize"])
                continue
            typed = _Typed(-lr, wd, momentum, 1 - group["dampening"])
            flags = (wd != 0, momentum != 0, group["nesterov"], group["maximize"])
            for p in group["params"]:
                if p._grad is not None:
                    self._update(p, typed, *flags)
        return loss

    def _update(self, p: Tensor, typed: _Typed, decay: bool, use_momentum: bool,
                nesterov: bool, maximize: bool) -> None:
        d = p._data
        ct = _ctype(d)
        neg_lr, wd, momentum, undamped = typed(ct)
        grad = p._grad._data
        g = np.negative(grad, out=np.empty_like(grad)) if maximize else grad
        if decay:
            g = _added(g, d, wd, ct)
        if use_momentum:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            if buf is None:
                # a clone of the gradient; a temporary made above can be used as it is
                buf = _wrap(g.copy() if g is grad else g)
            else:
                b = buf._data
                _mul_(b, momentum, ct)
                _add_(b, g, undamped, ct)
                _bump(buf)
            state["momentum_buffer"] = buf
            g = _added(g, buf._data, momentum, ct) if nesterov else buf._data
        _add_(d, g, neg_lr, ct)
        _bump(p)
