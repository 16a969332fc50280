"""Rprop: per-coordinate step sizes that grow while the gradient keeps its sign and shrink
when it flips; only the gradient's sign moves the parameter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd._ops.creation import full_like
from retrograd._tensor import Tensor
from retrograd.optim.optimizer import (
    Optimizer,
    _check_flags,
    _eval_closure,
    _step_tensor,
    _to_scalar,
)

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """torch.optim.Rprop: step_size *= etaplus where grad * prev > 0, *= etaminus where < 0
    (and that coordinate's gradient is taken as 0 this step), clamped to step_sizes; then
    param -= sign(grad) * step_size."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        _check_flags(defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore((("foreach", None), ("maximize", False), ("differentiable", False),
                       ("capturable", False)))

    def _state_of(self, p: Tensor, lr: float) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["prev"] = p.detach().new_zeros(p.shape)
            state["step_size"] = full_like(p._grad, lr)
        return state

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            smin, smax = group["step_sizes"]
            lr = _to_scalar(group["lr"])
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._state_of(p, lr)
                _rprop_update(p, state, etaminus, etaplus, smin, smax, group["maximize"])
        return loss


def _rprop_update(p: Tensor, state: dict[str, Any], etaminus: float, etaplus: float,
                  smin: float, smax: float, maximize: bool) -> None:
    grad = -p._grad if maximize else p._grad
    prev, step_size = state["prev"], state["step_size"]
    state["step"] += 1
    sign = grad.mul(prev).sign()
    # the factor for each coordinate; a NaN sign (NaN gradient) stays NaN, as in torch
    sign[sign.gt(0)] = etaplus
    sign[sign.lt(0)] = etaminus
    sign[sign.eq(0)] = 1
    step_size.mul_(sign).clamp_(smin, smax)
    # a coordinate whose gradient changed sign does not move this step, and is forgotten
    grad = grad.clone()
    grad[sign.eq(etaminus)] = 0
    p.addcmul_(grad.sign(), step_size, value=-1)
    prev.copy_(grad)
