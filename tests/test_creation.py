"""Tensor creation parity with torch: values, dtypes, shapes, strides, memory sharing, errors."""

from __future__ import annotations

import random
import warnings

import ml_dtypes
import numpy as np
import pytest

import retrograd
from tests.tensor_numpy import as_numpy as _np

torch = pytest.importorskip("torch")


def assert_same(o, t, *, strides: bool = True) -> None:
    """Same dtype, shape, strides, requires_grad and bitwise-equal values (nan == nan)."""
    assert o.dtype.name == str(t.dtype).replace("torch.", "")
    assert tuple(o.shape) == tuple(t.shape)
    if strides:
        assert o.stride() == t.stride()
    assert o.requires_grad == t.requires_grad
    a, b = _np(o), _np(t)
    assert a.dtype == b.dtype
    np.testing.assert_array_equal(a, b)


def both(build):
    return build(retrograd), build(torch)


def same_error(build, exc=Exception):
    """Both libraries raise the same exception type with the same message."""
    with pytest.raises(exc) as t_err:
        build(torch)
    with pytest.raises(exc) as o_err:
        build(retrograd)
    assert type(o_err.value) is type(t_err.value)
    assert str(o_err.value) == str(t_err.value).replace("torch.", "retrograd.")


# --- tensor() -----------------------------------------------------------------------------

TENSOR_CASES = {
    "float": lambda L: L.tensor(3.5),
    "int": lambda L: L.tensor(3),
    "bool": lambda L: L.tensor(True),
    "float_list": lambda L: L.tensor([1.5, 2.0, -3.25]),
    "int_list": lambda L: L.tensor([1, 2, 3]),
    "bool_list": lambda L: L.tensor([True, False]),
    "mixed_bool_int": lambda L: L.tensor([True, 2]),
    "mixed_int_float": lambda L: L.tensor([1, 2.5]),
    "mixed_all": lambda L: L.tensor([1, True, 2.5]),
    "nested": lambda L: L.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "nested_tuple": lambda L: L.tensor(((1, 2), (3, 4))),
    "nested_3d": lambda L: L.tensor([[[1], [2]], [[3], [4]]]),
    "empty": lambda L: L.tensor([]),
    "empty_nested": lambda L: L.tensor([[], []]),
    "empty_tuple": lambda L: L.tensor(()),
    "range": lambda L: L.tensor(range(4)),
    "list_of_ranges": lambda L: L.tensor([range(2), range(2)]),
    "bytearray": lambda L: L.tensor(bytearray(b"ab")),
    "np_f32_scalar": lambda L: L.tensor(np.float32(2.5)),
    "np_f64_scalar": lambda L: L.tensor(np.float64(2.5)),
    "np_i32_scalar": lambda L: L.tensor(np.int32(2)),
    "np_bool_scalar": lambda L: L.tensor(np.bool_(True)),
    "np_f32_in_list": lambda L: L.tensor([np.float32(2.5), 1]),
    "np_f64_in_list": lambda L: L.tensor([np.float64(2.5), 1]),
    "np_i32_list": lambda L: L.tensor([np.int32(2), np.int32(1)]),
    "np_i8_u8_list": lambda L: L.tensor([np.int8(2), np.uint8(1)]),
    "np_i32_and_int": lambda L: L.tensor([np.int32(2), 1]),
    "np_array_f64": lambda L: L.tensor(np.array([0.1, 0.2])),
    "np_array_f32": lambda L: L.tensor(np.array([0.1, 0.2], dtype=np.float32)),
    "np_array_f16": lambda L: L.tensor(np.array([0.1, 0.2], dtype=np.float16)),
    "np_array_i16": lambda L: L.tensor(np.array([[1, 2]], dtype=np.int16)),
    "np_array_bool": lambda L: L.tensor(np.array([True, False])),
    "np_array_0d": lambda L: L.tensor(np.array(1.5)),
    "np_array_noncontig": lambda L: L.tensor(np.arange(6.0).reshape(2, 3).T),
    "np_array_sliced": lambda L: L.tensor(np.arange(12.0).reshape(3, 4)[:, ::2]),
    "list_of_arrays": lambda L: L.tensor([np.array([1, 2], dtype=np.int32)] * 2),
    "list_of_0d_tensors": lambda L: L.tensor([L.tensor(1.0), L.tensor(2.0)]),
    "list_tensor_and_float": lambda L: L.tensor([L.tensor(1), 2.5]),
    "list_f64_tensor_and_int": lambda L: L.tensor([L.tensor(1.0, dtype=L.float64), 2]),
    "dtype_f64": lambda L: L.tensor([1, 2], dtype=L.float64),
    "dtype_f16": lambda L: L.tensor([0.1, 1e-8, 70000.0], dtype=L.float16),
    "dtype_bf16": lambda L: L.tensor([0.1, 1e-8, 1e39], dtype=L.bfloat16),
    "dtype_f8": lambda L: L.tensor([0.1, 1.3, 500.0, -1e6, float("inf"), float("nan")],
                                   dtype=L.float8_e4m3fn),
    "dtype_f8_e5m2": lambda L: L.tensor([0.1, 1.3, 500.0, 1e6, 61439, 61441],
                                        dtype=L.float8_e5m2),
    "np_to_f8": lambda L: L.tensor(np.array([1000.0, -3.3]), dtype=L.float8_e4m3fn),
    "dtype_f32_overflow": lambda L: L.tensor(1e40, dtype=L.float32),
    "dtype_int_trunc": lambda L: L.tensor([1.7, -1.7], dtype=L.int64),
    "dtype_int32_trunc": lambda L: L.tensor([2.9, -2.9], dtype=L.int32),
    "dtype_uint8": lambda L: L.tensor([1, 255], dtype=L.uint8),
    "dtype_uint8_neg": lambda L: L.tensor([-1, -255], dtype=L.uint8),
    "dtype_int8_limits": lambda L: L.tensor([-128, 127], dtype=L.int8),
    "dtype_bool_from_float": lambda L: L.tensor([1.5, 0.0, float("nan")], dtype=L.bool),
    "dtype_bool_from_int": lambda L: L.tensor([2, 0], dtype=L.bool),
    "dtype_py_float": lambda L: L.tensor([1, 2], dtype=float),
    "dtype_py_int": lambda L: L.tensor([1.5], dtype=int),
    "dtype_py_bool": lambda L: L.tensor([1, 0], dtype=bool),
    "np_array_wraps_int8": lambda L: L.tensor(np.array([300, -200]), dtype=L.int8),
    "np_array_to_f16": lambda L: L.tensor(np.array([1 + 2**-11 + 2**-40, 0.1]), dtype=L.float16),
    "double_round_f16": lambda L: L.tensor([1 + 2**-11 + 2**-40], dtype=L.float16),
    "double_round_bf16": lambda L: L.tensor([1 + 2**-8 + 2**-40], dtype=L.bfloat16),
    "min_int64": lambda L: L.tensor([-2**63, 2**63 - 1]),
    "requires_grad": lambda L: L.tensor([1.0, 2.0], requires_grad=True),
    "requires_grad_f16": lambda L: L.tensor([1.0], dtype=L.float16, requires_grad=True),
    "from_tensor": lambda L: L.tensor(L.ones(2, 3).t()),
    "from_tensor_dtype": lambda L: L.tensor(L.ones(2), dtype=L.int32),
    "device_cpu": lambda L: L.tensor([1.0], device="cpu"),
    "device_obj": lambda L: L.tensor([1.0], device=L.device("cpu")),
}


@pytest.mark.parametrize("build", TENSOR_CASES.values(), ids=TENSOR_CASES.keys())
def test_tensor_matches_torch(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        o, t = both(build)
    assert_same(o, t)


ERROR_CASES = {
    "ragged": lambda L: L.tensor([[1, 2], [3]]),
    "ragged_deep": lambda L: L.tensor([[[1, 2], [3, 4]], [[1, 2], [3]]]),
    "str": lambda L: L.tensor("abc"),
    "str_in_list": lambda L: L.tensor([1, "a"]),
    "bytes": lambda L: L.tensor(b"ab"),
    "none": lambda L: L.tensor(None),
    "none_in_list": lambda L: L.tensor([None]),
    "dict": lambda L: L.tensor({1: 2}),
    "set": lambda L: L.tensor({1, 2}),
    "int_overflow": lambda L: L.tensor([2**63]),
    "int_overflow_big": lambda L: L.tensor([2**64]),
    "uint8_overflow": lambda L: L.tensor([-1, 256], dtype=L.uint8),
    "int8_overflow": lambda L: L.tensor([300], dtype=L.int8),
    "int32_overflow": lambda L: L.tensor([2**40], dtype=L.int32),
    "float_to_int_overflow": lambda L: L.tensor([1e20], dtype=L.int64),
    "nan_to_int": lambda L: L.tensor([float("nan")], dtype=L.int64),
    "multi_element_tensor_in_list": lambda L: L.tensor([L.tensor([1.0, 2]), L.tensor([3.0, 4])]),
    "int_requires_grad": lambda L: L.tensor([1, 2], requires_grad=True),
    "np_str": lambda L: L.tensor(np.array(["a"])),
    "np_object": lambda L: L.tensor(np.array([1, None])),
    "np_array_negstride": lambda L: L.tensor(np.arange(5)[::-1]),
    "np_array_bigendian": lambda L: L.tensor(np.array([1, 2], dtype=">i4")),
}


@pytest.mark.parametrize("build", ERROR_CASES.values(), ids=ERROR_CASES.keys())
def test_tensor_errors_match_torch(build):
    same_error(build)


def test_tensor_from_tensor_warns_and_copies():
    src = retrograd.ones(3)
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        out = retrograd.tensor(src)
    out._data[0] = 5.0
    assert src._data[0] == 1.0
    assert not np.shares_memory(out._data, src._data)


def test_tensor_copies_numpy_input():
    a = np.zeros(3)
    t = retrograd.tensor(a)
    assert not np.shares_memory(t._data, a)
    assert t.is_leaf and not t.requires_grad


def test_tensor_infers_default_dtype():
    prev = retrograd.get_default_dtype()
    try:
        retrograd.set_default_dtype(retrograd.float64)
        assert retrograd.tensor([1.5, 2]).dtype is retrograd.float64
        assert retrograd.tensor([]).dtype is retrograd.float64
        assert retrograd.tensor([1, 2]).dtype is retrograd.int64
        assert retrograd.tensor(np.float32(1.0)).dtype is retrograd.float32
    finally:
        retrograd.set_default_dtype(prev)


def test_tensor_large_list_is_fast_path():
    data = [float(i) for i in range(100_000)]
    t = retrograd.tensor(data)
    assert t.dtype is retrograd.float32 and t.shape == (100_000,)
    assert t._data[-1] == 99_999.0


def test_tensor_rejects_cuda():
    with pytest.raises(RuntimeError):
        retrograd.tensor([1.0], device="cuda")


# --- as_tensor / from_numpy / numpy() -------------------------------------------------------


def test_from_numpy_shares_memory_and_keeps_dtype():
    for dt in (np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
               np.uint8, np.bool_, ml_dtypes.bfloat16):
        a = np.zeros((2, 3), dtype=dt)
        t = retrograd.from_numpy(a)
        assert t._data is a or np.shares_memory(t._data, a)
        assert t.dtype.np == np.dtype(dt)
        a[0, 0] = 1
        assert t._data[0, 0] == 1
        assert t.numpy() is a or np.shares_memory(t.numpy(), a)


def test_from_numpy_noncontiguous_keeps_strides():
    a = np.arange(12.0).reshape(3, 4).T
    o, t = retrograd.from_numpy(a), torch.from_numpy(a)
    assert_same(o, t)
    assert not o.is_contiguous()


def test_from_numpy_writes_through_tensor():
    a = np.zeros(3, dtype=np.float32)
    t = retrograd.from_numpy(a)
    t.add_(1) if hasattr(t, "add_") else np.add(t._data, 1, out=t._data)
    assert (a == 1).all()


FROM_NUMPY_ERRORS = {
    "list": lambda L: L.from_numpy([1]),
    "negative_strides": lambda L: L.from_numpy(np.arange(5)[::-1]),
    "negative_strides_2d": lambda L: L.from_numpy(np.zeros((3, 3))[:, ::-1]),
    "str": lambda L: L.from_numpy(np.array(["a"])),
    "object": lambda L: L.from_numpy(np.array([1], dtype=object)),
    "longdouble": lambda L: L.from_numpy(np.array([1], dtype=np.longdouble)),
    "byte_order": lambda L: L.from_numpy(np.array([1], dtype=">i4")),
    "strides_not_multiple": lambda L: L.from_numpy(
        np.lib.stride_tricks.as_strided(np.zeros(8, np.int32), (2,), (6,))),
    "as_tensor_negative_strides": lambda L: L.as_tensor(np.arange(5)[::-1]),
}


@pytest.mark.parametrize("build", FROM_NUMPY_ERRORS.values(), ids=FROM_NUMPY_ERRORS.keys())
def test_from_numpy_errors_match_torch(build):
    same_error(build)


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_from_numpy_shares_wide_unsigned(name):
    a = np.arange(4, dtype=name)
    t = retrograd.from_numpy(a)
    assert t.dtype is getattr(retrograd, name)
    a[0] = 9  # the same memory
    assert t.tolist() == [9, 1, 2, 3]


def test_from_numpy_readonly_warns_once():
    import retrograd._ops.creation as C

    C._warned_not_writable = False
    a = np.zeros(2)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        retrograd.from_numpy(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        retrograd.from_numpy(a)


def test_as_tensor_sharing():
    a = np.zeros(3, dtype=np.float32)
    t = retrograd.as_tensor(a)
    assert np.shares_memory(t._data, a)
    t2 = retrograd.as_tensor(a, dtype=retrograd.float32)
    assert np.shares_memory(t2._data, a)
    t3 = retrograd.as_tensor(a, dtype=retrograd.float64)
    assert not np.shares_memory(t3._data, a) and t3.dtype is retrograd.float64
    x = retrograd.ones(2)
    assert retrograd.as_tensor(x) is x
    assert retrograd.as_tensor(x, dtype=retrograd.float32) is x
    y = retrograd.as_tensor(x, dtype=retrograd.float64)
    assert y.dtype is retrograd.float64 and y is not x


def test_as_tensor_of_grad_tensor_keeps_graph():
    x = retrograd.ones(2, requires_grad=True)
    y = retrograd.as_tensor(x, dtype=retrograd.float64)
    t = torch.as_tensor(torch.ones(2, requires_grad=True), dtype=torch.float64)
    assert y.grad_fn.name() == t.grad_fn.name()


AS_TENSOR_CASES = {
    "list": lambda L: L.as_tensor([1, 2]),
    "list_dtype": lambda L: L.as_tensor([1, 2], dtype=L.float16),
    "scalar": lambda L: L.as_tensor(3),
    "ndarray_cast": lambda L: L.as_tensor(np.array([1, 2]), dtype=L.float32),
    "ndarray": lambda L: L.as_tensor(np.array([[1.5, 2.5]])),
}


@pytest.mark.parametrize("build", AS_TENSOR_CASES.values(), ids=AS_TENSOR_CASES.keys())
def test_as_tensor_matches_torch(build):
    assert_same(*both(build))


def test_asarray():
    a = np.arange(3.0)
    assert np.shares_memory(retrograd.asarray(a)._data, a)
    assert not np.shares_memory(retrograd.asarray(a, copy=True)._data, a)
    with pytest.raises(ValueError):
        retrograd.asarray([1, 2], copy=False)
    t = retrograd.asarray([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf
    assert_same(retrograd.asarray([1, 2], dtype=retrograd.float64),
                torch.asarray([1, 2], dtype=torch.float64))


def test_numpy_shares_memory():
    t = retrograd.zeros(3)
    a = t.numpy()
    a[1] = 7
    assert t._data[1] == 7
    view = t.view(3, 1) if hasattr(t, "view") else t
    assert np.shares_memory(view.numpy(), a)


def test_numpy_refuses_requires_grad():
    t = retrograd.zeros(3, requires_grad=True)
    tt = torch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError) as o_err:
        t.numpy()
    with pytest.raises(RuntimeError) as t_err:
        tt.numpy()
    assert str(o_err.value) == str(t_err.value)
    assert np.shares_memory(t.numpy(force=True), t._data)


# --- zeros / ones / empty / full / eye / empty_strided ----------------------------------

FACTORY_CASES = {
    "zeros_varargs": lambda L: L.zeros(2, 3),
    "zeros_tuple": lambda L: L.zeros((2, 3)),
    "zeros_list": lambda L: L.zeros([2, 3]),
    "zeros_size": lambda L: L.zeros(L.Size([2, 3])),
    "zeros_kw": lambda L: L.zeros(size=(2, 3)),
    "zeros_scalar": lambda L: L.zeros(()),
    "zeros_empty_list": lambda L: L.zeros([]),
    "zeros_zero_size": lambda L: L.zeros(0, 3),
    "zeros_np_int": lambda L: L.zeros(np.int64(3)),
    "zeros_tensor_int": lambda L: L.zeros(L.tensor(3)),
    "zeros_int32": lambda L: L.zeros(2, dtype=L.int32),
    "zeros_bool": lambda L: L.zeros(2, dtype=L.bool),
    "zeros_bf16": lambda L: L.zeros(2, dtype=L.bfloat16),
    "zeros_rg": lambda L: L.zeros(2, requires_grad=True),
    "ones": lambda L: L.ones(2, 3),
    "ones_f64": lambda L: L.ones(2, dtype=L.float64),
    "ones_py_float": lambda L: L.ones(2, dtype=float),
    "ones_uint8": lambda L: L.ones(3, dtype=L.uint8),
    "ones_f8": lambda L: L.ones(3, dtype=L.float8_e5m2),
    "full_float": lambda L: L.full((2,), 1.5),
    "full_int": lambda L: L.full((2,), 2),
    "full_bool": lambda L: L.full((2,), True),
    "full_list_size": lambda L: L.full([2, 2], 7.0),
    "full_dtype_int": lambda L: L.full([2], 1.5, dtype=L.int64),
    "full_uint8_neg": lambda L: L.full((2,), -1, dtype=L.uint8),
    "full_uint8_neg255": lambda L: L.full((2,), -255, dtype=L.uint8),
    "full_bool_dtype": lambda L: L.full((2,), 2.5, dtype=L.bool),
    "full_tensor_value": lambda L: L.full((2,), L.tensor(1.5)),
    "full_bf16_big": lambda L: L.full((2,), 70000.0, dtype=L.bfloat16),
    "full_f16_inf": lambda L: L.full((2,), float("inf"), dtype=L.float16),
    "full_f16_round": lambda L: L.full((1,), 1 + 2**-11 + 2**-40, dtype=L.float16),
    "full_nan": lambda L: L.full((1,), float("nan")),
    "full_rg": lambda L: L.full((2,), 1.0, requires_grad=True),
    "full_empty": lambda L: L.full((0, 2), 1.0),
    "eye": lambda L: L.eye(3),
    "eye_rect": lambda L: L.eye(3, 2),
    "eye_rect_wide": lambda L: L.eye(2, 4),
    "eye_zero": lambda L: L.eye(0),
    "eye_bool": lambda L: L.eye(2, dtype=L.bool),
    "eye_int": lambda L: L.eye(2, dtype=L.int64),
    "empty_strided_shape": lambda L: L.zeros_like(L.empty_strided((2, 3), (1, 2))),
    "scalar_tensor": lambda L: L.scalar_tensor(3),
    "scalar_tensor_dtype": lambda L: L.scalar_tensor(True, dtype=L.int32),
}


@pytest.mark.parametrize("build", FACTORY_CASES.values(), ids=FACTORY_CASES.keys())
def test_factories_match_torch(build):
    assert_same(*both(build))


@pytest.mark.parametrize("shape,strides", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((4,), (2,)),
                                           ((2, 2), (0, 1)), ((0, 3), (3, 1)), ((), ())])
def test_empty_strided_layout(shape, strides):
    o = retrograd.empty_strided(shape, strides, dtype=retrograd.float64)
    t = torch.empty_strided(shape, strides, dtype=torch.float64)
    assert tuple(o.shape) == tuple(t.shape)
    if 0 not in shape:
        assert o.stride() == t.stride()
    assert o.dtype is retrograd.float64
    o._data[...] = 1.0  # writable


def test_empty_is_uninitialised_but_right_shape():
    e = retrograd.empty(2, 3, dtype=retrograd.int32)
    assert e.shape == (2, 3) and e.dtype is retrograd.int32 and e.is_contiguous()


FACTORY_ERRORS = {
    "zeros_negative": lambda L: L.zeros(-1),
    "zeros_negative_2": lambda L: L.zeros(2, -3),
    "zeros_negative_list": lambda L: L.zeros([2, -1]),
    "zeros_float": lambda L: L.zeros(2.5),
    "zeros_tuple_float": lambda L: L.zeros((2, 2.5)),
    "zeros_varargs_float": lambda L: L.zeros(2, 2.5),
    "zeros_varargs_none": lambda L: L.zeros(2, None),
    "zeros_str": lambda L: L.zeros("a"),
    "zeros_bool": lambda L: L.zeros(True),
    "zeros_no_size": lambda L: L.zeros(),
    "zeros_int_rg": lambda L: L.zeros(2, requires_grad=True, dtype=L.int64),
    "ones_negative": lambda L: L.ones(-1),
    "ones_float": lambda L: L.ones(2.5),
    "ones_tuple_float": lambda L: L.ones((2, 2.5)),
    "empty_negative": lambda L: L.empty(-1),
    "empty_varargs_float": lambda L: L.empty(2, 2.5),
    "full_negative": lambda L: L.full((-1,), 1.0),
    "full_int_size": lambda L: L.full(2, 1.0),
    "full_list_value": lambda L: L.full((2,), [1]),
    "full_tensor_1d_value": lambda L: L.full((2,), L.tensor([1.5])),
    "full_uint8_overflow": lambda L: L.full((2,), 300, dtype=L.uint8),
    "full_uint8_overflow_neg": lambda L: L.full((2,), -256, dtype=L.uint8),
    "full_int8_overflow": lambda L: L.full((2,), -129, dtype=L.int8),
    "full_int32_overflow": lambda L: L.full((2,), 2**40, dtype=L.int32),
    "full_int64_float_overflow": lambda L: L.full((2,), 1e20, dtype=L.int64),
    "full_nan_int": lambda L: L.full((2,), float("nan"), dtype=L.int64),
    "full_f32_overflow": lambda L: L.full((2,), 1e40),
    "full_f16_overflow": lambda L: L.full((2,), 70000, dtype=L.float16),
    "full_like_overflow": lambda L: L.full_like(L.zeros(2, dtype=L.uint8), 300),
    "eye_negative": lambda L: L.eye(-1),
    "eye_negative_m": lambda L: L.eye(2, -1),
    "empty_strided_negative": lambda L: L.empty_strided((-1,), (1,)),
    "empty_strided_ndim": lambda L: L.empty_strided((2,), (1, 2)),
    "empty_strided_neg_stride": lambda L: L.empty_strided((2, 3), (-1, 1)),
    "new_zeros_negative": lambda L: L.zeros(2).new_zeros(-1),
    "new_zeros_no_size": lambda L: L.zeros(2).new_zeros(),
}


@pytest.mark.parametrize("build", FACTORY_ERRORS.values(), ids=FACTORY_ERRORS.keys())
def test_factory_errors_match_torch(build):
    same_error(build)


def test_factory_out_argument():
    out = retrograd.empty(2, 3)
    v = out._version
    res = retrograd.zeros(2, 3, out=out)
    assert res is out and (out._data == 0).all() and out._version > v
    res = retrograd.ones(4, out=out)
    assert res is out and out.shape == (4,)
    ar = retrograd.arange(3, out=retrograd.empty(0, dtype=retrograd.int64))
    assert ar.tolist() == [0, 1, 2]


# --- *_like and new_* ---------------------------------------------------------------------

LIKE_SOURCES = {
    "contig": lambda L: L.zeros(2, 3),
    "transposed": lambda L: L.zeros(3, 2).t(),
    "expanded": lambda L: L.zeros(3, 1).expand(3, 4),
    "expanded_row": lambda L: L.zeros(1, 3).expand(2, 3),
    "sliced": lambda L: L.zeros(3, 4)[:, ::2],
    "permuted_sliced": lambda L: L.zeros(2, 3, 4).permute(2, 0, 1)[:, :, ::2],
    "transposed_sliced": lambda L: L.zeros(4, 3).t()[:, ::2],
    "size1_dims": lambda L: L.zeros(2, 1, 3).permute(1, 2, 0),
    "size1_overlap": lambda L: L.zeros(3, 1, 2)[:, :, :1].permute(2, 1, 0),
    "strided_1d": lambda L: L.zeros(5)[::2],
    "int32": lambda L: L.zeros(2, dtype=L.int32),
    "scalar": lambda L: L.zeros(()),
}

LIKE_FNS = {
    "zeros_like": lambda L, x: L.zeros_like(x),
    "ones_like": lambda L, x: L.ones_like(x),
    "full_like": lambda L, x: L.full_like(x, 2.7),
    "full_like_int_value": lambda L, x: L.full_like(x, 3),
    "zeros_like_dtype": lambda L, x: L.zeros_like(x, dtype=L.float64),
    "ones_like_rg": lambda L, x: L.ones_like(x, dtype=L.float32, requires_grad=True),
    "empty_like_shape": lambda L, x: L.zeros_like(L.empty_like(x)),
}


@pytest.mark.parametrize("src", LIKE_SOURCES.values(), ids=LIKE_SOURCES.keys())
@pytest.mark.parametrize("fn", LIKE_FNS.values(), ids=LIKE_FNS.keys())
def test_like_functions_match_torch(src, fn):
    o = fn(retrograd, src(retrograd))
    t = fn(torch, src(torch))
    assert_same(o, t)


def test_empty_like_layout_matches_torch():
    for name, src in LIKE_SOURCES.items():
        o, t = retrograd.empty_like(src(retrograd)), torch.empty_like(src(torch))
        assert o.stride() == t.stride(), name
        assert o.dtype.name == str(t.dtype).replace("torch.", "")


NEW_CASES = {
    "new_zeros": lambda L: L.zeros(2, dtype=L.int32).new_zeros((2, 3)),
    "new_zeros_varargs": lambda L: L.zeros(2).new_zeros(2, 3),
    "new_zeros_scalar": lambda L: L.zeros(2).new_zeros([]),
    "new_ones_dtype": lambda L: L.zeros(2, dtype=L.int32).new_ones(2, 3, dtype=L.float64),
    "new_full": lambda L: L.zeros(2, dtype=L.int32).new_full((2,), 1.5),
    "new_full_f64": lambda L: L.zeros(2, dtype=L.float64).new_full((2,), 1.5),
    "new_tensor": lambda L: L.zeros(2, dtype=L.int32).new_tensor([1.5, 2.5]),
    "new_tensor_float": lambda L: L.zeros(2).new_tensor([1, 2]),
    "new_tensor_rg": lambda L: L.zeros(2).new_tensor([1, 2], requires_grad=True),
    "new_empty_shape": lambda L: L.zeros_like(L.zeros(2, dtype=L.int16).new_empty(L.Size([2]))),
    "new_zeros_from_rg": lambda L: L.zeros(2, requires_grad=True).new_zeros(2),
    "new_zeros_t": lambda L: L.zeros(2, 3).t().new_zeros(3, 2),
}


@pytest.mark.parametrize("build", NEW_CASES.values(), ids=NEW_CASES.keys())
def test_new_methods_match_torch(build):
    assert_same(*both(build))


# --- arange / linspace / logspace ---------------------------------------------------------

ARANGE_CASES = [
    (5,), (0, 5), (1, 10, 3), (10, 0, -3), (0, 1, 0.1), (0, 3, 0.1), (1, 4, 0.3),
    (-3.7, 4.2, 1.1), (0, 1e-9, 1e-10), (0.5, 5), (0, 5.5), (True, 3), (0, 0), (5, 5, -1),
    (0, 1000, 0.7), (-5, 77.25, 0.7), (0, 100, 1 / 3), (1.8230687, 29.5730687, 0.1),
]
ARANGE_DTYPES = [None, "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16",
                 "uint8"]


def _dt(lib, name):
    return None if name is None else getattr(lib, name)


@pytest.mark.parametrize("args", ARANGE_CASES, ids=str)
@pytest.mark.parametrize("dtype", ARANGE_DTYPES, ids=str)
def test_arange_matches_torch(args, dtype):
    def build(L):
        return L.arange(*args, dtype=_dt(L, dtype))

    try:
        t = build(torch)
    except (RuntimeError, ValueError):
        same_error(build)
        return
    assert_same(build(retrograd), t)


def test_arange_random_float_ranges_bitwise():
    rnd = random.Random(0)
    for _ in range(200):
        start = rnd.choice([0, rnd.uniform(-10, 10), rnd.randint(-5, 5)])
        step = rnd.choice([0.1, 0.01, 0.3, 1 / 3, rnd.uniform(0.001, 2), 0.7, -0.3])
        n = rnd.randint(1, 300)
        end = start + step * n - step / 2
        for dt in ("float32", "float64", "float16", "bfloat16"):
            def build(L, start=start, end=end, step=step, dt=dt):
                return L.arange(start, end, step, dtype=getattr(L, dt))

            assert_same(build(retrograd), build(torch))


def test_arange_tensor_arguments():
    assert_same(retrograd.arange(retrograd.tensor(3)), torch.arange(torch.tensor(3)))
    assert_same(retrograd.arange(retrograd.tensor(3.0)), torch.arange(torch.tensor(3.0)))
    assert_same(retrograd.arange(2, retrograd.tensor(5)), torch.arange(2, torch.tensor(5)))


def test_arange_requires_grad_and_default_dtype():
    assert_same(retrograd.arange(0.0, 3, requires_grad=True),
                torch.arange(0.0, 3, requires_grad=True))
    prev = retrograd.get_default_dtype()
    try:
        retrograd.set_default_dtype(retrograd.float64)
        assert retrograd.arange(0, 1, 0.5).dtype is retrograd.float64
        assert retrograd.arange(3).dtype is retrograd.int64
    finally:
        retrograd.set_default_dtype(prev)


ARANGE_ERRORS = {
    "zero_step": lambda L: L.arange(0, 5, 0),
    "zero_float_step": lambda L: L.arange(0.0, 5, 0.0),
    "wrong_sign": lambda L: L.arange(5, 0, 1),
    "wrong_sign_neg": lambda L: L.arange(0, 10, -1),
    "inf": lambda L: L.arange(0, float("inf")),
    "nan": lambda L: L.arange(0, float("nan")),
    "int64_step_truncates_to_zero": lambda L: L.arange(0, 5, 0.5, dtype=L.int64),
}


@pytest.mark.parametrize("build", ARANGE_ERRORS.values(), ids=ARANGE_ERRORS.keys())
def test_arange_errors_match_torch(build):
    same_error(build)


LINSPACE_CASES = [(0, 1, 5), (-3, 7, 20), (0, 1, 1), (0, 1, 0), (0, 1, 2), (5, -5, 7),
                  (0, 10, 4), (0.1, 0.7, 13), (-1e3, 1e-3, 101), (2, 2, 5), (0, 1000000007, 7)]


@pytest.mark.parametrize("args", LINSPACE_CASES, ids=str)
@pytest.mark.parametrize("dtype", [None, "float32", "float64", "float16", "bfloat16", "int64",
                                   "int32"], ids=str)
def test_linspace_matches_torch(args, dtype):
    def build(L):
        return L.linspace(*args, dtype=_dt(L, dtype))

    try:
        t = build(torch)
    except RuntimeError:
        same_error(build)
        return
    assert_same(build(retrograd), t)


def test_linspace_random_bitwise():
    rnd = random.Random(2)
    for _ in range(150):
        s = rnd.choice([0, rnd.uniform(-10, 10), rnd.randint(-5, 5)])
        e = rnd.choice([1, rnd.uniform(-10, 10), rnd.randint(-5, 5), 10])
        n = rnd.randint(1, 200)
        for dt in ("float32", "float64", "float16", "bfloat16"):
            def build(L, s=s, e=e, n=n, dt=dt):
                return L.linspace(s, e, n, dtype=getattr(L, dt))

            assert_same(build(retrograd), build(torch))


def test_linspace_tensor_args_and_errors():
    assert_same(retrograd.linspace(retrograd.tensor(0), retrograd.tensor(10), 4),
                torch.linspace(torch.tensor(0), torch.tensor(10), 4))
    same_error(lambda L: L.linspace(0, 1, -1))
    with pytest.raises(TypeError):
        retrograd.linspace(0, 1, 2.5)


@pytest.mark.parametrize("args,kw", [((0, 2, 3), {}), ((0, 2, 3), {"base": 2}),
                                     ((-2, 2, 9), {}), ((0, 1, 1), {}), ((0, 1, 0), {}),
                                     ((1, -1, 20), {"base": 2.5}), ((0, 2, 3),
                                                                   {"dtype": "int64"}),
                                     ((0, 3, 7), {"dtype": "float64"})], ids=str)
def test_logspace_matches_torch(args, kw):
    def build(L):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(L, k["dtype"])
        return L.logspace(*args, **k)

    o, t = both(build)
    assert o.dtype.name == str(t.dtype).replace("torch.", "")
    assert tuple(o.shape) == tuple(t.shape)
    np.testing.assert_allclose(_np(o), _np(t), rtol=1e-6)


# --- registration -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones",
                                  "empty", "full", "empty_strided", "eye", "zeros_like",
                                  "ones_like", "empty_like", "full_like", "arange", "linspace",
                                  "logspace", "scalar_tensor", "finfo", "iinfo",
                                  "set_printoptions"])
def test_exported(name):
    assert callable(getattr(retrograd, name))


@pytest.mark.parametrize("name", ["new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
                                  "new_empty_strided"])
def test_methods_exist(name):
    assert callable(getattr(retrograd.zeros(1), name))
