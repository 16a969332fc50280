"""Pointwise ops against torch over every dtype pair: result dtypes, values, and errors.

Each case runs the same call on retrograd and torch with tensors of bool, integer, float16,
bfloat16, float32 and float64 dtype (with dims and zero-dim) and with Python bool/int/float
scalars, and requires the same result dtype and values, or the same exception type and message.
Where torch rejects a Python number for a Tensor argument with a TypeError, retrograd accepts it
(those cases are skipped).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64"]
INTS = {"bool", "uint8", "int8", "int16", "int32", "int64"}
A = [[-2.5, -1, 0], [1, 2.25, 3]]
B = [[3, -2, 1.5], [2, 5, -3]]
SPECIAL = [[-2.5, -1, 0, 0.5], [1, 2.25, float("inf"), float("nan")]]
SCALARS = [True, 3, -2, 2.5, 0.5]


def values(base, dtype: str):
    if dtype == "bool":
        return [[int(round(v)) % 2 == 0 for v in row] for row in base]
    if dtype == "uint8":
        return [[abs(int(v)) for v in row] for row in base]
    if dtype in INTS:
        return [[int(v) for v in row] for row in base]
    return base


def make(lib, base, dtype: str, zero_dim: bool = False):
    v = values(base, dtype)
    return lib.tensor(v[1][1] if zero_dim else v, dtype=getattr(lib, dtype))


def as_float64(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy().astype(np.float64)
    return np.asarray(t.detach()._data).astype(np.float64)


def outcome(fn, lib, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(lib)(*args, **kwargs), None
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return None, e


def mismatch(label: str, fn, torch_args, our_args, kwargs=None) -> str | None:
    kwargs = kwargs or {}
    t, terr = outcome(fn, torch, torch_args, kwargs)
    o, oerr = outcome(fn, retrograd, our_args, kwargs)
    if isinstance(terr, TypeError) and ("must be Tensor" in str(terr)
                                        or "invalid combination" in str(terr)):
        return None  # torch refuses a Python number here; retrograd accepts it
    if terr is not None or oerr is not None:
        if terr is None or oerr is None or type(terr) is not type(oerr) or str(terr) != str(oerr):
            return f"{label}: torch {terr!r} / retrograd {oerr!r}"
        return None
    if str(t.dtype).replace("torch.", "") != o.dtype.name:
        return f"{label}: dtype torch {t.dtype} / retrograd {o.dtype}"
    if tuple(t.shape) != tuple(o.shape):
        return f"{label}: shape torch {tuple(t.shape)} / retrograd {tuple(o.shape)}"
    tol = 1e-2 if t.dtype in (torch.float16, torch.bfloat16) else 1e-6
    a, b = as_float64(t), as_float64(o)
    if not np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True):
        return f"{label}: values torch {a.ravel()} / retrograd {b.ravel()}"
    return None


BINARY = {
    "add": lambda L: L.add,
    "add_alpha": lambda L: lambda a, b: L.add(a, b, alpha=2),
    "sub": lambda L: L.sub,
    "mul": lambda L: L.mul,
    "div": lambda L: L.div,
    "div_floor": lambda L: lambda a, b: L.div(a, b, rounding_mode="floor"),
    "div_trunc": lambda L: lambda a, b: L.div(a, b, rounding_mode="trunc"),
    "floordiv_op": lambda L: lambda a, b: a // b,
    "remainder": lambda L: L.remainder,
    "fmod": lambda L: L.fmod,
    "pow": lambda L: L.pow,
    "maximum": lambda L: L.maximum,
    "minimum": lambda L: L.minimum,
    "eq": lambda L: L.eq,
    "ne_op": lambda L: lambda a, b: a != b,
    "lt": lambda L: L.lt,
    "ge_op": lambda L: lambda a, b: a >= b,
    "logical_and": lambda L: L.logical_and,
    "logical_xor": lambda L: L.logical_xor,
    "bitwise_and": lambda L: L.bitwise_and,
    "or_op": lambda L: lambda a, b: a | b,
    "xor_op": lambda L: lambda a, b: a ^ b,
    "lshift": lambda L: L.bitwise_left_shift,
    "rshift_op": lambda L: lambda a, b: a >> b,
    "where": lambda L: lambda a, b: L.where(a > 0, a, b),
    "clamp_min_tensor": lambda L: lambda a, b: L.clamp(a, min=b),
    "clamp_max_tensor": lambda L: lambda a, b: L.clamp_max(a, b),
    "lerp": lambda L: lambda a, b: L.lerp(a, b, 0.3),
    "addcmul": lambda L: lambda a, b: L.addcmul(a, b, b, value=2),
    "addcdiv": lambda L: lambda a, b: L.addcdiv(a, a, b, value=2),
    "isclose": lambda L: L.isclose,
    "add_": lambda L: lambda a, b: a.clone().add_(b),
    "sub_": lambda L: lambda a, b: a.clone().sub_(b),
    "mul_": lambda L: lambda a, b: a.clone().mul_(b),
    "div_": lambda L: lambda a, b: a.clone().div_(b),
    "div_floor_": lambda L: lambda a, b: a.clone().div_(b, rounding_mode="floor"),
    "pow_": lambda L: lambda a, b: a.clone().pow_(b),
    "remainder_": lambda L: lambda a, b: a.clone().remainder_(b),
    "iadd": lambda L: lambda a, b: a.clone().__iadd__(b),
    "imul": lambda L: lambda a, b: a.clone().__imul__(b),
    "itruediv": lambda L: lambda a, b: a.clone().__itruediv__(b),
    "iand": lambda L: lambda a, b: a.clone().__iand__(b),
    "lt_": lambda L: lambda a, b: a.clone().lt_(b),
    "clamp_": lambda L: lambda a, b: a.clone().clamp_(b, None),
}

REFLECTED = {
    "radd": lambda L: lambda s, a: s + a,
    "rsub": lambda L: lambda s, a: s - a,
    "rmul": lambda L: lambda s, a: s * a,
    "rtruediv": lambda L: lambda s, a: s / a,
    "rpow": lambda L: lambda s, a: s ** a,
    "rmod": lambda L: lambda s, a: s % a,
    "rfloordiv": lambda L: lambda s, a: s // a,
    "rand": lambda L: lambda s, a: s & a,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_tensor_pairs(name):
    fn = BINARY[name]
    bad = []
    for da, db in itertools.product(DTYPES, DTYPES):
        for za, zb in ((False, False), (False, True), (True, False)):
            if (za or zb) and da == db:
                continue
            label = f"{name}({da}{'[0d]' if za else ''}, {db}{'[0d]' if zb else ''})"
            r = mismatch(label, fn, (make(torch, A, da, za), make(torch, B, db, zb)),
                         (make(retrograd, A, da, za), make(retrograd, B, db, zb)))
            if r:
                bad.append(r)
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_python_scalars(name):
    fn = BINARY[name]
    bad = []
    for d in DTYPES:
        for s in SCALARS:
            r = mismatch(f"{name}({d}, {s!r})", fn, (make(torch, A, d), s),
                         (make(retrograd, A, d), s))
            if r:
                bad.append(r)
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("name", sorted(REFLECTED))
def test_reflected_operators(name):
    fn = REFLECTED[name]
    bad = []
    for d in DTYPES:
        for s in SCALARS:
            r = mismatch(f"{name}({s!r}, {d})", fn, (s, make(torch, B, d)),
                         (s, make(retrograd, B, d)))
            if r:
                bad.append(r)
    assert not bad, "\n".join(bad[:20])


UNARY = ["neg", "negative", "abs", "absolute", "sign", "sgn", "exp", "exp2", "log", "log2",
         "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid",
         "reciprocal", "square", "floor", "ceil", "round", "trunc", "fix", "frac", "relu",
         "positive", "logical_not", "bitwise_not", "isnan", "isinf", "isfinite", "isposinf",
         "isneginf", "signbit", "erf"]
FUNCTIONAL = ["relu", "relu6", "gelu", "silu", "softplus", "elu", "leaky_relu", "hardtanh",
              "selu", "mish", "hardsigmoid", "hardswish", "logsigmoid", "sigmoid", "tanh"]


def _unary_cases(dtype: str):
    yield from ([SPECIAL, B] if dtype not in INTS else [B])


@pytest.mark.parametrize("name", UNARY)
def test_unary_all_dtypes(name):
    bad = []
    for d in DTYPES:
        for base in _unary_cases(d):
            r = mismatch(f"{name}({d})", lambda L: getattr(L, name), (make(torch, base, d),),
                         (make(retrograd, base, d),))
            if r:
                bad.append(r)
            if hasattr(torch.Tensor, name + "_"):
                r = mismatch(f"{name}_({d})", lambda L: lambda x: getattr(x.clone(), name + "_")(),
                             (make(torch, base, d),), (make(retrograd, base, d),))
                if r:
                    bad.append(r)
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("name", FUNCTIONAL)
def test_activations_all_dtypes(name):
    bad = []
    for d in DTYPES:
        # gelu(inf) is nan in torch's erf-based kernel, inf here: finite values only for it
        for base in ([B] if name == "gelu" else _unary_cases(d)):
            r = mismatch(f"F.{name}({d})", lambda L: getattr(L.nn.functional, name),
                         (make(torch, base, d),), (make(retrograd, base, d),))
            if r:
                bad.append(r)
    assert not bad, "\n".join(bad[:20])


SCALAR_ARG_CASES = [
    ("pow", (2,)), ("pow", (3,)), ("pow", (0.5,)), ("pow", (-1,)), ("pow", (0,)), ("pow", (-2.5,)),
    ("pow", (True,)), ("clamp", (0, 1)), ("clamp", (None, 1.5)), ("clamp", (-1, None)),
    ("clamp", (0.5, 0.2)), ("clamp", (True, None)), ("clamp_min", (0.5,)), ("clamp_max", (1,)),
    ("remainder", (0.7,)), ("fmod", (-2,)), ("round", ()), ("lerp", None),
]


@pytest.mark.parametrize("name,args", [c for c in SCALAR_ARG_CASES if c[1] is not None],
                         ids=lambda x: repr(x))
def test_scalar_arguments(name, args):
    bad = []
    for d in DTYPES:
        for base in _unary_cases(d):
            r = mismatch(f"{name}({d}, {args})", lambda L: getattr(L, name),
                         (make(torch, base, d), *args), (make(retrograd, base, d), *args))
            if r:
                bad.append(r)
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("kwargs", [{"decimals": 1}, {"decimals": -1}, {"decimals": 0}])
def test_round_decimals(kwargs):
    bad = []
    for d in DTYPES:
        for base in _unary_cases(d):
            r = mismatch(f"round({d}, {kwargs})", lambda L: L.round, (make(torch, base, d),),
                         (make(retrograd, base, d),), kwargs)
            if r:
                bad.append(r)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("kwargs", [{"approximate": "tanh"}, {"beta": 2, "threshold": 1}])
def test_activation_options(kwargs):
    name = "gelu" if "approximate" in kwargs else "softplus"
    bad = []
    for d in DTYPES:
        r = mismatch(f"{name}({d}, {kwargs})", lambda L: getattr(L.nn.functional, name),
                     (make(torch, B, d),), (make(retrograd, B, d),), kwargs)
        if r:
            bad.append(r)
    assert not bad, "\n".join(bad)
