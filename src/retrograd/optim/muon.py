"""Muon: momentum SGD for 2-D weights whose update is orthogonalized (Newton-Schulz) first."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from retrograd._ops.creation import zeros_like
from retrograd._tensor import Tensor
from retrograd.optim.optimizer import Optimizer, _eval_closure, _to_scalar

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple, ns_steps: int,
                                eps: float) -> Tensor:
    """An approximately orthogonal matrix with grad's singular vectors: the quintic
    Newton-Schulz iteration X <- a X + (b G + c G^2) X, G = X X^T, run in bfloat16 as torch
    does, on the wide orientation of grad after scaling it to norm 1."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if len(grad.shape) != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    from retrograd._ops.linalg import addmm

    a, b, c = ns_coefficients
    tall = grad.size(0) > grad.size(1)
    x = grad.bfloat16()
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(ns_steps):
        gram = x @ x.T
        gram_update = addmm(gram, gram, gram, beta=b, alpha=c)
        x = addmm(x, gram_update, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape: Any) -> float:
    """"original": lr * sqrt(max(1, rows / cols)); "match_rms_adamw": lr * 0.2 sqrt(max dim),
    so the update's RMS is that of AdamW's."""
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """torch.optim.Muon: buf = lerp(buf, grad, 1 - momentum); the update (grad lerped toward
    buf with nesterov, else buf) orthogonalized; param *= 1 - lr * weight_decay, then
    param -= adjusted lr * update. For 2-D parameters only."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B,
                                                                DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            momentum = group["momentum"]
            for p in group["params"]:
                if p._grad is None:
                    continue
                grad = p._grad
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = zeros_like(grad)
                buf = state["momentum_buffer"]
                buf.lerp_(grad, 1 - momentum)
                update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                     group["ns_steps"], group["eps"])
                adjusted = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(update, alpha=-adjusted)
        return loss
