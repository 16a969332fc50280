"""torch's multi-tensor ops: `_foreach_*` (one op over lists of tensors) and the fused optimizer
steps `_fused_adam_`, `_fused_adamw_`, `_fused_sgd_`, with torch's names and schemas.

NOTE [Optimizer dispatch]
Optimizer steps pass through the dispatcher as torch's do, so a TorchDispatchMode around
`opt.step()` sees the ops torch's mode sees with the same flags. foreach=True runs the
`_foreach_*` ops below, fused=True the `_fused_*` ones, over the parameters of each dtype
(torch groups by device and dtype). The default on CPU, as in torch, is neither: the
single-tensor step, which writes the arrays directly (optim_kernels) and, only while a mode is
active, runs torch's single-tensor ops instead (`exp_avg.lerp_(grad, 1 - beta1)`, ...) so the
mode sees them. The kernels are the optimizers' own arithmetic (NOTE [Optimizer arithmetic]),
so every path gives the same numbers. The in-place ops have no derivative: they refuse to run
where autograd would record them (inplace.run_list_inplace), where torch would differentiate
them. The out-of-place `_foreach_maximum` is differentiable, as torch's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from retrograd._ops.optim_kernels import (
    _add_,
    _add_scalar_,
    _addcdiv_,
    _addcmul_,
    _added,
    _ctype,
    _lerp_,
    _mul_,
    _round,
    _scratch,
    adam_apply,
    adam_moments,
)
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor

# --- kernels: lists of arrays, torch's single-tensor arithmetic on each --------------------------


def _add_scalar_list(xs: list, scalar) -> None:
    for a in xs:
        _add_scalar_(a, scalar, _ctype(a))


def _add_list(xs: list, others: list, alpha=1) -> None:
    for a, b in zip(xs, others):
        ct = _ctype(a)
        _add_(a, b, ct(alpha), ct)


def _add_scalars(xs: list, scalars: list) -> None:
    for a, s in zip(xs, scalars):
        _add_scalar_(a, s, _ctype(a))


def _add_tensor(xs: list, other: np.ndarray, alpha=1) -> None:
    for a in xs:
        ct = _ctype(a)
        _add_(a, other, ct(alpha), ct)


def _added_list(xs: list, others: list, alpha=1) -> list:
    return [_added(a, b, _ctype(a)(alpha), _ctype(a)) for a, b in zip(xs, others)]


def _added_scalar(xs: list, scalar) -> list:
    out = []
    for a in xs:
        b = np.array(a, copy=True)
        _add_scalar_(b, scalar, _ctype(a))
        out.append(b)
    return out


def _mul_scalar(xs: list, scalar) -> None:
    for a in xs:
        ct = _ctype(a)
        _mul_(a, ct(scalar), ct)


def _mul_scalars(xs: list, scalars: list) -> None:
    for a, s in zip(xs, scalars):
        ct = _ctype(a)
        _mul_(a, ct(s), ct)


def _mul_list(xs: list, others: list) -> None:
    for a, b in zip(xs, others):
        np.multiply(a, b, out=a, dtype=_ctype(a), casting="unsafe")


def _mul_tensor(xs: list, other: np.ndarray) -> None:
    for a in xs:
        np.multiply(a, other, out=a, dtype=_ctype(a), casting="unsafe")


def _div_scalar(xs: list, scalar) -> None:
    for a in xs:
        ct = _ctype(a)
        np.divide(a, ct(scalar), out=a, dtype=ct, casting="unsafe")


def _div_scalars(xs: list, scalars: list) -> None:
    for a, s in zip(xs, scalars):
        ct = _ctype(a)
        np.divide(a, ct(s), out=a, dtype=ct, casting="unsafe")


def _div_list(xs: list, others: list) -> None:
    for a, b in zip(xs, others):
        np.divide(a, b, out=a, dtype=_ctype(a), casting="unsafe")


def _sub_scalar(xs: list, scalar) -> None:
    _add_scalar_list(xs, -scalar)


def _sub_list(xs: list, others: list, alpha=1) -> None:
    _add_list(xs, others, -alpha)


def _addcmul_scalar(xs: list, t1: list, t2: list, value=1) -> None:
    for a, b, c in zip(xs, t1, t2):
        ct = _ctype(a)
        _addcmul_(a, b, c, ct(value), ct)


def _addcmul_scalars(xs: list, t1: list, t2: list, scalars: list) -> None:
    for a, b, c, s in zip(xs, t1, t2, scalars):
        ct = _ctype(a)
        _addcmul_(a, b, c, ct(s), ct)


def _addcdiv_scalar(xs: list, t1: list, t2: list, value=1) -> None:
    for a, b, c in zip(xs, t1, t2):
        ct = _ctype(a)
        _addcdiv_(a, b, c, ct(value), ct)


def _addcdiv_scalars(xs: list, t1: list, t2: list, scalars: list) -> None:
    for a, b, c, s in zip(xs, t1, t2, scalars):
        ct = _ctype(a)
        _addcdiv_(a, b, c, ct(s), ct)


def _lerp_scalar(xs: list, ends: list, weight) -> None:
    for a, b in zip(xs, ends):
        ct = _ctype(a)
        _lerp_(a, b, ct(weight), ct, _scratch(a, ct))


def _lerp_scalars(xs: list, ends: list, weights: list) -> None:
    for a, b, w in zip(xs, ends, weights):
        ct = _ctype(a)
        _lerp_(a, b, ct(w), ct, _scratch(a, ct))


def _sqrt(xs: list) -> list:
    return [_round(np.sqrt(a, out=_scratch(a, _ctype(a)), dtype=_ctype(a)), a.dtype) for a in xs]


def _sqrt_(xs: list) -> None:
    for a in xs:
        np.sqrt(a, out=a, dtype=_ctype(a), casting="unsafe")


def _neg(xs: list) -> list:
    return [np.negative(a) for a in xs]


def _neg_(xs: list) -> None:
    for a in xs:
        np.negative(a, out=a)


def _reciprocal_(xs: list) -> None:
    for a in xs:
        np.reciprocal(a, out=a, dtype=_ctype(a), casting="unsafe")


def _maximum_list(xs: list, others: list) -> None:
    for a, b in zip(xs, others):
        np.maximum(a, b, out=a, casting="unsafe")


def _maximum_each(xs: list, others: list) -> list:
    """maximum of each pair, in torch's result dtype of the pair (a Python scalar is weak)."""
    from retrograd import _dtype as D
    from retrograd._ops.broadcasting import _pair_shape
    from retrograd._tensor import _wrap

    _check_lists(xs, others)
    out = []
    for a, b in zip(xs, others):
        if type(b) is np.ndarray:
            _pair_shape(a.shape, b.shape)  # torch's error for shapes that do not broadcast
        dt = D.result_type(_wrap(a), _wrap(b) if type(b) is np.ndarray else b).np
        out.append(np.maximum(a.astype(dt, copy=False), np.asarray(b).astype(dt, copy=False)))
    return out


def _check_lists(xs: list, others: list) -> None:
    """torch's checks of a foreach op's argument lists."""
    if not xs:
        raise RuntimeError("Tensor list must have at least one tensor.")
    if len(others) != len(xs):
        if others and type(others[0]) is not np.ndarray:
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(xs)} "
                           f"and {len(others)}")


def _maximum_scalar(xs: list, scalar) -> list:
    return _maximum_each(xs, [scalar] * len(xs))


def _maximum_grads(grads: list, xs, others, flip: bool) -> list:
    """maximum's gradient for each pair that got one (flip: for the second operand)."""
    from retrograd._ops.pointwise import _max_grad

    return [None if g is None else (_max_grad(g, b, a, False) if flip else
                                    _max_grad(g, a, b, False))
            for g, a, b in zip(grads, xs, others)]


def _skip(found_inf) -> bool:
    return found_inf is not None and bool(found_inf.reshape(-1)[0] != 0)


def _unscale(grads: list, grad_scale) -> None:
    if grad_scale is not None:
        for g in grads:
            np.divide(g, grad_scale, out=g, dtype=_ctype(g), casting="unsafe")


def _adam_each(decoupled, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
               lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale=None,
               found_inf=None) -> None:
    """One Adam step per parameter: the single-tensor arithmetic (optim_kernels) on each, the
    step counts already incremented (torch's _fused_adam_ convention)."""
    if _skip(found_inf):
        return
    _unscale(grads, grad_scale)
    for i, d in enumerate(params):
        ct = _ctype(d)
        step = float(state_steps[i])
        g, tmp = adam_moments(d, grads[i], exp_avgs[i], exp_avg_sqs[i], ct, ct(1 - beta1),
                              ct(beta2), ct(1 - beta2), ct(weight_decay),
                              ct(1 - lr * weight_decay), weight_decay != 0, decoupled, maximize)
        adam_apply(d, exp_avgs[i], exp_avg_sqs[i], max_exp_avg_sqs[i] if amsgrad else None, ct,
                   ct(-(lr / (1 - beta1 ** step))), ct((1 - beta2 ** step) ** 0.5), ct(eps), tmp)


def _fused_adam(*args: Any) -> None:
    _adam_each(False, *args)


def _fused_adamw(*args: Any) -> None:
    _adam_each(True, *args)


def _fused_sgd(params, grads, bufs, weight_decay, momentum, lr, dampening, nesterov, maximize,
               is_first_step, grad_scale=None, found_inf=None) -> None:
    """One SGD step per parameter; on the first step the (uninitialised) momentum buffers
    start as the gradient."""
    if _skip(found_inf):
        return
    _unscale(grads, grad_scale)
    for i, d in enumerate(params):
        ct = _ctype(d)
        grad = grads[i]
        g = np.negative(grad, out=np.empty_like(grad)) if maximize else grad
        if weight_decay != 0:
            g = _added(g, d, ct(weight_decay), ct)
        if momentum != 0:
            b = bufs[i]
            if is_first_step:
                np.copyto(b, g, casting="unsafe")
            else:
                _mul_(b, ct(momentum), ct)
                _add_(b, g, ct(1 - dampening), ct)
            g = _added(g, b, ct(momentum), ct) if nesterov else b
        _add_(d, g, ct(-lr), ct)


# --- declarations -------------------------------------------------------------------------------

def _op(schema: str, forward: Callable) -> Callable:
    """An overload the namespace reaches through its chooser below (no method, no function)."""
    return op(schema, forward, function=False, method=False)


add_scalar_ = _op("_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
                 _add_scalar_list)
add_list_ = _op("_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
               _add_list)
add_scalars_ = _op("_foreach_add_.ScalarList(Tensor(a!)[] self, Scalar[] scalars) -> ()",
                  _add_scalars)
add_tensor_ = _op("_foreach_add_.Tensor(Tensor(a!)[] self, Tensor other, *, Scalar alpha=1) -> ()",
                 _add_tensor)
add_list = _op("_foreach_add.List(Tensor[] self, Tensor[] other, *, Scalar alpha=1) -> Tensor[]",
              _added_list)
add_scalar = _op("_foreach_add.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]", _added_scalar)
sub_scalar_ = _op("_foreach_sub_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()", _sub_scalar)
sub_list_ = _op("_foreach_sub_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
               _sub_list)
mul_scalar_ = _op("_foreach_mul_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()", _mul_scalar)
mul_list_ = _op("_foreach_mul_.List(Tensor(a!)[] self, Tensor[] other) -> ()", _mul_list)
mul_scalars_ = _op("_foreach_mul_.ScalarList(Tensor(a!)[] self, Scalar[] scalars) -> ()",
                  _mul_scalars)
mul_tensor_ = _op("_foreach_mul_.Tensor(Tensor(a!)[] self, Tensor other) -> ()", _mul_tensor)
div_scalar_ = _op("_foreach_div_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()", _div_scalar)
div_list_ = _op("_foreach_div_.List(Tensor(a!)[] self, Tensor[] other) -> ()", _div_list)
div_scalars_ = _op("_foreach_div_.ScalarList(Tensor(a!)[] self, Scalar[] scalars) -> ()",
                  _div_scalars)
addcmul_scalar_ = _op("_foreach_addcmul_.Scalar(Tensor(a!)[] self, Tensor[] tensor1, "
                     "Tensor[] tensor2, Scalar value=1) -> ()", _addcmul_scalar)
addcmul_scalars_ = _op("_foreach_addcmul_.ScalarList(Tensor(a!)[] self, Tensor[] tensor1, "
                      "Tensor[] tensor2, Scalar[] scalars) -> ()", _addcmul_scalars)
addcdiv_scalar_ = _op("_foreach_addcdiv_.Scalar(Tensor(a!)[] self, Tensor[] tensor1, "
                     "Tensor[] tensor2, Scalar value=1) -> ()", _addcdiv_scalar)
addcdiv_scalars_ = _op("_foreach_addcdiv_.ScalarList(Tensor(a!)[] self, Tensor[] tensor1, "
                      "Tensor[] tensor2, Scalar[] scalars) -> ()", _addcdiv_scalars)
lerp_scalar_ = _op("_foreach_lerp_.Scalar(Tensor(a!)[] self, Tensor[] tensors1, Scalar weight) "
                  "-> ()", _lerp_scalar)
lerp_scalars_ = _op("_foreach_lerp_.ScalarList(Tensor(a!)[] self, Tensor[] tensors1, "
                   "Scalar[] weight) -> ()", _lerp_scalars)
sqrt = _op("_foreach_sqrt(Tensor[] self) -> Tensor[]", _sqrt)
sqrt_ = _op("_foreach_sqrt_(Tensor(a!)[] self) -> ()", _sqrt_)
neg = _op("_foreach_neg(Tensor[] self) -> Tensor[]", _neg)
neg_ = _op("_foreach_neg_(Tensor(a!)[] self) -> ()", _neg_)
reciprocal_ = _op("_foreach_reciprocal_(Tensor(a!)[] self) -> ()", _reciprocal_)
maximum_list_ = _op("_foreach_maximum_.List(Tensor(a!)[] self, Tensor[] other) -> ()",
                   _maximum_list)

# the out-of-place maximum is differentiable, as torch's: one node for the whole list
maximum_list = op("_foreach_maximum.List(Tensor[] self, Tensor[] other) -> Tensor[]",
                  _maximum_each, node="ForeachMaximumBackward0List",
                  grads={"self": lambda grads, self, other: _maximum_grads(grads, self, other,
                                                                           False),
                         "other": lambda grads, self, other: _maximum_grads(grads, self, other,
                                                                            True)},
                  function=False, method=False)
maximum_scalar = op("_foreach_maximum.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]",
                    _maximum_scalar, node="ForeachMaximumBackward0",
                    grads={"self": lambda grads, self, scalar: _maximum_grads(
                        grads, self, [scalar] * len(self), False)},
                    function=False, method=False)
maximum_scalars = op("_foreach_maximum.ScalarList(Tensor[] self, Scalar[] scalars) -> Tensor[]",
                     _maximum_each, node="ForeachMaximumBackward1",
                     grads={"self": lambda grads, self, scalars: _maximum_grads(
                         grads, self, scalars, False)},
                     function=False, method=False)

_ADAM = ("(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] exp_avgs, "
         "Tensor(d!)[] exp_avg_sqs, Tensor(e!)[] max_exp_avg_sqs, Tensor[] state_steps, *, "
         "float lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, "
         "bool maximize, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()")
fused_adam_ = op("_fused_adam_" + _ADAM, _fused_adam, function="_fused_adam_", method=False)
fused_adamw_ = op("_fused_adamw_" + _ADAM, _fused_adamw, function="_fused_adamw_", method=False)
fused_sgd_ = op("_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, "
                "Tensor(c!)[] momentum_buffer_list, *, float weight_decay, float momentum, "
                "float lr, float dampening, bool nesterov, bool maximize, bool is_first_step, "
                "Tensor? grad_scale=None, Tensor? found_inf=None) -> ()", _fused_sgd,
                function="_fused_sgd_", method=False)


# --- namespace functions: torch._foreach_add_(...) picks the overload from its arguments --------

def _is_list_of_tensors(x) -> bool:
    return isinstance(x, (list, tuple)) and len(x) > 0 and isinstance(x[0], Tensor)


def _pick(name: str, scalar, tensors=None, scalars=None, tensor=None):
    """An overload chooser: by the kind of the argument after the written list."""

    def choose(self: list, other, *args: Any, **kwargs: Any):
        if isinstance(other, Tensor) and tensor is not None:
            return tensor(self, other, *args, **kwargs)
        if isinstance(other, (list, tuple)):
            if _is_list_of_tensors(other) and tensors is not None:
                return tensors(self, other, *args, **kwargs)
            if scalars is not None:
                return scalars(self, list(other), *args, **kwargs)
        return scalar(self, other, *args, **kwargs)

    choose.__name__ = choose.__qualname__ = name
    return register(name, choose)


def _pick_last(name: str, scalar, scalars):
    """For addcmul_/addcdiv_: the overload is chosen by the last argument (value or scalars)."""

    def choose(self: list, tensor1: list, tensor2: list, value=1):
        if isinstance(value, (list, tuple)):
            return scalars(self, tensor1, tensor2, list(value))
        return scalar(self, tensor1, tensor2, value)

    choose.__name__ = choose.__qualname__ = name
    return register(name, choose)


_pick("_foreach_add_", add_scalar_, add_list_, add_scalars_, add_tensor_)
_pick("_foreach_add", add_scalar, add_list)
_pick("_foreach_sub_", sub_scalar_, sub_list_)
_pick("_foreach_mul_", mul_scalar_, mul_list_, mul_scalars_, mul_tensor_)
_pick("_foreach_div_", div_scalar_, div_list_, div_scalars_)
_pick("_foreach_maximum_", maximum_list_, maximum_list_)
_choose_maximum = _pick("_foreach_maximum", maximum_scalar, maximum_list, maximum_scalars)


def _foreach_maximum(self: list, other) -> tuple:
    """torch._foreach_maximum: a tuple, as torch's; a 0-d tensor counts as a scalar."""
    if isinstance(other, Tensor):
        other = other.item()
    return tuple(_choose_maximum(self, other))


register("_foreach_maximum", _foreach_maximum)
_pick_last("_foreach_addcmul_", addcmul_scalar_, addcmul_scalars_)


def _foreach_lerp_(self: list, tensors1: list, weight) -> None:
    if isinstance(weight, (list, tuple)):
        return lerp_scalars_(self, tensors1, list(weight))
    return lerp_scalar_(self, tensors1, weight)


register("_foreach_lerp_", _foreach_lerp_)
_pick_last("_foreach_addcdiv_", addcdiv_scalar_, addcdiv_scalars_)
register("_foreach_sqrt", sqrt)
register("_foreach_sqrt_", sqrt_)
register("_foreach_neg", neg)
register("_foreach_neg_", neg_)
register("_foreach_reciprocal_", reciprocal_)
