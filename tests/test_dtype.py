"""dtypes: names, attributes, torch's promotion table, result_type, finfo / iinfo."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest

import retrograd
from retrograd import _dtype as D

torch = pytest.importorskip("torch")

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
         "float8_e4m3fn", "float8_e5m2",
         "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2"]
INTS = ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]


def ours(name: str):
    return getattr(retrograd, name)


def theirs(name: str):
    return getattr(torch, name)


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - we compare the exception itself
        return type(e).__name__, str(e)


@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_promote_types_table(a, b):
    kind_o, res_o = _outcome(lambda: retrograd.promote_types(ours(a), ours(b)))
    kind_t, res_t = _outcome(lambda: torch.promote_types(theirs(a), theirs(b)))
    assert kind_o == kind_t
    if kind_o == "ok":
        assert res_o.name == str(res_t).replace("torch.", "")
    else:
        assert res_o == res_t


@pytest.mark.parametrize("name", NAMES)
def test_dtype_attributes(name):
    o, t = ours(name), theirs(name)
    assert repr(o) == repr(t).replace("torch.", "retrograd.")
    assert str(o) == str(t).replace("torch.", "retrograd.")
    assert o.is_floating_point == t.is_floating_point
    assert o.is_complex == t.is_complex
    assert o.is_signed == t.is_signed
    assert o.itemsize == t.itemsize
    assert o.abbr == t.abbr
    assert o.to_real() is o


@pytest.mark.parametrize("alias,name", [("half", "float16"), ("float", "float32"),
                                        ("double", "float64"), ("short", "int16"),
                                        ("int", "int32"), ("long", "int64")])
def test_aliases_are_the_same_object(alias, name):
    assert getattr(retrograd, alias) is getattr(retrograd, name)


@pytest.mark.parametrize("name", NAMES)
def test_dtype_pickles_to_the_same_object(name):
    assert pickle.loads(pickle.dumps(ours(name))) is ours(name)


def test_dtype_equality_and_hash():
    assert retrograd.float32 == retrograd.float
    assert retrograd.float32 != retrograd.float64
    assert len({retrograd.float32, retrograd.float, retrograd.float64}) == 2


# result_type with tensors of each dim-class and Python scalars
def _operands(lib, spec):
    out = []
    for kind, value in spec:
        if kind == "t":  # a 1-d tensor of dtype `value`
            out.append(lib.ones(2, dtype=getattr(lib, value)))
        elif kind == "z":  # a 0-dim tensor
            out.append(lib.ones((), dtype=getattr(lib, value)))
        else:  # a Python scalar
            out.append(value)
    return out


_SCALARS = [("s", True), ("s", 2), ("s", 2.5)]
_DIM = [("t", n) for n in ["bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16",
                           "float32", "float64", "float8_e5m2"]]
_ZERO = [("z", n) for n in ["bool", "uint8", "int16", "int64", "float16", "float32",
                            "float64", "float8_e4m3fn"]]
RESULT_TYPE_CASES = [pair for a, b in [(_DIM, _SCALARS), (_DIM, _ZERO), (_ZERO, _SCALARS),
                                        (_DIM, _DIM), (_ZERO, _ZERO), (_SCALARS, _DIM)]
                     for pair in itertools.product(a, b)]


@pytest.mark.parametrize("spec", RESULT_TYPE_CASES, ids=lambda s: "-".join(f"{k}{v}" for k, v
                                                                           in s))
def test_result_type_matches_torch(spec):
    kind_o, res_o = _outcome(lambda: retrograd.result_type(*_operands(retrograd, spec)))
    kind_t, res_t = _outcome(lambda: torch.result_type(*_operands(torch, spec)))
    assert kind_o == kind_t
    if kind_o == "ok":
        assert res_o.name == str(res_t).replace("torch.", "")


@pytest.mark.parametrize("spec", [
    [("t", "int32"), ("z", "float64"), ("s", 2.5)],
    [("t", "uint8"), ("z", "int8"), ("s", 3)],
    [("t", "bool"), ("z", "int32"), ("s", 1.5)],
    [("t", "float16"), ("t", "int64"), ("z", "float64")],
    [("z", "int32"), ("s", 2)],
    [("s", 1), ("s", 2.0)],
    [("s", True), ("s", False)],
], ids=str)
def test_result_type_many_operands(spec):
    """_dtype.result_type (used by every op's promotion) against torch's three-tier rule."""
    o = D.result_type(*_operands(retrograd, spec))
    # torch.result_type takes two operands: fold with torch's own rule on a broadcast add
    t_ops = _operands(torch, spec)
    if all(not isinstance(x, torch.Tensor) for x in t_ops):
        expected = torch.tensor(t_ops[0]).dtype if len(t_ops) == 1 else \
            torch.result_type(*t_ops[:2])
    else:
        acc = t_ops[0] if isinstance(t_ops[0], torch.Tensor) else torch.tensor(t_ops[0])
        for x in t_ops[1:]:
            acc = acc + x if acc.dtype != torch.bool or not isinstance(x, bool) else acc | x
        expected = acc.dtype
    assert o.name == str(expected).replace("torch.", "")


def test_result_type_follows_default_dtype():
    prev = retrograd.get_default_dtype()
    try:
        retrograd.set_default_dtype(retrograd.float64)
        assert retrograd.result_type(retrograd.ones(2, dtype=retrograd.int32), 2.5) \
            is retrograd.float64
        assert D.scalar_dtype(1.5) is retrograd.float64
        assert retrograd.tensor([1.5]).dtype is retrograd.float64
        assert retrograd.zeros(2).dtype is retrograd.float64
        assert retrograd.arange(0.0, 2).dtype is retrograd.float64
    finally:
        retrograd.set_default_dtype(prev)
    assert retrograd.tensor([1.5]).dtype is retrograd.float32


@pytest.mark.parametrize("value", ["bfloat16", "float16", "float64"])
def test_set_default_dtype_floats(value):
    prev = retrograd.get_default_dtype()
    try:
        retrograd.set_default_dtype(ours(value))
        assert retrograd.get_default_dtype() is ours(value)
        assert retrograd.ones(1).dtype is ours(value)
    finally:
        retrograd.set_default_dtype(prev)


@pytest.mark.parametrize("bad", ["int64", "bool", "py_float", "str"])
def test_set_default_dtype_errors(bad):
    arg_o = {"py_float": float, "str": "float64"}.get(bad) or ours(bad)
    arg_t = {"py_float": float, "str": "float64"}.get(bad) or theirs(bad)
    with pytest.raises(TypeError) as t_err:
        torch.set_default_dtype(arg_t)
    with pytest.raises(TypeError) as o_err:
        retrograd.set_default_dtype(arg_o)
    assert str(o_err.value) == str(t_err.value)


def test_can_cast():
    for a, b in itertools.product(NAMES, NAMES):
        if "float8" in a or "float8" in b:
            continue
        assert retrograd.can_cast(ours(a), ours(b)) == torch.can_cast(theirs(a), theirs(b)), (a, b)


@pytest.mark.parametrize("name", FLOATS)
def test_finfo(name):
    o, t = retrograd.finfo(ours(name)), torch.finfo(theirs(name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(o, attr) == getattr(t, attr), attr
    assert repr(o) == repr(t)
    assert str(o) == str(t)


def test_finfo_default_is_default_dtype():
    assert repr(retrograd.finfo()) == repr(torch.finfo())
    prev = retrograd.get_default_dtype()
    try:
        retrograd.set_default_dtype(retrograd.float64)
        assert retrograd.finfo().dtype == "float64"
    finally:
        retrograd.set_default_dtype(prev)


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    o, t = retrograd.iinfo(ours(name)), torch.iinfo(theirs(name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(o, attr) == getattr(t, attr), attr
    assert repr(o) == repr(t)


@pytest.mark.parametrize("fn,name", [("finfo", "int32"), ("finfo", "bool"), ("iinfo", "float32"),
                                     ("iinfo", "bool"), ("iinfo", "bfloat16")])
def test_info_errors(fn, name):
    with pytest.raises(TypeError) as t_err:
        getattr(torch, fn)(theirs(name))
    with pytest.raises(TypeError) as o_err:
        getattr(retrograd, fn)(ours(name))
    assert str(o_err.value) == str(t_err.value)


def test_from_numpy_dtype_mapping():
    for name in NAMES:
        assert D.from_numpy_dtype(ours(name).np) is ours(name)
    for name in ("uint16", "uint32", "uint64"):
        assert D.from_numpy_dtype(np.dtype(name)) is getattr(retrograd, name)
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.str_"):
        D.from_numpy_dtype(np.dtype("U3"))


def test_scalar_dtype():
    assert D.scalar_dtype(True) is retrograd.bool
    assert D.scalar_dtype(3) is retrograd.int64
    assert D.scalar_dtype(3.0) is retrograd.float32
    assert D.scalar_dtype(np.int32(3)) is retrograd.int64


def test_legacy_tensor_type_names():
    for name in NAMES:
        t_name = theirs(name)
        expected = torch.ones(1, dtype=t_name).type().replace("torch.", "")
        assert ours(name)._legacy == expected
