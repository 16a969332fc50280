"""F.linear_cross_entropy: cross_entropy(linear(input, linear_weight, linear_bias), target).

With `options=None` it is exactly that composition (the reference path, differentiable to any
order). With options, in the configurations the chunked path supports, the rows are processed
`batch_chunk_size` at a time so the (N, C) logits never exist at once:
- mean/sum: forward computes the loss and, for the arguments that need them, the gradients of
  input, linear_weight and linear_bias; backward scales them by the upstream gradient (once,
  unless options.allow_retain_graph: the stored gradients are consumed in place).
- none: forward computes only the per-row losses and saves the inputs; backward recomputes the
  chunks with the per-row upstream gradient folded into each row's coefficient.
Both backward passes are once_differentiable: differentiating them again raises.

Per row n with target t_n, the loss is c_n * (logsumexp(z_n) - z_n[t_n]) where z = x W^T + b
and c_n is the class weight of t_n (0 for ignored rows), divided by the sum of the non-ignored
rows' weights for "mean". Its derivative with respect to z_n is c_n * (softmax(z_n) -
onehot(t_n)), which the chunk loop multiplies into W (input gradient), x (weight gradient) and
sums (bias gradient).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd._dtype import bfloat16, float16, float32, int64
from retrograd._tensor import Tensor
from retrograd.autograd.function import Function, once_differentiable

if TYPE_CHECKING:
    from retrograd.nn.modules.linear_cross_entropy import LinearCrossEntropyOptions

__all__ = ["linear_cross_entropy"]

_CALLED_TWICE = ("linear_cross_entropy chunked backward called twice; retain_graph=True / "
                 "double backward are not supported.")


def _row_coefficients(target: Tensor, safe_target: Tensor, weight: Tensor | None,
                      ignore_index: int, reduction: str, acc_dtype: Any,
                      upstream: Tensor | None) -> Tensor:
    """c_n: the class weight of each row's target (0 if ignored), over the weight total for
    "mean" (NaN when that total is 0, as cross_entropy), times the upstream gradient when
    recomputing for reduction="none"."""
    ignored = target == ignore_index
    if weight is None:
        coef = (~ignored).to(acc_dtype)
    else:
        coef = retrograd.where(ignored, 0, weight.to(acc_dtype).index_select(0, safe_target))
    if reduction == "mean":
        total = coef.sum()
        coef = coef / retrograd.where(total == 0, math.nan, total)
    if upstream is not None:
        coef = coef * upstream.to(acc_dtype)
    return coef


def _chunked(input: Tensor, linear_weight: Tensor, target: Tensor, linear_bias: Tensor | None,
             weight: Tensor | None, reduction: str, ignore_index: int, batch_chunk_size: int,
             acc_dtype: Any, need_input: bool, need_weight: bool, need_bias: bool,
             upstream: Tensor | None = None) -> tuple:
    """(loss, grad_input, grad_linear_weight, grad_linear_bias) of a 2-D input, `batch_chunk_size`
    rows at a time, in `acc_dtype`; unrequested gradients are None. The loss is a scalar for
    mean/sum and per row for "none" (where it is only computed without `upstream`)."""
    dtype = input.dtype
    if dtype != acc_dtype and not (dtype in (float16, bfloat16) and acc_dtype == float32):
        raise RuntimeError(
            "linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, "
            f"but got {acc_dtype} acc_dtype and {dtype} inputs.")
    num_batches, num_classes = input.shape[0], linear_weight.shape[0]
    if ignore_index < 0 or ignore_index >= num_classes:
        # ignored rows keep an in-range class so the gathers below stay in bounds
        safe_target = retrograd.where(target == ignore_index, 0, target)
    else:
        safe_target = target
    coef = _row_coefficients(target, safe_target, weight, ignore_index, reduction, acc_dtype,
                             upstream)
    # cast only for mixed precision: otherwise a weight of another dtype fails in the matmul
    # with torch's error, as torch's does
    w = linear_weight.to(acc_dtype) if dtype != acc_dtype else linear_weight
    b = linear_bias.to(acc_dtype) if linear_bias is not None else None
    per_row = reduction == "none"
    want_loss = upstream is None
    total = retrograd.zeros((), dtype=acc_dtype)
    rows: list = []
    grad_input_parts: list = []
    grad_weight = retrograd.zeros_like(w) if need_weight else None
    grad_bias = retrograd.zeros(num_classes, dtype=acc_dtype) if need_bias else None
    need_grads = need_input or need_weight or need_bias
    for start in range(0, num_batches, batch_chunk_size):
        size = min(batch_chunk_size, num_batches - start)
        # narrow, not slicing: a target shorter than the input fails as torch's does
        x = input.narrow(0, start, size).to(acc_dtype)
        t = safe_target.narrow(0, start, size)
        k = coef.narrow(0, start, size)
        z = x @ w.T if b is None else retrograd.addmm(b, x, w.T)
        z.sub_(z.amax(1, keepdim=True))  # softmax stability; the chunk's only (B, C) buffer
        if want_loss:
            picked = z.gather(1, t.unsqueeze(1)).squeeze(1)
        denom = z.exp_().sum(1)
        if want_loss:
            row_loss = (denom.log() - picked) * k
            if per_row:
                rows.append(row_loss)
            else:
                total = total + row_loss.sum()
        if not need_grads:
            continue
        z.mul_((k / denom).unsqueeze(1))  # c_n * softmax(z_n): dL/dz without the one-hot
        if grad_bias is not None:
            grad_bias.add_(z.sum(0)).index_add_(0, t, -k)
        if need_input:
            grad_input_parts.append(z @ w - w.index_select(0, t) * k.unsqueeze(1))
        if grad_weight is not None:
            grad_weight.add_(z.T @ x).index_add_(0, t, x * (-k).unsqueeze(1))
    loss: Tensor | None = total
    if per_row:
        loss = None if not want_loss else (
            retrograd.cat(rows) if rows else retrograd.zeros(0, dtype=acc_dtype))
    elif reduction == "mean" and num_batches == 0:
        loss = retrograd.full((), math.nan, dtype=acc_dtype)  # the mean of no rows
    grad_input = None
    if need_input:
        grad_input = (retrograd.cat(grad_input_parts) if grad_input_parts
                      else retrograd.zeros(input.shape, dtype=acc_dtype)).to(dtype)
    return (None if loss is None else loss.to(dtype), grad_input,
            None if grad_weight is None else grad_weight.to(linear_weight.dtype),
            None if grad_bias is None else grad_bias.to(linear_weight.dtype))


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default(Function):
    """reduction mean/sum; its node is torch's custom op's
    GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_defaultBackward."""

    @staticmethod
    def forward(ctx: Any, input: Tensor, linear_weight: Tensor, target: Tensor,
                linear_bias: Tensor | None, weight: Tensor | None, reduction: str,
                ignore_index: int, batch_chunk_size: int, acc_dtype: Any,
                allow_retain_graph: bool, need_input: bool, need_weight: bool,
                need_bias: bool) -> Tensor:
        loss, *grads = _chunked(input, linear_weight, target, linear_bias, weight, reduction,
                                ignore_index, batch_chunk_size, acc_dtype, need_input,
                                need_weight, need_bias)
        ctx.allow_retain_graph = allow_retain_graph
        ctx.precomputed = grads
        return loss

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad: Tensor) -> tuple:
        grads = ctx.precomputed
        if ctx.allow_retain_graph:
            scaled = [None if g is None else g * grad for g in grads]
        else:
            if grads is None:
                raise RuntimeError(_CALLED_TWICE)
            ctx.precomputed = None  # consumed: scaled in place, no gradient-sized copy
            scaled = [None if g is None else g.mul_(grad) for g in grads]
        grad_input, grad_weight, grad_bias = scaled
        return (grad_input, grad_weight, None, grad_bias) + (None,) * 9


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default(
        Function):
    """reduction="none"; backward recomputes from the saved inputs, so retain_graph works."""

    @staticmethod
    def forward(ctx: Any, input: Tensor, linear_weight: Tensor, target: Tensor,
                linear_bias: Tensor | None, weight: Tensor | None, ignore_index: int,
                batch_chunk_size: int, acc_dtype: Any) -> Tensor:
        ctx.save_for_backward(input, linear_weight, target, linear_bias, weight)
        ctx.config = (ignore_index, batch_chunk_size, acc_dtype)
        return _chunked(input, linear_weight, target, linear_bias, weight, "none", ignore_index,
                        batch_chunk_size, acc_dtype, False, False, False)[0]

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad: Tensor) -> tuple:
        input, linear_weight, target, linear_bias, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        need_bias = linear_bias is not None and needs[3]
        if not (needs[0] or needs[1] or need_bias):
            return (None,) * 8
        ignore_index, batch_chunk_size, acc_dtype = ctx.config
        _, grad_input, grad_weight, grad_bias = _chunked(
            input, linear_weight, target, linear_bias, weight, "none", ignore_index,
            batch_chunk_size, acc_dtype, needs[0], needs[1], need_bias, upstream=grad)
        return (grad_input, grad_weight, None, grad_bias) + (None,) * 4


def _chunked_supported(reduction: str, label_smoothing: float, target: Tensor,
                       out_features: tuple, tracing: bool) -> bool:
    return (reduction in {"mean", "sum", "none"} and label_smoothing == 0.0
            and target.dtype == int64 and not out_features and not tracing)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0,
                         options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...); linear_weight may
    be (C, d_1, ..., d_K, in_features) for the K-dimensional loss. `options` selects the
    chunked path (see nn.LinearCrossEntropyOptions)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batch_shape = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch_shape:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    logits_shape = (*batch_shape, num_classes, *out_features)
    # cross_entropy reads a target shaped like the logits as class probabilities
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if options is not None:
        tracing = retrograd.jit.is_tracing()
        if _chunked_supported(reduction, label_smoothing, target, out_features, tracing):
            return _chunked_call(input, linear_weight, target, linear_bias, weight, reduction,
                                 ignore_index, options)
        bias_shape = tuple(linear_bias.shape) if linear_bias is not None else None
        _ws.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
            f"out_features == (). Got reduction={reduction!r}, "
            f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
            f"out_features={out_features}, tracing={tracing}, "
            f"linear_bias.shape={bias_shape}.", stacklevel=2)
    if out_features:
        flat = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((flat, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(flat)
    logits = retrograd.nn.functional.linear(input, linear_weight, linear_bias)
    logits = logits.reshape(logits_shape)
    return retrograd.nn.functional.cross_entropy(
        logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
        label_smoothing=label_smoothing)


def _chunked_call(input: Tensor, linear_weight: Tensor, target: Tensor,
                  linear_bias: Tensor | None, weight: Tensor | None, reduction: str,
                  ignore_index: int, options: LinearCrossEntropyOptions) -> Tensor:
    unbatched = input.dim() == 1
    if unbatched:  # one row of a batch
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    options = options._adjust(num_batches=input.shape[0], in_features=input.shape[1],
                              num_classes=linear_weight.shape[0], dtype=input.dtype,
                              device=input.device)
    chunk, acc_dtype = options.batch_chunk_size, options.acc_dtype
    if reduction == "none":
        result = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default.apply(  # noqa: E501
            input, linear_weight, target, linear_bias, weight, ignore_index, chunk, acc_dtype)
    else:
        if not options.allow_retain_graph and retrograd.compiler.is_compiling():
            # as torch: the compiled backward does not replay the once-only guard
            _ws.warn("linear_cross_entropy: forcing allow_retain_graph=True under "
                     "torch.compile (adds one gradient-sized allocation/call). Construct "
                     "options with allow_retain_graph=True to silence.", stacklevel=3)
            options = dataclasses.replace(options, allow_retain_graph=True)
        grad_on = retrograd.is_grad_enabled()
        result = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default.apply(
            input, linear_weight, target, linear_bias, weight, reduction, ignore_index, chunk,
            acc_dtype, options.allow_retain_graph, input.requires_grad and grad_on,
            linear_weight.requires_grad and grad_on,
            linear_bias is not None and linear_bias.requires_grad and grad_on)
    return result.squeeze(0) if unbatched else result

