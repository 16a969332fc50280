"""Samples for the pointwise family: arithmetic, math functions, clamp/where, in-place forms."""

import numpy as np

from tests.op_samples import Sample, arr, pos


def inplace(name: str):
    """f(lib, x, *args): x.clone().<name>(*args), so in-place ops run on a non-leaf."""

    def f(lib, x, *args, **kwargs):
        return getattr(x.clone(), name)(*args, **kwargs)

    f.__name__ = f"inplace_{name}"
    return f


def mask(*shape, seed: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, size=shape).astype(bool)


def away_from_ints(*shape, seed: int = 5) -> np.ndarray:
    """Values whose fractional part stays far from 0 and 0.5 (rounding ops' jumps)."""
    rng = np.random.default_rng(seed)
    return rng.integers(-3, 3, size=shape) + rng.uniform(0.1, 0.4, size=shape)


# ops whose backward raises (torch's NotImplemented node) are run on inputs that do not require
# grad, inside a differentiable expression: the op runs, its result is a constant factor
def floor_divide_const(lib, x, y):
    return x * lib.floor_divide(y, 0.7)


def rfloordiv_const(lib, x, y):
    return x * (2.0 // y)


def rmod_const(lib, x, y):
    return x * (2.0 % y)


def floor_divide_inplace_const(lib, x, y):
    return x * y.clone().floor_divide_(0.7)


def iadd_keeps_object(lib, x, y):
    z = x.clone()
    z += y
    z -= 0.5
    z *= y
    z /= 2.0
    return z


def rtruediv(lib, x):
    return 2.0 / x


def rpow(lib, x):
    return 2.0 ** x


def where_scalar(lib, c, x):
    return lib.where(c, x, 0.5)


def where_method(lib, c, x, y):
    return x.where(c, y)


# torch's sgn backward returns a ZeroTensor, which cannot be read back as an array: adding x
# makes the leaf's gradient an ordinary tensor (the node name is checked in test_pointwise_ops)
def sgn_plus(lib, x):
    return lib.sgn(x) + x


def sgn_inplace_plus(lib, x):
    return x.clone().sgn_() + x


def fill_tensor(lib, x, v):
    return x.clone().fill_(v)


SAMPLES = [
    # add / sub / mul / div
    Sample("add", (arr(2, 3), 2), name="int_scalar"),
    Sample("add", (arr(2, 1, 3), arr(4, 1)), {"alpha": -1.5}, name="broadcast_alpha"),
    Sample("operator.add", (1.5, arr(3)), name="radd"),
    Sample("sub", (arr(3), arr(2, 3)), name="broadcast_left"),
    Sample("sub", (arr(2, 3), 1.5), {"alpha": 2}, name="scalar_alpha"),
    Sample("rsub", (arr(2, 3), arr(3)), {"alpha": 2.0}, name="alpha"),
    Sample("rsub", (arr(2, 3), 1.5), name="scalar"),
    Sample("mul", (arr(3, 2, noncontig=True), arr(3, 2, noncontig=True)), name="noncontig"),
    Sample("mul", (arr(0, 2), arr(2)), name="empty"),
    Sample("div", (arr(2, 3), 2.5), name="scalar"),
    Sample("div", (arr(2, 3), pos(2, 3)), {"rounding_mode": "trunc"}, name="trunc"),
    Sample("div", (arr(2, 3), pos(3)), {"rounding_mode": "floor"}, name="floor"),
    Sample("div", (arr(2, 3), pos(3)), {"rounding_mode": None}, name="none"),
    Sample("divide", (arr(2, 3), pos(2, 3)), name="alias"),
    Sample("true_divide", (arr(2, 3), pos(1, 3)), name="alias"),
    Sample(rtruediv, (pos(2, 3),)),
    Sample("operator.truediv", (arr(2, 3), pos(2, 3)), name="op"),
    Sample(floor_divide_const, (arr(2, 3), arr(2, 3)), requires_grad=(True, False)),
    Sample(rfloordiv_const, (arr(2, 3), pos(2, 3)), requires_grad=(True, False)),
    Sample(rmod_const, (arr(2, 3), pos(2, 3)), requires_grad=(True, False)),
    Sample(floor_divide_inplace_const, (arr(2, 3), arr(2, 3)), requires_grad=(True, False)),
    Sample("remainder", (arr(2, 3, high=3), pos(2, 3)), name="tensor"),
    Sample("remainder", (arr(2, 3, high=3), 0.7), name="scalar"),
    Sample("operator.mod", (arr(2, 3, high=3), pos(3)), name="op"),
    Sample("fmod", (arr(2, 3, high=3), pos(2, 3)), name="tensor"),
    Sample("fmod", (arr(2, 3, high=3), 0.7), name="scalar"),
    # pow
    Sample("pow", (pos(2, 3), 2.5), name="scalar_exp"),
    Sample("pow", (arr(2, 3), 2), name="square"),
    Sample("pow", (pos(2, 3), -1.5), name="neg_exp"),
    Sample("pow", (arr(2, 3), 0), name="zero_exp"),
    Sample("pow", (pos(2, 3), arr(2, 3)), name="tensor"),
    Sample("pow", (pos(2, 3), arr(3)), name="broadcast"),
    Sample("pow", (1.7, arr(2, 3)), name="scalar_base"),
    Sample("operator.pow", (pos(3, 2, noncontig=True), 3), name="op"),
    Sample(rpow, (arr(2, 3),)),
    Sample("square", (arr(2, 3),)),
    # unary math
    Sample("neg", (arr(0, 3),), name="empty"),
    Sample("negative", (arr(2, 3),)),
    Sample("abs", (arr(2, 3),)),
    Sample("absolute", (arr(2, 3),)),
    Sample("operator.abs", (arr(3, 2, noncontig=True),), name="op"),
    Sample("sign", (arr(2, 3),)),
    Sample(sgn_plus, (arr(2, 3),)),
    Sample("exp2", (arr(2, 3),)),
    Sample("expm1", (arr(2, 3),)),
    Sample("log2", (pos(2, 3),)),
    Sample("log10", (pos(2, 3),)),
    Sample("log1p", (arr(2, 3, low=-0.5),)),
    Sample("sqrt", (pos(2, 3),)),
    Sample("sqrt", (pos(3, 2, noncontig=True),), name="noncontig"),
    Sample("rsqrt", (pos(2, 3),)),
    Sample("sin", (arr(2, 3),)),
    Sample("cos", (arr(2, 3),)),
    Sample("tan", (arr(2, 3),)),
    Sample("tanh", (arr(3, 2, noncontig=True),), name="noncontig"),
    Sample("sigmoid", (arr(2, 3, low=-4, high=4),)),
    Sample("logit", (arr(2, 3, low=0.1, high=0.9, seed=11),)),
    Sample("logit", (np.array([[0.1, 0.3, 0.5], [0.7, 0.9, 0.45]]),), {"eps": 0.2},
           name="eps"),
    Sample("logit", (np.array([[0.1, 0.3, 0.5], [0.7, 0.9, 0.45]]), 0.6), name="eps_above_half"),
    Sample("reciprocal", (pos(2, 3),)),
    Sample("erf", (arr(2, 3, low=-2, high=2),)),
    Sample("floor", (away_from_ints(2, 3),)),
    Sample("ceil", (away_from_ints(2, 3),)),
    Sample("round", (away_from_ints(2, 3),)),
    Sample("round", (away_from_ints(2, 3) / 10,), {"decimals": 1}, name="decimals"),
    Sample("trunc", (away_from_ints(2, 3),)),
    Sample("fix", (away_from_ints(2, 3),)),
    Sample("frac", (away_from_ints(2, 3),)),
    Sample("Tensor.positive", (arr(2, 3),)),
    # lerp, addcmul, addcdiv
    Sample("lerp", (arr(2, 3), arr(2, 3), 0.3), name="scalar_low"),
    Sample("lerp", (arr(2, 3), arr(3), 0.8), name="scalar_high"),
    Sample("lerp", (arr(2, 3), arr(2, 3), arr(2, 3)), name="tensor"),
    Sample("lerp", (arr(3), arr(2, 3), arr(2, 1)), name="tensor_broadcast"),
    Sample("addcmul", (arr(2, 3), arr(2, 3), arr(3)), name="broadcast"),
    Sample("addcmul", (arr(2, 3), arr(2, 3), arr(2, 3)), {"value": -0.5}, name="value"),
    Sample("addcdiv", (arr(2, 3), arr(2, 3), pos(2, 3)), name="plain"),
    Sample("addcdiv", (arr(3), arr(2, 3), pos(2, 1)), {"value": 2.0}, name="value"),
    # clamp family, where, maximum, minimum
    Sample("clamp", (arr(2, 3), -0.5, 0.5), name="both"),
    Sample("clamp", (arr(2, 3),), {"min": -0.3}, name="min"),
    Sample("clamp", (arr(2, 3),), {"max": 0.3}, name="max"),
    Sample("clamp", (arr(2, 3), arr(2, 3, low=-1, high=-0.2), arr(3, low=0.2)),
           name="tensors"),
    Sample("clamp", (arr(2, 3),), {"min": arr(3, low=-1, high=0.5)}, name="tensor_min"),
    Sample("clamp", (arr(2, 3),), {"max": arr(2, 1, low=-0.5, high=1)}, name="tensor_max"),
    Sample("clamp", (arr(2, 3), arr(3, low=0.3, high=1.0), arr(3, low=-1, high=0.2)),
           name="min_above_max"),
    Sample("clip", (arr(2, 3), -0.5, 0.5), name="alias"),
    Sample("clamp_min", (arr(2, 3), 0.1), name="scalar"),
    Sample("clamp_min", (arr(2, 3), arr(3)), name="tensor"),
    Sample("clamp_max", (arr(2, 3), 0.1), name="scalar"),
    Sample("clamp_max", (arr(2, 3), arr(2, 1)), name="tensor"),
    Sample("where", (mask(2, 3), arr(2, 3), arr(2, 3)), name="same"),
    Sample("where", (mask(3), arr(2, 1), arr(3)), name="broadcast"),
    Sample("where", (mask(3, 2), arr(3, 2, noncontig=True), arr(3, 2)), name="noncontig"),
    Sample(where_scalar, (mask(2, 3), arr(2, 3))),
    Sample(where_method, (mask(2, 3), arr(2, 3), arr(3))),
    Sample("maximum", (arr(2, 3), arr(3)), name="broadcast"),
    Sample("minimum", (arr(2, 3), arr(2, 3)), name="same"),
    # in-place forms
    Sample(inplace("add_"), (arr(2, 3), arr(3)), name="tensor"),
    Sample(inplace("add_"), (arr(2, 3), 2.0), {"alpha": 3}, name="alpha"),
    Sample(inplace("sub_"), (arr(2, 3), arr(2, 3)), {"alpha": 0.5}),
    Sample(inplace("mul_"), (arr(2, 3), arr(2, 1))),
    Sample(inplace("mul_"), (arr(2, 3), 1.5), name="scalar"),
    Sample(inplace("div_"), (arr(2, 3), pos(3))),
    Sample(inplace("div_"), (arr(2, 3), pos(3)), {"rounding_mode": "floor"}, name="floor"),
    Sample(inplace("true_divide_"), (arr(2, 3), 2.0)),
    Sample(iadd_keeps_object, (arr(2, 3), pos(2, 3))),
    Sample(inplace("remainder_"), (arr(2, 3), pos(3)), name="tensor"),
    Sample(inplace("remainder_"), (arr(2, 3), 0.7), name="scalar"),
    Sample(inplace("fmod_"), (arr(2, 3), pos(3)), name="tensor"),
    Sample(inplace("fmod_"), (arr(2, 3), 0.7), name="scalar"),
    Sample(inplace("pow_"), (pos(2, 3), 1.5), name="scalar"),
    Sample(inplace("pow_"), (pos(2, 3), arr(3)), name="tensor"),
    Sample(inplace("square_"), (arr(2, 3),)),
    Sample(inplace("lerp_"), (arr(2, 3), arr(2, 3), 0.25), name="scalar"),
    Sample(inplace("lerp_"), (arr(2, 3), arr(3), arr(2, 3)), name="tensor"),
    Sample(inplace("addcmul_"), (arr(2, 3), arr(3), arr(2, 3)), {"value": 0.5}),
    Sample(inplace("addcdiv_"), (arr(2, 3), arr(2, 3), pos(3)), {"value": -2.0}),
    Sample(inplace("clamp_"), (arr(2, 3), -0.4, 0.4), name="scalar"),
    Sample(inplace("clamp_"), (arr(2, 3), arr(3, low=-1, high=0), arr(3, low=0)),
           name="tensor"),
    Sample(inplace("clip_"), (arr(2, 3), -0.4, None), name="min_only"),
    Sample(inplace("clamp_min_"), (arr(2, 3), 0.0), name="scalar"),
    Sample(inplace("clamp_min_"), (arr(2, 3), arr(3)), name="tensor"),
    Sample(inplace("clamp_max_"), (arr(2, 3), 0.0), name="scalar"),
    Sample(inplace("clamp_max_"), (arr(2, 3), arr(3)), name="tensor"),
    Sample(inplace("round_"), (away_from_ints(2, 3),)),
    Sample(inplace("round_"), (away_from_ints(2, 3) / 10,), {"decimals": 1}, name="decimals"),
    Sample(inplace("zero_"), (arr(2, 3),)),
    Sample(inplace("conj_physical_"), (arr(2, 3),)),
    Sample(inplace("fill_"), (arr(2, 3), 1.5), name="scalar"),
    Sample(fill_tensor, (arr(2, 3), arr())),
    Sample(inplace("neg_"), (arr(2, 3),)),
    Sample(inplace("negative_"), (arr(2, 3),)),
    Sample(inplace("abs_"), (arr(2, 3),)),
    Sample(inplace("absolute_"), (arr(2, 3),)),
    Sample(inplace("sign_"), (arr(2, 3),)),
    Sample(sgn_inplace_plus, (arr(2, 3),)),
    Sample(inplace("exp_"), (arr(3, 2, noncontig=True),)),
    Sample(inplace("exp2_"), (arr(2, 3),)),
    Sample(inplace("expm1_"), (arr(2, 3),)),
    Sample(inplace("log_"), (pos(2, 3),)),
    Sample(inplace("log2_"), (pos(2, 3),)),
    Sample(inplace("log10_"), (pos(2, 3),)),
    Sample(inplace("log1p_"), (pos(2, 3),)),
    Sample(inplace("sqrt_"), (pos(2, 3),)),
    Sample(inplace("rsqrt_"), (pos(2, 3),)),
    Sample(inplace("sin_"), (arr(2, 3),)),
    Sample(inplace("cos_"), (arr(2, 3),)),
    Sample(inplace("tan_"), (arr(2, 3),)),
    Sample(inplace("tanh_"), (arr(2, 3),)),
    Sample(inplace("sigmoid_"), (arr(2, 3),)),
    Sample(inplace("logit_"), (arr(2, 3, low=0.1, high=0.9, seed=12), 0.2)),
    Sample(inplace("reciprocal_"), (pos(2, 3),)),
    Sample(inplace("erf_"), (arr(2, 3),)),
    Sample(inplace("floor_"), (away_from_ints(2, 3),)),
    Sample(inplace("ceil_"), (away_from_ints(2, 3),)),
    Sample(inplace("trunc_"), (away_from_ints(2, 3),)),
    Sample(inplace("fix_"), (away_from_ints(2, 3),)),
    Sample(inplace("frac_"), (away_from_ints(2, 3),)),
    # in-place comparisons: torch keeps a node with zero gradients
    *[Sample(inplace(f"{n}_"), (arr(2, 3), 0.1), name="scalar")
      for n in ("eq", "ne", "lt", "le", "gt", "ge")],
    *[Sample(inplace(f"{n}_"), (arr(2, 3), arr(3)), name="tensor")
      for n in ("eq", "ne", "lt", "le", "gt", "ge")],
]
