"""Adafactor: Adam-like steps whose second moment of a matrix is kept as row and column means
(factored), with a relative step size and update clipping."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from retrograd import _dtype as D
from retrograd._tensor import Tensor
from retrograd.optim.optimizer import Optimizer, _eval_closure, _lr_operand, _step_tensor

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """torch.optim.Adafactor: beta2_t = 1 - step ** beta2_decay; for tensors of 2 or more
    dimensions the variance over the last two is estimated from its row and column means;
    the step is alpha = max(eps2, RMS(param)) * min(lr, 1 / sqrt(step)), and the update is
    scaled down when its RMS exceeds d. Weight decay is decoupled (param *= 1 - lr * wd)."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore((("foreach", None),))

    def _state_of(self, p: Tensor) -> dict[str, Any]:
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            grad = p._grad
            if grad.dim() > 1:
                # the variance's row means (last dim reduced) and column means (the one before)
                state["row_var"] = grad.new_zeros(grad.shape[:-1] + (1,))
                state["col_var"] = grad.new_zeros(grad.shape[:-2] + (1,) + grad.shape[-1:])
            else:
                state["variance"] = grad.new_zeros(grad.shape)
        return state

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            params = [p for p in group["params"] if p._grad is not None]
            states = [self._state_of(p) for p in params]
            eps1, eps2 = group["eps"]
            lr = _lr_operand(group["lr"])
            for p, state in zip(params, states):
                if eps1 is None:  # the first parameter's dtype fixes it for the group, as in torch
                    eps1 = D.finfo(p.dtype).eps
                _adafactor_update(p, state, lr, group["beta2_decay"], eps1, eps2, group["d"],
                                  group["weight_decay"], group["maximize"],
                                  bool(group["foreach"]))
        return loss


def _adafactor_update(p: Tensor, state: dict[str, Any], lr: float | Tensor, beta2_decay: float,
                      eps1: float, eps2: float, d: float, wd: float, maximize: bool,
                      foreach: bool) -> None:
    grad = -p._grad if maximize else p._grad
    step_t = state["step"]
    step_t += 1
    step = step_t.item()
    one_minus_beta2 = step ** beta2_decay
    rho = min(lr, 1 / (step ** 0.5))
    alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
    if wd != 0:
        p.mul_(1 - lr * wd)
    if grad.dim() > 1:
        row_var, col_var = state["row_var"], state["col_var"]
        # mean of grad ** 2 over a dim, as norm(dim) ** 2 / size (no squared copy of grad)
        row_mean = grad.norm(dim=-1, keepdim=True).square_().div_(grad.size(-1))
        row_var.lerp_(row_mean, one_minus_beta2)
        col_mean = grad.norm(dim=-2, keepdim=True).square_().div_(grad.size(-2))
        col_var.lerp_(col_mean, one_minus_beta2)
        estimate = row_var @ col_var
        estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
    else:
        variance = state["variance"]
        variance.lerp_(grad * grad, one_minus_beta2)
        estimate = variance.clone()
    update = estimate.clamp_(min=eps1 * eps1).rsqrt_()
    update.mul_(grad)
    denom = max(1.0, update.norm(2).item() / (math.sqrt(update.numel()) * d))
    if foreach:  # torch's multi-tensor step scales the update first, then adds it
        p.add_(update.mul_(-alpha / denom))
    else:
        p.add_(update, alpha=-alpha / denom)
