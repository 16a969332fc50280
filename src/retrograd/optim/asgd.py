"""ASGD: SGD with a decaying step size and a running (Polyak) average of the iterates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd._ops.creation import as_tensor
from retrograd._tensor import Tensor
from retrograd.optim.optimizer import (
    Optimizer,
    _check_flags,
    _eval_closure,
    _lr_operand,
    _step_tensor,
    _to_scalar,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """torch.optim.ASGD: param = param * (1 - lambd * eta) - eta * grad; `ax` averages the
    iterates from step t0 on (mu = 1 / max(1, step - t0)); eta = lr / (1 + lambd * lr *
    step) ** alpha."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        _check_flags(defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore((("foreach", None), ("maximize", False), ("differentiable", False),
                       ("capturable", False)), counters=("step", "eta", "mu"))

    def _state_of(self, p: Tensor, lr: float) -> dict[str, Any]:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["eta"] = _step_tensor(_to_scalar(lr))
            state["mu"] = _step_tensor(1.0)
            state["ax"] = p.detach().new_zeros(p.shape)
        return state

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr = _lr_operand(group["lr"])
            update = _asgd_foreach_update if group["foreach"] else _asgd_update
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._state_of(p, lr)
                update(p, state, lr, group["lambd"], group["alpha"], group["t0"],
                       group["weight_decay"], group["maximize"])
        return loss


def _asgd_update(p: Tensor, state: dict[str, Any], lr: float | Tensor, lambd: float, alpha: float,
                 t0: float, wd: float, maximize: bool) -> None:
    grad = -p._grad if maximize else p._grad
    eta, mu, ax, step_t = state["eta"], state["mu"], state["ax"], state["step"]
    step_t += 1
    if wd != 0:
        grad = grad.add(p, alpha=wd)
    eta_value = eta.item()
    p.mul_(1 - lambd * eta_value)
    p.add_(grad, alpha=-eta_value)
    if mu.item() != 1:
        ax.add_(p.sub(ax).mul_(mu))
    else:
        ax.copy_(p)
    step = step_t.item()
    # the next step's eta and mu, made as default-dtype tensors and copied, as torch does
    eta.copy_(as_tensor(lr / ((1 + lambd * lr * step) ** alpha)))
    mu.copy_(as_tensor(1 / max(1, step - t0)))


def _asgd_foreach_update(p: Tensor, state: dict[str, Any], lr: float | Tensor, lambd: float,
                         alpha: float, t0: float, wd: float, maximize: bool) -> None:
    """torch's multi-tensor arrangement of the same step (its roundings differ):
    param -= eta * (grad + (weight_decay + lambd) * param), ax += mu * (param - ax), and eta
    computed from the step counter tensor."""
    grad = -p._grad if maximize else p._grad
    eta, mu, ax, step_t = state["eta"], state["mu"], state["ax"], state["step"]
    step_t += 1
    if wd != 0:
        grad = grad.add(p, alpha=wd)
    grad = grad.add(p, alpha=lambd)
    p.addcmul_(grad, eta, value=-1)
    ax.addcmul_(p.sub(ax), mu)
    eta.copy_(as_tensor(lr / ((1 + lambd * lr * step_t) ** alpha)))
    mu.copy_(as_tensor(1 / max(1, step_t.item() - t0)))
