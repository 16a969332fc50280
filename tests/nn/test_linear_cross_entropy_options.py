"""nn.LinearCrossEntropyOptions against torch's: fields, defaults, repr, frozenness, the
validation errors, and the chunk size / policy / accumulation dtype each call resolves to
(`_adjust`) over a grid of shapes, dtypes and options."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

import retrograd
from tests.parity.harness import assert_same, error_of

torch = pytest.importorskip("torch")


def _options(lib, **kw):
    if isinstance(kw.get("acc_dtype"), str):
        kw["acc_dtype"] = getattr(lib, kw["acc_dtype"])
    return lib.nn.LinearCrossEntropyOptions(**kw)


def test_fields_defaults_and_repr():
    ours = [(f.name, f.default) for f in dataclasses.fields(retrograd.nn.LinearCrossEntropyOptions)]
    theirs = [(f.name, f.default) for f in dataclasses.fields(torch.nn.LinearCrossEntropyOptions)]
    assert ours == theirs
    assert repr(retrograd.nn.LinearCrossEntropyOptions()) == repr(
        torch.nn.LinearCrossEntropyOptions())
    kw = dict(allow_retain_graph=True, batch_chunk_size=8, chunking_method=None,
              acc_policy="balanced", acc_dtype="float32")
    assert_same(repr(_options(retrograd, **kw)), repr(_options(torch, **kw)))
    assert _options(retrograd, **kw) == _options(retrograd, **kw)
    assert hash(_options(retrograd, **kw)) == hash(_options(retrograd, **kw))


def test_frozen_and_slots():
    for lib in (retrograd, torch):
        o = lib.nn.LinearCrossEntropyOptions()
        with pytest.raises(dataclasses.FrozenInstanceError):
            o.batch_chunk_size = 3  # type: ignore[misc]
        assert not hasattr(o, "__dict__")


BAD = [
    dict(acc_policy="fast"), dict(acc_policy=None), dict(chunking_method="ratio"),
    dict(chunking_method="aspect_ratio:0"), dict(chunking_method="aspect_ratio:x"),
    dict(chunking_method="aspect_ratio:-2"), dict(chunking_method="aspect_ratio:"),
    dict(batch_chunk_size=0), dict(batch_chunk_size=-3), dict(batch_chunk_size=2.0),
    dict(batch_chunk_size="4"), dict(acc_dtype="int32"), dict(acc_dtype="uint8"),
    dict(acc_dtype="bool"),
    dict(acc_dtype="float32"), dict(chunking_method="aspect_ratio:3", batch_chunk_size=1),
]


@pytest.mark.parametrize("kw", BAD, ids=[str(k) for k in BAD])
def test_validation(kw):
    assert_same(error_of(lambda: repr(_options(retrograd, **kw))),
                error_of(lambda: repr(_options(torch, **kw))))


OPTIONS = [
    {}, dict(batch_chunk_size=3), dict(batch_chunk_size=1000), dict(chunking_method=None),
    dict(chunking_method="aspect_ratio"), dict(chunking_method="aspect_ratio:4"),
    dict(chunking_method="aspect_ratio", batch_chunk_size=4),
    dict(chunking_method=None, batch_chunk_size=5), dict(acc_policy="accurate"),
    dict(acc_policy="balanced", acc_dtype="float32"), dict(acc_policy="compact"),
    dict(acc_dtype="float64"), dict(acc_dtype="bfloat16", allow_retain_graph=True),
]
SHAPES = [(1, 4, 7), (5, 4, 7), (64, 8, 1000), (512, 64, 8192), (1000, 64, 50), (37, 3, 100),
          (8, 16, 8)]
DTYPES = ["float32", "float64", "float16", "bfloat16"]


def _adjusted(lib, kw, shape, dtype, device):
    options = _options(lib, **kw)
    n, f, c = shape
    return repr(options._adjust(n, f, c, getattr(lib, dtype),
                                None if device is None else lib.device(device)))


@pytest.mark.parametrize("device", ["cpu", None])
@pytest.mark.parametrize("kw", OPTIONS, ids=[str(k) for k in OPTIONS])
def test_adjust_grid(kw, device):
    for shape, dtype in itertools.product(SHAPES, DTYPES):
        assert_same(error_of(_adjusted, retrograd, kw, shape, dtype, device),
                    error_of(_adjusted, torch, kw, shape, dtype, device),
                    path=f"{shape} {dtype}")


def test_compute_batch_chunk_size_grid():
    for n, f, c, method in itertools.product([1, 2, 7, 64, 100, 513], [1, 3, 64],
                                             [1, 5, 64, 8192],
                                             ["aspect_ratio", "aspect_ratio:2",
                                              "aspect_ratio:16"]):
        ours = retrograd.nn.LinearCrossEntropyOptions(chunking_method=method)
        theirs = torch.nn.LinearCrossEntropyOptions(chunking_method=method)
        assert ours._compute_batch_chunk_size(n, f, c) == theirs._compute_batch_chunk_size(
            n, f, c), (n, f, c, method)
