"""Loaded tensors live in their saved storage, as in torch: views keep their storage offset,
tensors of one storage share untyped_storage(), and as_strided reaches the whole storage."""

from __future__ import annotations

import io

import numpy as np

from tests.parity.harness import both


def _roundtrip(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return lib.load(buf)


def _views_of_one_base(lib):
    base = lib.arange(12.0)
    grid = base.view(3, 4)
    saved = [base, base[3:7], base[2:], grid[1:, 1:], grid.t()[1], lib.nn.Parameter(base[5:9])]
    loaded = _roundtrip(lib, saved)
    first = loaded[0].untyped_storage().data_ptr()
    return [[t.storage_offset() for t in loaded],
            [t.untyped_storage().data_ptr() == first for t in loaded],
            [t.untyped_storage().nbytes() for t in loaded],
            [list(t.stride()) for t in loaded],
            loaded, [t[1:].storage_offset() for t in loaded]]


def test_loaded_views_keep_their_storage_offsets():
    both(_views_of_one_base)


def _lone_view(lib):
    base = lib.arange(10.0)
    (view,) = _roundtrip(lib, [base[3:7]])
    # the whole storage is saved with the view, and as_strided counts from its start
    return [view.storage_offset(), view.untyped_storage().nbytes(), view,
            view.as_strided((3,), (1,), 0), view.as_strided((2,), (2,))]


def test_a_lone_view_loads_with_its_offset_in_the_whole_storage():
    both(_lone_view)


def _writes_are_shared(lib):
    base = lib.arange(6.0)
    loaded_base, view = _roundtrip(lib, [base, base[2:5]])
    view.mul_(10)
    return [loaded_base, view, view.storage_offset()]


def test_loaded_tensors_of_one_storage_share_writes():
    both(_writes_are_shared)


def _saved_again(lib):
    base = lib.arange(8.0).reshape(2, 4)
    once = _roundtrip(lib, {"a": base, "b": base[1]})
    twice = _roundtrip(lib, once)
    return [twice["b"].storage_offset(), twice["b"], twice["a"].storage_offset(),
            twice["b"].untyped_storage().data_ptr() == twice["a"].untyped_storage().data_ptr()]


def test_offsets_survive_a_second_save():
    both(_saved_again)


def test_separate_tensors_have_their_own_storages():
    import retrograd

    a, b = _roundtrip(retrograd, [retrograd.ones(3), retrograd.zeros(2)])
    assert a.storage_offset() == b.storage_offset() == 0
    assert a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr()
    np.testing.assert_array_equal(b.numpy(), np.zeros(2))
