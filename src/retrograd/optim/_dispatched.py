"""The optimizer steps that go through ops (NOTE [Optimizer dispatch]): foreach=True (torch's
`_foreach_*` ops), fused=True (`_fused_adam_`, `_fused_adamw_`, `_fused_sgd_`), and the
default single-tensor step while a dispatch mode is active (torch's single-tensor ops, one
parameter at a time). Each follows torch's algorithm op for op, so a mode sees the same calls.
"""

from __future__ import annotations

from typing import Any

from retrograd._ops import dispatch
from retrograd._ops import foreach as F
from retrograd._ops.creation import empty_like, tensor
from retrograd._ops.pointwise import maximum
from retrograd._tensor import Tensor


def path(group: dict[str, Any]) -> str | None:
    """'fused', 'foreach', 'ops' (single-tensor through ops) or None (the array step)."""
    if group.get("fused"):
        return "fused"
    if group.get("foreach"):
        return "foreach"
    return "ops" if dispatch.mode_stack else None


def by_dtype(params: list) -> list:
    """Index lists of the parameters of each dtype, in order of first appearance (torch runs
    one multi-tensor call per device and dtype)."""
    groups: dict = {}
    for i, p in enumerate(params):
        groups.setdefault(p._data.dtype, []).append(i)
    return list(groups.values())


def _pick(items: list, idx: list) -> list:
    return [items[i] for i in idx]


def _grads_and_moments(ps, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, wd, fresh,
                       decoupled) -> list:
    """Weight decay and the two moment averages, as Adam's foreach step updates them (NAdam's
    and RAdam's too); `fresh`: the gradients are new tensors (negated for maximize), written
    in place. Returns the gradients used."""
    if wd != 0:
        if decoupled:
            F.mul_scalar_(ps, 1 - lr * wd)
        elif fresh:
            F.add_list_(grads, ps, alpha=wd)
        else:
            grads = F.add_list(grads, ps, alpha=wd)
    F.lerp_scalar_(exp_avgs, grads, 1 - beta1)
    F.mul_scalar_(exp_avg_sqs, beta2)
    F.addcmul_scalar_(exp_avg_sqs, grads, grads, 1 - beta2)
    return grads


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
    grads = _grads_and_moments(ps, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, wd, maximize,
                               decoupled)
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


# --- NAdam and RAdam: the moments as Adam's, their own update rules ---------------------------

def nadam(how: str, params: list, states: list, lr: float, beta1: float, beta2: float,
          wd: float, eps: float, momentum_decay: float, maximize: bool, decoupled: bool) -> None:
    if how == "ops":
        for p, state in zip(params, states):
            _nadam_single(p, state, lr, beta1, beta2, wd, eps, momentum_decay, maximize,
                          decoupled)
        return
    for idx in by_dtype(params):
        ps, st = _pick(params, idx), _pick(states, idx)
        grads = [p._grad for p in ps]
        exp_avgs, exp_avg_sqs = [s["exp_avg"] for s in st], [s["exp_avg_sq"] for s in st]
        mu_products, steps = [s["mu_product"] for s in st], [s["step"] for s in st]
        if maximize:
            grads = F.neg(grads)
        F.add_tensor_(steps, tensor(1.0), alpha=1.0)
        grads = _grads_and_moments(ps, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, wd,
                                   maximize, decoupled)
        denom = F.sqrt(exp_avg_sqs)
        counts = [s._data.item() for s in steps]
        bias_correction_sqrt = [(1 - beta2 ** c) ** 0.5 for c in counts]
        mus = [beta1 * (1.0 - 0.5 * (0.96 ** (c * momentum_decay))) for c in counts]
        mu_nexts = [beta1 * (1.0 - 0.5 * (0.96 ** ((c + 1) * momentum_decay))) for c in counts]
        F.mul_scalars_(mu_products, mus)
        F.div_scalars_(denom, bias_correction_sqrt)
        F.add_scalar_(denom, eps)
        products = [m._data.item() for m in mu_products]
        step_grads = [(lr * (1.0 - mu) / (1.0 - mp)) * -1 for mp, mu in zip(products, mus)]
        step_avgs = [(lr * mn / (1.0 - mp * mn)) * -1 for mp, mn in zip(products, mu_nexts)]
        F.addcdiv_scalars_(ps, grads, denom, step_grads)
        F.addcdiv_scalars_(ps, exp_avgs, denom, step_avgs)


def _nadam_single(p: Tensor, state: dict, lr, beta1, beta2, wd, eps, momentum_decay, maximize,
                  decoupled) -> None:
    grad = -p._grad if maximize else p._grad
    step_t, mu_product = state["step"], state["mu_product"]
    step_t += 1
    step = step_t.item()
    bias_correction2 = 1 - beta2 ** step
    if wd != 0:
        if decoupled:
            p.mul_(1 - lr * wd)
        else:
            grad = grad.add(p, alpha=wd)
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
    mu_product *= mu
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    denom = exp_avg_sq.div(bias_correction2).sqrt()
    product = mu_product.item()
    denom.add_(eps)
    p.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - product)))
    p.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - product * mu_next))


def radam(how: str, params: list, states: list, lr: float, beta1: float, beta2: float,
          wd: float, eps: float, maximize: bool, decoupled: bool) -> None:
    rho_inf = 2 / (1 - beta2) - 1
    if how == "ops":
        for p, state in zip(params, states):
            _radam_single(p, state, lr, beta1, beta2, wd, eps, rho_inf, maximize, decoupled)
        return
    for idx in by_dtype(params):
        ps, st = _pick(params, idx), _pick(states, idx)
        exp_avgs, exp_avg_sqs = [s["exp_avg"] for s in st], [s["exp_avg_sq"] for s in st]
        steps = [s["step"] for s in st]
        F.add_tensor_(steps, tensor(1.0), alpha=1.0)
        grads = [p._grad for p in ps]
        if maximize:
            grads = F.neg(grads)
        _grads_and_moments(ps, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, wd, maximize,
                           decoupled)
        counts = [s._data.item() for s in steps]
        rects = []
        for c in counts:
            rho_t = rho_inf - 2 * c * (beta2 ** c) / (1 - beta2 ** c)
            rects.append(((rho_t - 4) * (rho_t - 2) * rho_inf
                          / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                         if rho_t > 5 else 0)
        corrections1 = [1 - beta1 ** c for c in counts]
        unrect_step_size = [(lr * (0 if r > 0 else 1.0) / bc) * -1
                            for r, bc in zip(rects, corrections1)]
        corrections2 = [((1 - beta2 ** c) ** 0.5) * (lr * r / bc) * -1
                        for c, r, bc in zip(counts, rects, corrections1)]
        buffer = F.sqrt(exp_avg_sqs)
        F.add_scalar_(buffer, eps)
        F.div_scalars_(buffer, corrections2)
        F.reciprocal_(buffer)
        F.add_scalars_(buffer, unrect_step_size)
        F.addcmul_scalar_(ps, exp_avgs, buffer)


def _radam_single(p: Tensor, state: dict, lr, beta1, beta2, wd, eps, rho_inf, maximize,
                  decoupled) -> None:
    grad = -p._grad if maximize else p._grad
    step_t = state["step"]
    step_t += 1
    step = step_t.item()
    if wd != 0:
        if decoupled:
            p.mul_(1 - lr * wd)
        else:
            grad = grad.add(p, alpha=wd)
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    bias_corrected_exp_avg = exp_avg / bias_correction1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    scaled = bias_corrected_exp_avg * lr
    if rho_t > 5.0:
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
        p.add_(scaled * adaptive_lr * rect, alpha=-1.0)
    else:
        p.add_(scaled, alpha=-1.0)


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
