"""Adam (and AdamW's decoupled weight decay), with AMSGrad and maximization."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd._ops.optim_kernels import adam_apply
from retrograd._tensor import Tensor
from retrograd.optim import _dispatched
from retrograd.optim.optimizer import (
    Optimizer,
    _adam_moments,
    _bump,
    _check_flags,
    _check_hyperparameters,
    _ctype,
    _eval_closure,
    _incr_step,
    _to_scalar,
    _Typed,
)

__all__ = ["Adam"]


def _check_betas(betas: tuple) -> tuple:
    b1, b2 = betas
    if not 0.0 <= b1 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {b1}")
    if not 0.0 <= b2 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {b2}")
    floats = isinstance(b1, float) and isinstance(b2, float)
    if not (floats or (isinstance(b1, Tensor) and isinstance(b2, Tensor))):
        raise ValueError("betas must be either both floats or both Tensors")
    for i, b in enumerate(betas):
        if isinstance(b, Tensor) and b.numel() != 1:
            raise ValueError(f"Tensor betas[{i}] must be 1-element")
    return betas


class Adam(Optimizer):
    """torch.optim.Adam: bias-corrected first and second moment estimates; weight decay is L2
    (added to the gradient) unless decoupled_weight_decay=True (AdamW)."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        _check_hyperparameters(lr, ("epsilon", eps))
        betas = _check_betas(betas)
        _check_hyperparameters(0.0, ("weight_decay", weight_decay))
        defaults = {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        _check_flags(defaults)
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._restore((("amsgrad", False), ("maximize", False), ("foreach", None),
                       ("capturable", False), ("differentiable", False),
                       ("decoupled_weight_decay", False), ("fused", None)))

    def _state_of(self, p: Tensor, amsgrad: bool, fused: bool = False) -> dict[str, Any]:
        buffers = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
        return self._lazy_state(p, buffers if amsgrad else buffers[:2], fused=fused)

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr = _to_scalar(group["lr"])
            beta1, beta2 = (_to_scalar(b) for b in group["betas"])
            wd, amsgrad = group["weight_decay"], group["amsgrad"]
            how = _dispatched.path(group)
            if how is not None:  # NOTE [Optimizer dispatch]
                params = [p for p in group["params"] if p._grad is not None]
                states = [self._state_of(p, amsgrad, how == "fused") for p in params]
                _dispatched.adam(how, params, states, lr, beta1, beta2, wd, group["eps"],
                                 amsgrad, group["maximize"], group["decoupled_weight_decay"])
                continue
            typed = _Typed(1 - beta1, beta2, 1 - beta2, group["eps"], wd, 1 - lr * wd)
            per_step: dict[float, _Typed] = {}  # the bias corrections, per step count
            flags = (wd != 0, group["decoupled_weight_decay"], amsgrad, group["maximize"])
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self._state_of(p, amsgrad)
                step = _incr_step(state["step"])
                corrections = per_step.get(step)
                if corrections is None:
                    corrections = per_step[step] = _Typed(-(lr / (1 - beta1 ** step)),
                                                          (1 - beta2 ** step) ** 0.5)
                self._update(p, state, typed, corrections, *flags)
        return loss

    @staticmethod
    def _update(p: Tensor, state: dict[str, Any], typed: _Typed, corrections: _Typed,
                decay: bool, decoupled: bool, amsgrad: bool, maximize: bool) -> None:
        d = p._data
        ct = _ctype(d)
        one_minus_beta1, beta2, one_minus_beta2, eps, wd, shrink = typed(ct)
        neg_step_size, bias_correction2_sqrt = corrections(ct)
        g, m, v, tmp = _adam_moments(p, state, ct, one_minus_beta1, beta2, one_minus_beta2, wd,
                                     shrink, decay, decoupled, maximize)
        vmax = None
        if amsgrad:
            vmax = state["max_exp_avg_sq"]
            _bump(vmax)
            vmax = vmax._data
        adam_apply(d, m, v, vmax, ct, neg_step_size, bias_correction2_sqrt, eps, tmp)
        _bump(p)
