"""ASGD: SGD with a decaying step size and a running (Polyak) average of the iterates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._ops import dispatch
from retrograd._ops.creation import as_tensor
from retrograd._tensor import Tensor
from retrograd.optim.optimizer import (
    Optimizer,
    _add_,
    _addcmul_,
    _added,
    _bump,
    _check_flags,
    _ctype,
    _eval_closure,
    _incr_step,
    _lr_operand,
    _mul_,
    _round,
    _scratch,
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

    def _state_of(self, p: Tensor, lr: float | Tensor) -> dict[str, Any]:
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
            lambd, foreach = group["lambd"], bool(group["foreach"])
            update = _asgd_update if dispatch.mode_stack else _asgd_arrays
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._state_of(p, lr)
                update(p, state, lambd, group["weight_decay"], group["maximize"], foreach)
                _next_eta_mu(state, lr, lambd, group["alpha"], group["t0"], foreach)
        return loss


def _asgd_update(p: Tensor, state: dict[str, Any], lambd: float, wd: float, maximize: bool,
                 foreach: bool) -> None:
    """The parameter and average updates through tensor ops (while a dispatch mode is active,
    so it sees torch's ops). foreach=True takes torch's multi-tensor arrangement:
    param -= eta * (grad + (weight_decay + lambd) * param), ax += mu * (param - ax)."""
    grad = -p._grad if maximize else p._grad
    eta, mu, ax = state["eta"], state["mu"], state["ax"]
    state["step"] += 1
    if wd != 0:
        grad = grad.add(p, alpha=wd)
    if foreach:
        grad = grad.add(p, alpha=lambd)
        p.addcmul_(grad, eta, value=-1)
        ax.addcmul_(p.sub(ax), mu)
        return
    eta_value = eta.item()
    p.mul_(1 - lambd * eta_value)
    p.add_(grad, alpha=-eta_value)
    if mu.item() != 1:
        ax.add_(p.sub(ax).mul_(mu))
    else:
        ax.copy_(p)


def _asgd_arrays(p: Tensor, state: dict[str, Any], lambd: float, wd: float, maximize: bool,
                 foreach: bool) -> None:
    """_asgd_update on the arrays (NOTE [Optimizer arithmetic]), with torch's roundings for
    narrow floats: a 0-dim operand of addcmul_ is cast to the parameter's dtype, a number
    multiplier and `p.sub(ax).mul_(mu)`'s mu are not."""
    d = p._data
    ct = _ctype(d)
    g = p._grad._data
    if maximize:
        g = np.negative(g, out=np.empty_like(g))
    _incr_step(state["step"])
    if wd != 0:
        g = _added(g, d, wd, ct)
    eta_value, mu_value = state["eta"]._data.item(), state["mu"]._data.item()
    ax = state["ax"]
    a = ax._data
    if foreach:
        g = _added(g, d, lambd, ct)
        _addcmul_(d, g, ct(d.dtype.type(eta_value)), -1, ct)
        diff = _round(np.subtract(d, a, out=_scratch(d, ct), dtype=ct), d.dtype)
        _addcmul_(a, diff, ct(d.dtype.type(mu_value)), 1, ct)
    else:
        _mul_(d, ct(1 - lambd * eta_value), ct)
        _add_(d, g, -eta_value, ct)
        if mu_value != 1:
            diff = _round(np.subtract(d, a, out=_scratch(d, ct), dtype=ct), d.dtype)
            diff = _round(np.multiply(diff, ct(mu_value), out=_scratch(d, ct), dtype=ct),
                          d.dtype)
            _add_(a, diff, 1, ct)
        else:
            np.copyto(a, d)
    _bump(p)
    _bump(ax)


def _next_eta_mu(state: dict[str, Any], lr: float | Tensor, lambd: float, alpha: float,
                 t0: float, foreach: bool) -> None:
    """The next step's eta and mu, made as default-dtype tensors and copied, as torch does;
    torch's multi-tensor step computes eta from the step counter tensor."""
    step_t = state["step"]
    step = step_t.item()
    count = step_t if foreach else step
    state["eta"].copy_(as_tensor(lr / ((1 + lambd * lr * count) ** alpha)))
    state["mu"].copy_(as_tensor(1 / max(1, step - t0)))
