"""The optimizer steps that go through ops (NOTE [Optimizer dispatch]): foreach=True (torch's
`_foreach_*` ops), fused=True (`_fused_adam_`, `_fused_adamw_`, `_fused_sgd_`), and the
default single-tensor step while a dispatch mode is active (torch's single-tensor ops, one
parameter at a time). Each follows torch's algorithm op for op, so a mode sees the same calls.
"""

from __future__ import annotations

from typing import Any

from retrograd._ops import foreach as F
from retrograd._ops.creation import empty_like, tensor
from retrograd._ops.pointwise import maximum
from retrograd._tensor import Tensor


def path(group: dict[str, Any]) -> str | None:
    """'fused', 'foreach', 'ops' (single-tensor through ops) or None (the array step)."""
    from retrograd._ops.dispatch import mode_stack

    if group.get("fused"):
        return "fused"
    if group.get("foreach"):
        return "foreach"
    return "ops" if mode_stack else None


def by_dtype(params: list) -> list:
    """Index lists of the parameters of each dtype, in order of first appearance (torch runs
    one multi-tensor call per device and dtype)."""
    groups: dict = {}
    for i, p in enumerate(params):
        groups.setdefault(p._data.dtype, []).append(i)
    return list(groups.values())


def _pick(items: list, idx: list) -> list:
    return [items[i] for i in idx]


# --- Adam / AdamW -----------------------------------------------------------------------------

def adam(how: str, params: list, states: list, lr: float, beta1: float, beta2: float,
         wd: float, eps: float, amsgrad: bool, maximize: bool, decoupled: bool) -> None:
    if how == "ops":
        for p, state in zip(params, states):
            _adam_single(p, state, lr, beta1, beta2, wd, eps, amsgrad, maximize, decoupled)
        return
    for idx in by_dtype(params):
        ps, st = _pick(params, idx), _pick(states, idx)
        grads = [p._grad for p in ps]
        exp_avgs = [s["exp_avg"] for s in st]
        exp_avg_sqs = [s["exp_avg_sq"] for s in st]
        maxes = [s["max_exp_avg_sq"] for s in st] if amsgrad else []
        steps = [s["step"] for s in st]
        if how == "fused":
            F.add_scalar_(steps, 1)
            fused = F.fused_adamw_ if decoupled else F.fused_adam_
            fused(ps, grads, exp_avgs, exp_avg_sqs, maxes, steps, lr=lr, beta1=beta1,
                  beta2=beta2, weight_decay=wd, eps=eps, amsgrad=amsgrad, maximize=maximize)
            continue
        _adam_foreach(ps, grads, exp_avgs, exp_avg_sqs, maxes, steps, lr, beta1, beta2, wd, eps,
                      amsgrad, maximize, decoupled)


def _adam_foreach(ps, grads, exp_avgs, exp_avg_sqs, maxes, steps, lr, beta1, beta2, wd, eps,
                  amsgrad, maximize, decoupled) -> None:
    if maximize:
        grads = F.neg(grads)
    F.add_tensor_(steps, tensor(1.0), alpha=1.0)
    if wd != 0:
        if decoupled:
            F.mul_scalar_(ps, 1 - lr * wd)
        elif maximize:  # the negated gradients are new tensors: add in place
            F.add_list_(grads, ps, alpha=wd)
        else:
            grads = F.add_list(grads, ps, alpha=wd)
    F.lerp_scalar_(exp_avgs, grads, 1 - beta1)
    F.mul_scalar_(exp_avg_sqs, beta2)
    F.addcmul_scalar_(exp_avg_sqs, grads, grads, 1 - beta2)
    counts = [s._data.item() for s in steps]
    step_sizes = [(lr / (1 - beta1 ** c)) * -1 for c in counts]
    bias_correction2_sqrt = [(1 - beta2 ** c) ** 0.5 for c in counts]
    if amsgrad:
        F.maximum_list_(maxes, exp_avg_sqs)
        denom = F.sqrt(maxes)
    else:
        denom = F.sqrt(exp_avg_sqs)
    F.div_scalars_(denom, bias_correction2_sqrt)
    F.add_scalar_(denom, eps)
    F.addcdiv_scalars_(ps, exp_avgs, denom, step_sizes)


def _adam_single(p: Tensor, state: dict, lr, beta1, beta2, wd, eps, amsgrad, maximize,
                 decoupled) -> None:
    grad = -p._grad if maximize else p._grad
    step_t = state["step"]
    step_t += 1
    if wd != 0:
        if decoupled:
            p.mul_(1 - lr * wd)
        else:
            grad = grad.add(p, alpha=wd)
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    step = step_t.item()
    step_size = lr / (1 - beta1 ** step)
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    if amsgrad:
        vmax = state["max_exp_avg_sq"]
        maximum(vmax, exp_avg_sq, out=vmax)
        denom = (vmax.sqrt() / bias_correction2_sqrt).add_(eps)
    else:
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    p.addcdiv_(exp_avg, denom, value=-step_size)


# --- SGD --------------------------------------------------------------------------------------

def sgd(how: str, params: list, states: list, lr: float, momentum: float, dampening: float,
        wd: float, nesterov: bool, maximize: bool) -> None:
    if how == "ops":
        for p, state in zip(params, states):
            _sgd_single(p, state, lr, momentum, dampening, wd, nesterov, maximize)
        return
    if how == "fused":
        bufs = [s.get("momentum_buffer") for s in states]
        first = momentum != 0 and all(b is None for b in bufs)
        if first:
            for s, p in zip(states, params):
                s["momentum_buffer"] = empty_like(p._grad)
    for idx in by_dtype(params):
        ps, st = _pick(params, idx), _pick(states, idx)
        grads = [p._grad for p in ps]
        if how == "fused":
            bufs = [] if momentum == 0 else [s["momentum_buffer"] for s in st]
            F.fused_sgd_(ps, grads, bufs, weight_decay=wd, momentum=momentum, lr=lr,
                         dampening=dampening, nesterov=nesterov, maximize=maximize,
                         is_first_step=first)
            continue
        _sgd_foreach(ps, grads, st, lr, momentum, dampening, wd, nesterov, maximize)


def _sgd_foreach(ps, grads, states, lr, momentum, dampening, wd, nesterov, maximize) -> None:
    if maximize:
        grads = F.neg(grads)
    if wd != 0:
        if maximize:
            F.add_list_(grads, ps, alpha=wd)
        else:
            grads = F.add_list(grads, ps, alpha=wd)
    if momentum != 0:
        bufs = [s.get("momentum_buffer") for s in states]
        if all(b is not None for b in bufs):
            F.mul_scalar_(bufs, momentum)
            F.add_list_(bufs, grads, alpha=1 - dampening)
        else:
            for i, s in enumerate(states):
                if bufs[i] is None:
                    bufs[i] = s["momentum_buffer"] = grads[i].detach().clone()
                else:
                    bufs[i].mul_(momentum).add_(grads[i], alpha=1 - dampening)
        if nesterov:
            F.add_list_(grads, bufs, alpha=momentum)
        else:
            grads = bufs
    F.add_list_(ps, grads, alpha=-lr)


def _sgd_single(p: Tensor, state: dict, lr, momentum, dampening, wd, nesterov,
                maximize) -> None:
    grad = -p._grad if maximize else p._grad
    if wd != 0:
        grad = grad.add(p, alpha=wd)
    if momentum != 0:
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = grad.detach().clone()
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
        grad = grad.add(buf, alpha=momentum) if nesterov else buf
    p.add_(grad, alpha=-lr)
