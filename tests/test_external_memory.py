"""frombuffer, from_file and DLPack against torch: shared memory, values, and torch's errors;
read-only memory refuses in-place writes with a clear error (a deliberate difference)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from retrograd._ops.inplace import READ_ONLY_MEMORY
from tests.parity.harness import error_of

torch = pytest.importorskip("torch")


def _same_error(ours, theirs) -> None:
    want = error_of(theirs)
    assert want[0] == "raised" and error_of(ours) == want


# --- frombuffer ------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"count": 2, "offset": 4}, {"count": -3},
                                    {"offset": 8}, {"count": 1}])
def test_frombuffer_reads_and_shares_the_buffer(kwargs):
    data = np.arange(4, dtype=np.float32).tobytes()
    ours_buf, theirs_buf = bytearray(data), bytearray(data)
    ours = retrograd.frombuffer(ours_buf, dtype=retrograd.float32, **kwargs)
    theirs = torch.frombuffer(theirs_buf, dtype=torch.float32, **kwargs)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours[0] = 7.0
    theirs[0] = 7.0
    assert ours_buf == theirs_buf  # the write went to the buffer in both


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int64", "float64", "bfloat16", "bool"])
def test_frombuffer_dtypes(dtype):
    raw = bytes(range(1, 17))
    ours = retrograd.frombuffer(bytearray(raw), dtype=getattr(retrograd, dtype))
    theirs = torch.frombuffer(bytearray(raw), dtype=getattr(torch, dtype))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


@pytest.mark.parametrize("args", [
    (bytearray(16), {"count": 5}), (bytearray(16), {"offset": 16}),
    (bytearray(16), {"offset": -1}), (bytearray(16), {"offset": 1}),
    (bytearray(16), {"offset": 1, "count": 4}), (bytearray(5), {}), (bytearray(), {}),
    (bytearray(16), {"count": 0}), ([1, 2], {}),
])
def test_frombuffer_errors_are_torchs(args):
    buf, kwargs = args
    _same_error(lambda: retrograd.frombuffer(buf, dtype=retrograd.float32, **kwargs),
                lambda: torch.frombuffer(buf, dtype=torch.float32, **kwargs))


def test_frombuffer_requires_grad():
    t = retrograd.frombuffer(bytearray(16), dtype=retrograd.float32, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    _same_error(lambda: retrograd.frombuffer(bytearray(16), dtype=retrograd.int64,
                                             requires_grad=True),
                lambda: torch.frombuffer(bytearray(16), dtype=torch.int64, requires_grad=True))


def test_an_immutable_buffer_gives_a_read_only_tensor():
    with pytest.warns(UserWarning, match="not writable"):
        import retrograd._ops.external_memory as em
        em._warned_not_writable = False
        t = retrograd.frombuffer(b"abcd", dtype=retrograd.uint8)
    np.testing.assert_array_equal(t.numpy(), [97, 98, 99, 100])
    for write in (lambda: t.add_(1), lambda: t.__setitem__(0, 1), lambda: t.zero_()):
        with pytest.raises(RuntimeError, match="memory is read-only"):
            write()
    assert READ_ONLY_MEMORY.startswith("retrograd:")
    np.testing.assert_array_equal(t.numpy(), [97, 98, 99, 100])  # unchanged
    assert t._version == 0
    np.testing.assert_array_equal(t.clone().add_(1).numpy(), [98, 99, 100, 101])


def test_a_numpy_array_marked_read_only_is_written_through_views_as_torch():
    a, b = np.ones(3), np.ones(3)
    a.flags.writeable = b.flags.writeable = False
    with warnings.catch_warnings():  # both warn once per process: not what is tested here
        warnings.simplefilter("ignore", UserWarning)
        ours, theirs = retrograd.from_numpy(a), torch.from_numpy(b)
    ours[0] = 2.0
    theirs[0] = 2.0
    ours[1:].mul_(3)
    theirs[1:].mul_(3)
    np.testing.assert_array_equal(a, b)


# --- from_file -------------------------------------------------------------------------------


def test_from_file_shared_and_private(tmp_path):
    path = tmp_path / "values.bin"
    for lib in (retrograd, torch):
        path.write_bytes(np.arange(6, dtype=np.float32).tobytes())
        t = lib.from_file(str(path), size=6, dtype=lib.float32)
        np.testing.assert_array_equal(t.numpy(), np.arange(6))
        t = lib.from_file(str(path), shared=True, size=2, dtype=lib.float32)
        t[0] = 9.0
        del t
        np.testing.assert_array_equal(np.fromfile(path, np.float32), [9, 1, 2, 3, 4, 5])
        t = lib.from_file(str(path), shared=False, size=2, dtype=lib.float32)
        t[1] = 7.0
        np.testing.assert_array_equal(t.numpy(), [9, 7])
        del t
        np.testing.assert_array_equal(np.fromfile(path, np.float32), [9, 1, 2, 3, 4, 5])
        assert lib.from_file(str(path), size=0).numel() == 0


def test_from_file_shared_creates_and_grows_the_file(tmp_path):
    for lib in (retrograd, torch):
        new = tmp_path / f"new_{lib.__name__}.bin"
        t = lib.from_file(str(new), shared=True, size=3, dtype=lib.float32)
        np.testing.assert_array_equal(t.numpy(), [0, 0, 0])
        assert new.stat().st_size == 12
        small = tmp_path / f"small_{lib.__name__}.bin"
        small.write_bytes(b"\x00" * 8)
        assert lib.from_file(str(small), shared=True, size=4, dtype=lib.float32).numel() == 4
        assert small.stat().st_size == 16


def test_from_file_errors_are_torchs(tmp_path):
    path = tmp_path / "six.bin"
    path.write_bytes(np.arange(6, dtype=np.float32).tobytes())
    missing = str(tmp_path / "missing.bin")
    _same_error(lambda: retrograd.from_file(str(path), size=7, dtype=retrograd.float32),
                lambda: torch.from_file(str(path), size=7, dtype=torch.float32))
    _same_error(lambda: retrograd.from_file(missing, size=3),
                lambda: torch.from_file(missing, size=3))
    _same_error(lambda: retrograd.from_file(str(path), size=-1),
                lambda: torch.from_file(str(path), size=-1))


# --- DLPack ----------------------------------------------------------------------------------


def test_from_dlpack_shares_memory_with_numpy_and_torch():
    a = np.arange(4.0)
    t = retrograd.from_dlpack(a)
    t[0] = 5.0
    assert a[0] == 5.0
    tt = torch.arange(3.0)
    r = retrograd.from_dlpack(tt)
    r.add_(1)
    np.testing.assert_array_equal(tt.numpy(), [1, 2, 3])
    back = torch.from_dlpack(retrograd.arange(4.0).reshape(2, 2).t())
    np.testing.assert_array_equal(back.numpy(), [[0, 2], [1, 3]])
    x = retrograd.ones(2, 3)
    shared = torch.from_dlpack(x[:, 1])
    shared.mul_(4)
    np.testing.assert_array_equal(x.numpy(), [[1, 4, 1], [1, 4, 1]])


def test_capsules_serve_once_as_in_torch():
    ours = retrograd.utils.dlpack.to_dlpack(retrograd.arange(3))
    theirs = torch.utils.dlpack.to_dlpack(torch.arange(3))
    np.testing.assert_array_equal(retrograd.from_dlpack(ours).numpy(),
                                  torch.from_dlpack(theirs).numpy())
    _same_error(lambda: retrograd.from_dlpack(ours), lambda: torch.from_dlpack(theirs))
    _same_error(lambda: retrograd.from_dlpack([1, 2]), lambda: torch.from_dlpack([1, 2]))


def test_dlpack_export_refuses_tensors_that_require_grad():
    _same_error(lambda: retrograd.ones(2, requires_grad=True).__dlpack__(),
                lambda: torch.ones(2, requires_grad=True).__dlpack__())
    assert retrograd.ones(2).__dlpack_device__() == torch.ones(2).__dlpack_device__()
    assert retrograd.utils.dlpack.DLDeviceType.kDLCPU == 1
