"""Folding an eval-mode batch norm into the convolution or linear layer before it:
y = bn(conv(x)) becomes one conv with rescaled weight and shifted bias."""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import retrograd
from retrograd._tensor import Tensor
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]

ConvT = TypeVar("ConvT", bound=Module)
LinearT = TypeVar("LinearT", bound=Module)


def fuse_conv_bn_eval(conv: ConvT, bn: Any, transpose: bool = False) -> ConvT:
    """A copy of `conv` computing bn(conv(x)) (both in eval mode)."""
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor,
                         bn_eps: float, bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """The weight and bias of conv followed by batch norm with these statistics."""
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = retrograd.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = retrograd.ones_like(bn_rm)
    if bn_b is None:
        bn_b = retrograd.zeros_like(bn_rm)
    inv_std = retrograd.rsqrt(bn_rv + bn_eps)
    # output channels are dim 0 of a convolution's weight, dim 1 of a transposed one's
    lead = [1, -1] if transpose else [-1, 1]
    shape = lead + [1] * (len(conv_w.shape) - 2)
    fused_w = (conv_w * (bn_w * inv_std).reshape(shape)).to(dtype=w_dtype)
    fused_b = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: LinearT, bn: Any) -> LinearT:
    """A copy of `linear` computing bn(linear(x)) (both in eval mode)."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    # a one-feature batch norm broadcasts over every output feature
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
            f"got linear.out_features={linear.out_features} and "
            f"bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor,
                           bn_rv: Tensor, bn_eps: float, bn_w: Tensor,
                           bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """The weight and bias of linear followed by batch norm with these statistics."""
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = retrograd.zeros_like(bn_rm)
    scale = bn_w * retrograd.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, linear_w.requires_grad), Parameter(fused_b, linear_b.requires_grad)
