"""torch's legacy constructors (Tensor(2, 3), FloatTensor(...), t.new(...)), the tensortype
classes in isinstance checks, t.type(), and the new_* methods, compared with torch."""

import numpy as np
import pytest
import torch

import retrograd

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
         "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


def _summary(x):
    return tuple(x.shape), str(x.dtype).split(".")[-1]


def _same(fn):
    """fn(lib) on both libraries: equal results, or the same error type and message."""
    out = []
    for lib in (torch, retrograd):
        try:
            r = fn(lib)
        except Exception as e:  # noqa: BLE001
            r = (type(e), str(e).replace("torch", "retrograd"))
        out.append(r)
    assert out[1] == out[0]


@pytest.mark.parametrize("make", [
    lambda lib: _summary(lib.Tensor(2, 3)),
    lambda lib: _summary(lib.Tensor(lib.Size([2, 3]))),
    lambda lib: _summary(lib.Tensor()),
    lambda lib: _summary(lib.Tensor(0)),
    lambda lib: lib.Tensor([1.0, 2.0]).tolist(),
    lambda lib: (lib.Tensor([1, 2]).tolist(), _summary(lib.Tensor([1, 2]))),
    lambda lib: lib.Tensor((2, 3)).tolist(),
    lambda lib: lib.Tensor(np.arange(3)).tolist(),
    lambda lib: _summary(lib.Tensor(lib.zeros(2, dtype=lib.float64))),
    lambda lib: lib.LongTensor([1.5, 2]).tolist(),
    lambda lib: _summary(lib.LongTensor(2, 2)),
    lambda lib: lib.BoolTensor([1, 0]).tolist(),
    lambda lib: lib.ByteTensor([1, 2]).tolist(),
    lambda lib: _summary(lib.HalfTensor(2)),
    lambda lib: lib.FloatTensor(lib.zeros(2)).tolist(),
    lambda lib: lib.DoubleTensor(lib.zeros(2)),
    lambda lib: lib.Tensor(-1),
    lambda lib: lib.Tensor(2, 3.0),
])
def test_legacy_constructors(make):
    _same(make)


def test_tensor_of_tensor_aliases_memory():
    for lib in (torch, retrograd):
        x = lib.zeros(2)
        y = lib.Tensor(x)
        assert y is not x and y.data_ptr() == x.data_ptr()
        y[0] = 3
        assert x[0].item() == 3
        s = lib.arange(4.0).untyped_storage()
        z = lib.FloatTensor(s)
        assert z.data_ptr() == s.data_ptr() and z.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_default_dtype_applies_to_tensor_only():
    for lib in (torch, retrograd):
        lib.set_default_dtype(lib.float64)
        try:
            assert lib.Tensor(2).dtype == lib.float64
            assert lib.Tensor([1.0]).dtype == lib.float64
            assert lib.FloatTensor(2).dtype == lib.float32
        finally:
            lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("name", TYPES)
def test_tensortypes(name):
    tt, rt = getattr(torch, name), getattr(retrograd, name)
    assert repr(rt) == repr(tt).replace("torch", "retrograd")
    assert rt.__name__ == tt.__name__ and str(rt.dtype).split(".")[-1] == \
        str(tt.dtype).split(".")[-1]
    assert rt.is_cuda is False
    assert issubclass(rt, retrograd.Tensor) == issubclass(tt, torch.Tensor)
    for dt in ("float32", "float64", "int64", "bool", "uint8", "float16"):
        assert isinstance(retrograd.zeros(2, dtype=getattr(retrograd, dt)), rt) == \
            isinstance(torch.zeros(2, dtype=getattr(torch, dt)), tt)
    assert not isinstance(3, rt)
    r = retrograd.zeros(2).type(rt)
    assert str(r.dtype).split(".")[-1] == str(torch.zeros(2).type(tt).dtype).split(".")[-1]
    assert isinstance(r, rt)


def test_parameter_is_a_float_tensor():
    for lib in (torch, retrograd):
        p = lib.nn.Parameter(lib.zeros(2))
        assert isinstance(p, lib.FloatTensor) and not isinstance(p, lib.DoubleTensor)


def test_type_strings_and_conversion():
    for lib in (torch, retrograd):
        t = lib.zeros(2)
        assert t.type() == f"{lib.__name__}.FloatTensor"
        assert t.type(lib.FloatTensor) is t
        assert t.type(lib.DoubleTensor).dtype == lib.float64
        assert t.type("torch.LongTensor").dtype == lib.int64
        assert t.type(lib.float64).type() == f"{lib.__name__}.DoubleTensor"


@pytest.mark.parametrize("make", [
    lambda lib: lib.zeros(2, 3).new_zeros(2, dtype=lib.int64).tolist(),
    lambda lib: _summary(lib.zeros(2, 3).new_zeros(2, dtype=lib.int64)),
    lambda lib: (lib.zeros(2, 3).new_ones((2, 1), requires_grad=True).requires_grad,
                 lib.zeros(2, 3).new_ones((2, 1)).tolist()),
    lambda lib: _summary(lib.zeros(2, 3).new_full((2, 1), 3, dtype=lib.float64)),
    lambda lib: lib.zeros(2, 3).new_full((2, 1), 3).tolist(),
    lambda lib: (lib.zeros(2, 3).new_tensor([1, 2]).tolist(),
                 _summary(lib.zeros(2, 3).new_tensor([1, 2]))),
    lambda lib: lib.zeros(2, 3, dtype=lib.int32).new_tensor([1.5, 2]).tolist(),
    lambda lib: lib.zeros(2, 3).new_tensor([1.0], requires_grad=True).requires_grad,
    lambda lib: _summary(lib.zeros(2, 3).new_empty(2, 1)),
    lambda lib: _summary(lib.zeros(2, 3, dtype=lib.float16).new_empty((2,), dtype=lib.int8)),
    lambda lib: _summary(lib.zeros(2, 3).new_zeros([])),
    lambda lib: _summary(lib.zeros(2, 3).new()),
    lambda lib: _summary(lib.zeros(2, 3).new(2)),
    lambda lib: lib.zeros(2, 3).new([1, 2]).tolist(),
    lambda lib: _summary(lib.zeros(2, 3, dtype=lib.int64).new(2, 2)),
])
def test_new_methods(make):
    _same(make)
