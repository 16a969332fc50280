"""Samples of the multi-tensor ops (`_foreach_*`) and the fused optimizer steps (`_fused_*`).

Most have no derivative (optimizers run them under no_grad), so only parity with torch is
checked: the in-place ones are sampled by what they leave in their first list. The out-of-place
_foreach_maximum is differentiable and sampled as the other ops are (at the end)."""

from __future__ import annotations

import numpy as np

from tests.op_samples import Sample, arr, pos

NO_GRAD = (False,) * 32


def _xs(seed: int) -> list:
    return [arr(2, 3, seed=seed), arr(4, seed=seed + 1), arr(seed=seed + 2)]


def _ps(seed: int) -> list:
    return [pos(2, 3, seed=seed), pos(4, seed=seed + 1), pos(seed=seed + 2)]


def _inplace(name: str, *rest, **kwargs):
    """lib.<name>(self, *rest) for an in-place op: its result is the written list."""

    def f(lib, self, *args):
        getattr(lib, name)(self, *args, **kwargs)
        return self

    f.__name__ = name
    return f


def _sample(name: str, *args, tag: str = "", **kwargs) -> Sample:
    fn = _inplace(name, **kwargs) if name.endswith("_") else name
    return Sample(fn, args, name=tag, requires_grad=NO_GRAD, gradcheck=False)


def _fused_adam(lib, params, grads, m, v, vmax, steps, decoupled=False, **kw):
    fn = lib._fused_adamw_ if decoupled else lib._fused_adam_
    vmax = vmax if kw["amsgrad"] else []
    fn(params, grads, m, v, vmax, steps, lr=0.1, beta1=0.9, beta2=0.99, eps=1e-8, **kw)
    return params + m + v + vmax


def _fused_sgd(lib, params, grads, bufs, **kw):
    lib._fused_sgd_(params, grads, bufs, lr=0.1, dampening=0.0, **kw)
    return params + bufs


def _adam_args() -> tuple:
    return (_xs(1), _xs(2), _xs(3), _ps(4), _ps(5), [np.array(3.0), np.array(3.0),
                                                    np.array(3.0)])


SAMPLES = [
    _sample("_foreach_add_", _xs(1), 0.5, tag="Scalar"),
    _sample("_foreach_add_", _xs(1), _xs(2), tag="List"),
    _sample("_foreach_add_", _xs(1), _xs(2), alpha=-0.3, tag="List_alpha"),
    _sample("_foreach_add_", _xs(1), [0.5, -1.0, 2.0], tag="ScalarList"),
    _sample("_foreach_add_", _xs(1), np.array(1.5), alpha=2.0, tag="Tensor"),
    _sample("_foreach_add", _xs(1), _xs(2), alpha=0.1, tag="List"),
    _sample("_foreach_add", _xs(1), 0.25, tag="Scalar"),
    _sample("_foreach_sub_", _xs(1), 0.5, tag="Scalar"),
    _sample("_foreach_sub_", _xs(1), _xs(2), alpha=2.0, tag="List"),
    _sample("_foreach_mul_", _xs(1), 0.9, tag="Scalar"),
    _sample("_foreach_mul_", _xs(1), _xs(2), tag="List"),
    _sample("_foreach_mul_", _xs(1), [0.5, -1.0, 2.0], tag="ScalarList"),
    _sample("_foreach_mul_", _xs(1), np.array(0.5), tag="Tensor"),
    _sample("_foreach_div_", _xs(1), 3.0, tag="Scalar"),
    _sample("_foreach_div_", _xs(1), _ps(2), tag="List"),
    _sample("_foreach_div_", _xs(1), [0.5, 3.0, 2.0], tag="ScalarList"),
    _sample("_foreach_addcmul_", _xs(1), _xs(2), _xs(3), 0.1, tag="Scalar"),
    _sample("_foreach_addcmul_", _xs(1), _xs(2), _xs(3), [0.1, 1.0, -2.0], tag="ScalarList"),
    _sample("_foreach_addcdiv_", _xs(1), _xs(2), _ps(3), -0.1, tag="Scalar"),
    _sample("_foreach_addcdiv_", _xs(1), _xs(2), _ps(3), [0.1, 1.0, -2.0], tag="ScalarList"),
    _sample("_foreach_lerp_", _xs(1), _xs(2), 0.1, tag="Scalar"),
    _sample("_foreach_lerp_", _xs(1), _xs(2), 0.9, tag="Scalar_high"),
    _sample("_foreach_lerp_", _xs(1), _xs(2), [0.1, 0.7, 1.0], tag="ScalarList"),
    _sample("_foreach_maximum_", _xs(1), _xs(2), tag="List"),
    _sample("_foreach_sqrt", _ps(1)),
    _sample("_foreach_sqrt_", _ps(1)),
    _sample("_foreach_neg", _xs(1)),
    _sample("_foreach_neg_", _xs(1)),
    Sample(_fused_adam, _adam_args(), {"weight_decay": 0.1, "amsgrad": True, "maximize": False},
           name="fused_adam", requires_grad=NO_GRAD, gradcheck=False),
    Sample(_fused_adam, _adam_args(), {"weight_decay": 0.1, "amsgrad": False, "maximize": True,
                                       "decoupled": True},
           name="fused_adamw", requires_grad=NO_GRAD, gradcheck=False),
    Sample(_fused_adam, _adam_args(), {"weight_decay": 0.0, "amsgrad": False, "maximize": False},
           name="fused_adam_float64", requires_grad=NO_GRAD, gradcheck=False,
           parity_dtype="float64"),
    Sample(_fused_sgd, (_xs(1), _xs(2), _xs(3)),
           {"weight_decay": 0.1, "momentum": 0.9, "nesterov": True, "maximize": False,
            "is_first_step": False}, name="fused_sgd", requires_grad=NO_GRAD, gradcheck=False),
    Sample(_fused_sgd, (_xs(1), _xs(2), _xs(3)),
           {"weight_decay": 0.0, "momentum": 0.9, "nesterov": False, "maximize": True,
            "is_first_step": True}, name="fused_sgd_first", requires_grad=NO_GRAD,
           gradcheck=False),
]

# the out-of-place maximum is differentiable: gradcheck, gradgradcheck and parity
SAMPLES += [
    Sample("_foreach_maximum", (_xs(40), _xs(41)), name="List"),
    Sample("_foreach_maximum", (_xs(42), 0.1), name="Scalar"),
    Sample("_foreach_maximum", (_xs(43), [0.1, -0.2, 0.3]), name="ScalarList"),
    Sample("_foreach_maximum", (_xs(44), np.array(0.2)), requires_grad=(True,) * 3 + (False,),
           name="zero_dim_tensor"),
    Sample("_foreach_maximum", (_xs(45), _xs(46)), requires_grad=(True,) * 3 + (False,) * 3,
           name="List_self_only"),
]
