"""torch's legacy storage classes (FloatStorage, ...) and Tensor.storage_type() against torch
2.13."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

NAMES = ["BFloat16Storage", "BoolStorage", "ByteStorage", "CharStorage", "DoubleStorage",
         "FloatStorage", "HalfStorage", "IntStorage", "LongStorage", "ShortStorage"]


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


@pytest.mark.parametrize("name", NAMES)
def test_classes_build_typed_storages(name):
    for lib in (torch, retrograd):
        cls = getattr(lib, name)
        assert cls.__name__ == name and issubclass(cls, lib.TypedStorage)
        made = [_quiet(lambda c=cls, a=a: c(*a)) for a in ((), (3,), ([0, 1, 2.75, 3.5],))]
        assert [type(s) for s in made] == [lib.TypedStorage] * 3
        assert [s.size() for s in made] == [0, 3, 4]
        assert all(isinstance(s, cls) for s in made)
    r = _quiet(lambda: getattr(retrograd, name)([0, 1, 2.75, 3.5]))
    t = _quiet(lambda: getattr(torch, name)([0, 1, 2.75, 3.5]))
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert r.tolist() == t.tolist()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("data", [[1e10], [-1], [300], [-129]])
def test_conversion_overflow(name, data):
    seen = []
    for lib in (torch, retrograd):
        try:
            seen.append(_quiet(lambda lib=lib: getattr(lib, name)(data)).tolist())
        except RuntimeError as e:
            seen.append(str(e))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32",
                                   "int16", "int8", "uint8", "bool"])
def test_storage_type_and_isinstance(dtype):
    names = []
    for lib in (torch, retrograd):
        x = lib.zeros(3, dtype=getattr(lib, dtype))
        cls = x.storage_type()
        names.append(cls.__name__)
        storage = _quiet(x.storage)
        assert isinstance(storage, cls)
        others = [getattr(lib, n) for n in NAMES if n != cls.__name__]
        assert not any(isinstance(storage, o) for o in others)
        assert not isinstance(x.untyped_storage(), cls)
    assert names[0] == names[1]


def test_wrap_storage_and_legacy_tensor():
    for lib in (torch, retrograd):
        x = lib.tensor([1.0, 2.0])
        s = _quiet(lambda lib=lib, x=x: lib.FloatStorage(wrap_storage=x.untyped_storage()))
        assert s.tolist() == [1.0, 2.0]
        assert _quiet(lambda lib=lib: lib.Tensor(lib.FloatStorage([1, 2, 3]))).tolist() == \
            [1.0, 2.0, 3.0]
    assert retrograd.Storage.dtype == retrograd.float32 and torch.Storage.dtype == torch.float32


@pytest.mark.parametrize("args, kwargs", [((1, 2), {}), ((1.5,), {}), (([1, "a"],), {}),
                                          ((2,), {"wrap_storage": "untyped"}),
                                          ((), {"wrap_storage": 5}), ((2,), {"device": "cpu"})])
def test_errors(args, kwargs):
    seen = []
    for lib in (torch, retrograd):
        kw = {k: lib.UntypedStorage(4) if v == "untyped" else v for k, v in kwargs.items()}
        with pytest.raises((RuntimeError, TypeError)) as err:
            _quiet(lambda lib=lib, kw=kw: lib.FloatStorage(*args, **kw))
        seen.append((err.type, str(err.value).replace("torch.", "retrograd.")))
    assert seen[0] == seen[1]


def test_deprecation_warning():
    import retrograd.storage as storage

    storage._warned.clear()
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        retrograd.DoubleStorage(2)
    np.testing.assert_array_equal(np.array(retrograd.DoubleStorage(2).tolist()), [0.0, 0.0])
