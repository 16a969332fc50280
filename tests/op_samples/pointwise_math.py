"""Samples for the element-wise math functions: trigonometric and hyperbolic functions and their
inverses, atan2, hypot, sinc, angle conversions, the erf family, xlogy, copysign, ... and
retrograd.special's names for them.

Inputs stay inside each function's smooth domain (|x| < 1 for asin/atanh, x > 1 for acosh,
away from 0 for copysign's self, ...), so finite differences work.
"""

import numpy as np

from tests.op_samples import Sample, arr, pos
from tests.op_samples.pointwise import inplace


def inside_unit(*shape, seed: int = 31, **kw):
    return arr(*shape, low=-0.8, high=0.8, seed=seed, **kw)


def above_one(*shape, seed: int = 32, **kw):
    return arr(*shape, low=1.2, high=3.0, seed=seed, **kw)


def away_from_zero(*shape, seed: int = 33, **kw):
    """Values with |x| in [0.3, 1.5] and both signs."""
    a = arr(*shape, low=0.3, high=1.5, seed=seed, **kw)
    signs = np.where(np.arange(a.size).reshape(a.shape) % 2 == 0, -1.0, 1.0)
    return a * signs


_UNARY = [
    ("sinh", arr), ("cosh", arr), ("asinh", arr), ("acosh", above_one),
    ("atanh", inside_unit), ("asin", inside_unit), ("acos", inside_unit), ("atan", arr),
]
_ALIASES = {"asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "asin": "arcsin",
            "acos": "arccos", "atan": "arctan"}


_NO_INPLACE_DERIVATIVE = ("asinh", "acosh", "atanh")


def constant_factor(name: str):
    """f(lib, x, a): x * a.clone().<name>(), for in-place ops whose backward raises."""

    def f(lib, x, a):
        return x * getattr(a.clone(), name)()

    f.__name__ = f"{name}_const"
    return f


def heaviside_const(lib, x, a, values):
    """heaviside has no derivative (torch's NotImplemented node): a constant factor here."""
    return x * lib.heaviside(a, values)


def heaviside_inplace_const(lib, x, a, values):
    return x * a.clone().heaviside_(values)


SAMPLES = [
    # trigonometric and hyperbolic functions, their aliases and in-place forms
    *[Sample(name, (make(2, 3),)) for name, make in _UNARY],
    *[Sample(f"Tensor.{name}", (make(3, 2, noncontig=True),), name="noncontig")
      for name, make in _UNARY],
    *[Sample(inplace(f"{name}_"), (make(2, 3),)) for name, make in _UNARY
      if name not in _NO_INPLACE_DERIVATIVE],
    *[Sample(alias, (make(3),), name="alias") for name, make in _UNARY
      if (alias := _ALIASES.get(name))],
    *[Sample(inplace(f"{_ALIASES[name]}_"), (make(3),), name="alias")
      for name, make in _UNARY if name in ("asin", "acos", "atan")],
    # torch's asinh_, acosh_, atanh_ have a backward that raises: run as constant factors
    *[Sample(constant_factor(f"{name}_"), (arr(2, 3), make(2, 3)), requires_grad=(True, False))
      for name, make in _UNARY if name in _NO_INPLACE_DERIVATIVE],
    *[Sample(constant_factor(f"{_ALIASES[name]}_"), (arr(3), make(3)), name="alias",
             requires_grad=(True, False))
      for name, make in _UNARY if name in _NO_INPLACE_DERIVATIVE],
    Sample("sinh", (arr(0, 2),), name="empty"),
    Sample("atan2", (arr(2, 3), away_from_zero(2, 3)), name="same"),
    Sample("atan2", (arr(2, 1, 3), away_from_zero(4, 1)), name="broadcast"),
    Sample("arctan2", (arr(3, 2, noncontig=True), away_from_zero(3, 2)), name="alias"),
    Sample(inplace("atan2_"), (arr(2, 3), away_from_zero(3))),
    Sample(inplace("arctan2_"), (arr(2, 3), away_from_zero(2, 3)), name="alias"),
    Sample("hypot", (away_from_zero(2, 3), arr(2, 3)), name="same"),
    Sample("hypot", (away_from_zero(2, 3, seed=40), arr(3, 1, 1)), name="broadcast"),
    Sample("Tensor.hypot", (away_from_zero(3, 2, noncontig=True), arr(2)), name="method"),
    Sample(inplace("hypot_"), (away_from_zero(2, 3), arr(3))),
    Sample("sinc", (away_from_zero(2, 3),)),
    Sample("sinc", (arr(3, 2, noncontig=True, low=-3, high=3),), name="noncontig"),
    Sample(inplace("sinc_"), (away_from_zero(2, 3),)),
    Sample("deg2rad", (arr(2, 3, low=-180, high=180),)),
    Sample(inplace("deg2rad_"), (arr(2, 3),)),
    Sample("rad2deg", (arr(3, 2, noncontig=True),)),
    Sample(inplace("rad2deg_"), (arr(2, 3),)),
    # erf family
    Sample("erfc", (arr(2, 3, low=-2, high=2),)),
    Sample("Tensor.erfc", (arr(3, 2, noncontig=True),), name="noncontig"),
    Sample(inplace("erfc_"), (arr(2, 3),)),
    Sample("erfinv", (inside_unit(2, 3),)),
    Sample("Tensor.erfinv", (inside_unit(3, 2, noncontig=True),), name="noncontig"),
    Sample(inplace("erfinv_"), (inside_unit(2, 3),)),
    # logaddexp, xlogy, copysign
    Sample("logaddexp", (arr(2, 3), arr(2, 3)), name="same"),
    Sample("logaddexp", (arr(2, 1), arr(3, low=-3, high=3)), name="broadcast"),
    Sample("logaddexp2", (arr(3, 2, noncontig=True), arr(2)),),
    Sample("xlogy", (arr(2, 3), pos(2, 3)), name="tensor"),
    Sample("xlogy", (arr(2, 3), pos(3)), name="broadcast"),
    Sample("xlogy", (1.5, pos(2, 3)), name="scalar_self"),
    Sample("xlogy", (arr(2, 3), 2.5), name="scalar_other"),
    Sample("Tensor.xlogy", (arr(3, 2, noncontig=True), pos(3, 2)), name="method"),
    Sample(inplace("xlogy_"), (arr(2, 3), pos(2, 3)), name="tensor"),
    Sample(inplace("xlogy_"), (arr(2, 3), 0.5), name="scalar"),
    Sample("copysign", (away_from_zero(2, 3), away_from_zero(2, 3, seed=41)), name="tensor"),
    Sample("copysign", (away_from_zero(2, 3), -1.5), name="scalar"),
    Sample("copysign", (away_from_zero(2, 3), away_from_zero(3, seed=42)),
           name="broadcast"),
    Sample(inplace("copysign_"), (away_from_zero(2, 3), away_from_zero(3, seed=43)),
           name="tensor"),
    Sample(inplace("copysign_"), (away_from_zero(2, 3), 2.0), name="scalar"),
    # nan_to_num (finite samples: its gradient is 0 only where the input is not finite)
    Sample("nan_to_num", (arr(2, 3),)),
    Sample("nan_to_num", (arr(3, 2, noncontig=True),), {"nan": 1.0, "posinf": 2.0},
           name="values"),
    Sample(inplace("nan_to_num_"), (arr(2, 3),)),
    # float_power: computes in float64
    Sample("float_power", (pos(2, 3), arr(2, 3)), name="tensor"),
    Sample("float_power", (pos(2, 3), 2.5), name="scalar_exp"),
    Sample("float_power", (1.7, arr(2, 3)), name="scalar_base"),
    Sample("Tensor.float_power", (pos(2, 3), arr(3)), name="method"),
    # fmax, fmin (no ties: the gradient jumps there)
    Sample("fmax", (arr(2, 3), arr(2, 3, seed=44)), name="same"),
    Sample("fmax", (arr(2, 3), arr(3, seed=45)), name="broadcast"),
    Sample("fmin", (arr(3, 2, noncontig=True), arr(3, 2, seed=46)), name="same"),
    Sample("fmin", (arr(2, 1), arr(3, seed=47)), name="broadcast"),
    # ldexp, frexp, nextafter, i0
    Sample("ldexp", (arr(2, 3), arr(2, 3, low=-2, high=2)), name="float_exp"),
    Sample("Tensor.ldexp", (arr(2, 3), arr(3, low=-2, high=2)), name="method"),
    Sample(inplace("ldexp_"), (arr(2, 3), arr(2, 3, low=-2, high=2))),
    Sample("frexp", (away_from_zero(2, 3),)),
    Sample("Tensor.frexp", (away_from_zero(3, 2, noncontig=True),), name="noncontig"),
    Sample("nextafter", (arr(2, 3), arr(2, 3, seed=48)), gradgrad=False),
    Sample(inplace("nextafter_"), (arr(2, 3), arr(3, seed=49)), gradgrad=False),
    Sample("i0", (arr(2, 3, low=-3, high=3),)),
    Sample("Tensor.i0", (arr(3, 2, noncontig=True),), name="noncontig"),
    Sample(inplace("i0_"), (arr(2, 3),)),
    # retrograd.special (the ops of their own, and torch.special's names for others)
    Sample("special.i0e", (arr(2, 3, low=-3, high=3),)),
    Sample("special.i1", (arr(2, 3, low=-3, high=3),)),
    Sample("special.i1", (arr(3, 2, noncontig=True),), name="noncontig"),
    Sample("special.i1e", (arr(2, 3, low=-3, high=3),)),
    Sample("special.i0", (arr(3),)),
    Sample("special.erfcx", (arr(2, 3, low=-2, high=3),)),
    Sample("special.ndtri", (arr(2, 3, low=0.05, high=0.95),)),
    Sample("special.log_ndtr", (arr(2, 3, low=-4, high=3),)),
    Sample("special.ndtr", (arr(2, 3, low=-2, high=2),), check_node=False),
    Sample("special.entr", (pos(2, 3, low=0.2, high=2.0),)),
    Sample("special.xlog1py", (arr(2, 3), pos(2, 3)), name="tensor"),
    Sample("special.xlog1py", (arr(2, 3), pos(3)), name="broadcast"),
    Sample("special.xlog1py", (1.5, pos(2, 3)), name="scalar_self"),
    Sample("special.xlog1py", (arr(2, 3), 0.5), name="scalar_other"),
    Sample("special.xlogy", (arr(2, 3), pos(2, 3))),
    Sample("special.erf", (arr(2, 3),)),
    Sample("special.erfc", (arr(2, 3),)),
    Sample("special.erfinv", (inside_unit(2, 3),)),
    Sample("special.expit", (arr(2, 3, low=-3, high=3),)),
    Sample("special.exp2", (arr(2, 3),)),
    Sample("special.expm1", (arr(2, 3),)),
    Sample("special.log1p", (pos(2, 3),)),
    Sample("special.logit", (arr(2, 3, low=0.1, high=0.9),)),
    Sample("special.logit", (arr(2, 3, low=0.1, high=0.9),), {"eps": 0.2}, name="eps"),
    Sample("special.sinc", (away_from_zero(2, 3),)),
    Sample("special.logsumexp", (arr(2, 3), 1)),
    Sample("special.softmax", (arr(2, 3), 1)),
    Sample("special.log_softmax", (arr(2, 3), 0)),
    Sample("special.round", (np.array([[0.12, 1.37, -2.61], [0.44, -0.73, 2.18]]),),
           {"decimals": 1}),
    Sample(heaviside_const, (arr(2, 3), away_from_zero(2, 3), arr(3)),
           requires_grad=(True, False, False)),
    Sample(heaviside_inplace_const, (arr(2, 3), away_from_zero(2, 3), arr(2, 3)),
           requires_grad=(True, False, False)),
]
