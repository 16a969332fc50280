"""The Tensor API surface against torch: conversions, metadata, memory sharing, Python protocols."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import retrograd
from tests.tensor_numpy import as_numpy as _np

torch = pytest.importorskip("torch")


def assert_same(o, t, *, strides: bool = True) -> None:
    assert o.dtype.name == str(t.dtype).replace("torch.", "")
    assert tuple(o.shape) == tuple(t.shape)
    if strides:
        assert o.stride() == t.stride()
    assert o.requires_grad == t.requires_grad
    assert (o.grad_fn and o.grad_fn.name()) == (t.grad_fn and t.grad_fn.name())
    np.testing.assert_array_equal(_np(o), _np(t))


def both(build):
    return build(retrograd), build(torch)


def same_error(build, exc=Exception):
    with pytest.raises(exc) as t_err:
        build(torch)
    with pytest.raises(exc) as o_err:
        build(retrograd)
    assert type(o_err.value) is type(t_err.value)
    assert str(o_err.value) == str(t_err.value).replace("torch.", "retrograd.")


VALUES = [[1.5, -2.25, 0.1], [3.0, 1e10, -0.0]]

# --- dtype conversions ---------------------------------------------------------------------

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]

CONVERSIONS = {
    "float": lambda x: x.float(),
    "double": lambda x: x.double(),
    "half": lambda x: x.half(),
    "bfloat16": lambda x: x.bfloat16(),
    "long": lambda x: x.long(),
    "int": lambda x: x.int(),
    "short": lambda x: x.short(),
    "char": lambda x: x.char(),
    "byte": lambda x: x.byte(),
    "bool": lambda x: x.bool(),
}


def _source(L, dtype):
    data = [[1.5, -2.75, 0.0], [3.0, 100.25, -7.5]] if dtype not in ("uint8", "bool") \
        else [[1, 0, 3], [255, 7, 0]] if dtype == "uint8" else [[True, False, True]] * 2
    return L.tensor(data, dtype=getattr(L, dtype)) if dtype != "bool" else L.tensor(data)


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("conv", CONVERSIONS.values(), ids=CONVERSIONS.keys())
def test_conversion_methods(src, conv):
    assert_same(*both(lambda L: conv(_source(L, src))))


@pytest.mark.parametrize("src", DTYPES)
@pytest.mark.parametrize("dst", DTYPES)
def test_to_dtype(src, dst):
    assert_same(*both(lambda L: _source(L, src).to(getattr(L, dst))))


def test_to_same_dtype_returns_self():
    x = retrograd.ones(2)
    assert x.to(retrograd.float32) is x
    assert x.float() is x
    y = x.to(retrograd.float32, copy=True)
    assert y is not x and not np.shares_memory(y._data, x._data)


@pytest.mark.parametrize("args", ["dtype_kw", "device", "device_dtype", "other", "py_float"])
def test_to_overloads(args):
    def build(L):
        x = L.ones(2, 3, dtype=L.int32)
        if args == "dtype_kw":
            return x.to(dtype=L.float64)
        if args == "device":
            return x.to("cpu")
        if args == "device_dtype":
            return x.to("cpu", L.float16)
        if args == "other":
            return x.to(L.zeros(1, dtype=L.bfloat16))
        return x.to(float)

    assert_same(*both(build))


def test_to_keeps_layout_and_grad():
    assert_same(*both(lambda L: L.ones(3, 2).t().double()))
    assert_same(*both(lambda L: L.ones(2, requires_grad=True).double()))
    assert_same(*both(lambda L: L.ones(2, requires_grad=True).half()))


_TO_COPY_FIX = ("copy.py's _to_copy forward uses ndarray.astype directly; torch rounds float64 "
                "through float32 on the way to float16 / bfloat16 / float8, and float8_e4m3fn "
                "saturates at +-448 (inf too): use retrograd._ops.creation.cast_array")
NARROWING = [
    pytest.param([1e6, -1e6, 70000.0], "float8_e4m3fn"),
    pytest.param([float("nan"), float("inf"), -float("inf")], "float8_e4m3fn"),
    pytest.param([0.1, 1 + 2**-11 + 2**-40], "float16"),
    ([0.1, 1 + 2**-11 + 2**-40], "float8_e4m3fn"),
    ([1e6, -1e6, 70000.0], "float16"),
    ([float("nan"), float("inf"), -float("inf")], "float16"),
] + [(v, d) for d in ("bfloat16", "float8_e5m2")
     for v in ([1e6, -1e6, 70000.0], [0.1, 1 + 2**-8 + 2**-40],
               [float("nan"), float("inf"), -float("inf")])]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("values,dst", NARROWING)
def test_narrowing_float_conversions(values, dst):
    # float64 -> narrow floats rounds through float32 in torch; float8_e4m3fn saturates
    assert_same(*both(lambda L: L.tensor(values, dtype=L.float64).to(getattr(L, dst))))


@pytest.mark.parametrize("dst", ["int64", "int32", "int8", "uint8", "bool"])
def test_float_to_int_conversions(dst):
    assert_same(*both(lambda L: L.tensor([1.7, -1.7, 2.5, -0.0, 100.9]).to(getattr(L, dst))))


# --- metadata -------------------------------------------------------------------------------

SHAPES = {
    "scalar": lambda L: L.tensor(1.5),
    "vector": lambda L: L.tensor([1.0, 2.0, 3.0]),
    "matrix": lambda L: L.tensor(VALUES),
    "matrix_t": lambda L: L.tensor(VALUES).t(),
    "3d": lambda L: L.zeros(2, 3, 4),
    "3d_permuted": lambda L: L.zeros(2, 3, 4).permute(2, 0, 1),
    "expanded": lambda L: L.zeros(3, 1).expand(3, 4),
    "empty": lambda L: L.zeros(0, 3),
    "int": lambda L: L.tensor([[1, 2], [3, 4]], dtype=L.int32),
    "offset_view": lambda L: L.zeros(4, 5).as_strided((2, 2), (5, 1), 6),
}


@pytest.mark.parametrize("build", SHAPES.values(), ids=SHAPES.keys())
def test_metadata(build):
    o, t = both(build)
    assert tuple(o.shape) == tuple(t.shape)
    assert isinstance(o.shape, retrograd.Size)
    assert o.size() == tuple(t.size())
    assert repr(o.size()) == repr(t.size()).replace("torch.", "retrograd.")
    for d in range(-o.dim(), o.dim()):
        assert o.size(d) == t.size(d)
        assert o.stride(d) == t.stride(d)
    assert o.dim() == t.dim() == o.ndim == o.ndimension()
    assert o.numel() == t.numel() == o.nelement()
    assert o.stride() == t.stride()
    assert o.storage_offset() == t.storage_offset()
    assert o.is_contiguous() == t.is_contiguous()
    assert o.element_size() == t.element_size() == o.itemsize
    assert o.nbytes == t.nbytes
    assert o.type() == t.type().replace("torch.", "retrograd.")
    assert o.is_floating_point() == t.is_floating_point()
    assert o.is_complex() == t.is_complex()
    assert str(o.device) == str(t.device) == "cpu"
    assert o.device == retrograd.device("cpu")
    assert o.is_cuda is False and o.is_sparse is False and o.is_quantized is False
    assert o.is_meta is False


@pytest.mark.parametrize("build", SHAPES.values(), ids=SHAPES.keys())
def test_contiguous(build):
    o, t = both(build)
    oc, tc = o.contiguous(), t.contiguous()
    assert_same(oc, tc)
    assert (oc is o) == (tc is t)


@pytest.mark.parametrize("build", SHAPES.values(), ids=SHAPES.keys())
def test_clone(build):
    o, t = both(build)
    oc, tc = o.clone(), t.clone()
    assert_same(oc, tc)
    assert not np.shares_memory(oc._data, o._data) or o.numel() == 0


def test_size_dim_errors():
    same_error(lambda L: L.zeros(2, 3).size(2))
    same_error(lambda L: L.zeros(2, 3).stride(-3))


def test_size_is_a_tuple():
    s = retrograd.zeros(2, 3).size()
    assert s == (2, 3) and isinstance(s, tuple)
    assert s.numel() == 6
    assert s[1:] == retrograd.Size([3]) and isinstance(s[1:], retrograd.Size)
    assert repr(retrograd.Size([])) == repr(torch.Size([])).replace("torch.", "retrograd.")


# --- T / mT / transposes ---------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4)])
def test_T_property(shape):
    def build(L):
        x = L.arange(float(np.prod(shape))).reshape(shape)
        return x.T if len(shape) != 3 else x.permute(2, 1, 0)

    assert_same(*both(build))


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (4, 1, 2, 3)])
def test_mT_property(shape):
    assert_same(*both(lambda L: L.arange(float(np.prod(shape))).reshape(shape).mT))


def test_mT_needs_two_dims():
    same_error(lambda L: L.zeros(3).mT)


# --- detach / data -----------------------------------------------------------------------------


def test_detach_shares_memory_and_version_counter():
    x = retrograd.ones(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.requires_grad is False and d.grad_fn is None and d.is_leaf
    assert np.shares_memory(d._data, y._data)
    assert d._version_counter is y._version_counter
    v = y._version
    d._data[0] = 5  # writes through
    assert y._data[0] == 5
    d.normal_()  # an in-place op on the detached tensor bumps the shared counter
    assert y._version == v + 1
    dt = (torch.ones(3, requires_grad=True) * 2).detach()
    assert d.stride() == dt.stride()


def test_detach_keeps_view_layout():
    assert_same(*both(lambda L: L.ones(2, 3, requires_grad=True).t().detach()))


def test_data_shares_memory():
    x = retrograd.ones(3, requires_grad=True)
    assert np.shares_memory(x.data._data, x._data)
    assert x.data.requires_grad is False


# --- Python scalars and protocols -------------------------------------------------------------

ITEM_CASES = {
    "float": lambda L: L.tensor(2.5),
    "float_1elem": lambda L: L.tensor([[2.5]]),
    "int": lambda L: L.tensor(3),
    "bool": lambda L: L.tensor(True),
    "half": lambda L: L.tensor(0.1, dtype=L.float16),
    "bfloat16": lambda L: L.tensor(0.1, dtype=L.bfloat16),
    "float64": lambda L: L.tensor(0.1, dtype=L.float64),
    "uint8": lambda L: L.tensor(200, dtype=L.uint8),
    "nan": lambda L: L.tensor(float("nan")),
}


@pytest.mark.parametrize("build", ITEM_CASES.values(), ids=ITEM_CASES.keys())
def test_item(build):
    o, t = both(build)
    a, b = o.item(), t.item()
    assert type(a) is type(b)
    assert a == b or (a != a and b != b)


@pytest.mark.parametrize("build", ITEM_CASES.values(), ids=ITEM_CASES.keys())
def test_python_number_conversions(build):
    o, t = both(build)
    f_o, f_t = float(o), float(t)
    assert f_o == f_t or (f_o != f_o and f_t != f_t)
    if f_t == f_t:
        assert int(o) == int(t)
    assert bool(o) == bool(t)


def test_item_errors():
    same_error(lambda L: L.zeros(2).item())
    same_error(lambda L: bool(L.zeros(2)))


@pytest.mark.parametrize("conv", [float, int])
def test_number_conversion_errors(conv):
    same_error(lambda L: conv(L.zeros(2)))


TOLIST_CASES = {
    "scalar": lambda L: L.tensor(1.5),
    "matrix": lambda L: L.tensor(VALUES),
    "int": lambda L: L.tensor([[1, 2], [3, 4]], dtype=L.int16),
    "bool": lambda L: L.tensor([True, False]),
    "half": lambda L: L.tensor([0.1, 0.2], dtype=L.float16),
    "bfloat16": lambda L: L.tensor([0.1, 0.2], dtype=L.bfloat16),
    "empty": lambda L: L.zeros(0, 2),
    "noncontig": lambda L: L.tensor(VALUES).t(),
}


@pytest.mark.parametrize("build", TOLIST_CASES.values(), ids=TOLIST_CASES.keys())
def test_tolist(build):
    o, t = both(build)
    a, b = o.tolist(), t.tolist()
    assert a == b

    def types(x):
        return [types(v) for v in x] if isinstance(x, list) else type(x)

    assert types(a) == types(b)


def test_len_and_iteration():
    o, t = both(lambda L: L.tensor(VALUES))
    assert len(o) == len(t) == 2
    rows_o, rows_t = list(o), list(t)
    assert len(rows_o) == len(rows_t)
    for a, b in zip(rows_o, rows_t):
        assert_same(a, b)
    same_error(lambda L: len(L.tensor(1.0)))
    same_error(lambda L: iter(L.tensor(1.0)))


def test_iteration_of_grad_tensor_records_history():
    o, t = both(lambda L: L.ones(2, 3, requires_grad=True) * 1)
    for a, b in zip(o, t):
        assert a.grad_fn.name() == b.grad_fn.name()


def test_index_protocol():
    assert [10, 20, 30][retrograd.tensor(1)] == 20
    same_error(lambda L: [10, 20][L.tensor(1.0)])


def test_format():
    assert f"{retrograd.tensor(1.23456):.2f}" == "1.23"
    assert f"{retrograd.tensor([1.5])}" == "tensor([1.5000])"


# --- data_ptr and memory sharing -----------------------------------------------------------------


def test_data_ptr_consistent_with_views():
    o, t = both(lambda L: L.zeros(4, 5))
    for build in (lambda x: x[1], lambda x: x[:, 2], lambda x: x.t(), lambda x: x.view(20),
                  lambda x: x[2:, 1:]):
        vo, vt = build(o), build(t)
        assert vo.data_ptr() - o.data_ptr() == vt.data_ptr() - t.data_ptr()
        assert vo.storage_offset() == vt.storage_offset()
    assert o.data_ptr() == o._data.__array_interface__["data"][0]
    assert o.clone().data_ptr() != o.data_ptr()


def test_numpy_round_trip_shares_memory():
    a = np.arange(6.0).reshape(2, 3)
    t = retrograd.from_numpy(a)
    v = t.t()
    assert v.numpy().base is not None and np.shares_memory(v.numpy(), a)
    assert t.data_ptr() == a.__array_interface__["data"][0]


def test_array_protocol():
    t = retrograd.tensor([1.0, 2.0])
    assert np.asarray(t).dtype == np.float32
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


# --- copying and pickling ------------------------------------------------------------------------


def test_deepcopy_and_pickle():
    x = retrograd.tensor([[1.0, 2.0]], requires_grad=True)
    y = copy.deepcopy(x)
    assert y is not x and y.requires_grad and not np.shares_memory(y._data, x._data)
    np.testing.assert_array_equal(y._data, x._data)
    z = pickle.loads(pickle.dumps(x))
    assert z.requires_grad and z.dtype is retrograd.float32
    np.testing.assert_array_equal(z._data, x._data)
    with pytest.raises(RuntimeError) as t_err:
        copy.deepcopy(torch.ones(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError) as o_err:
        copy.deepcopy(retrograd.ones(2, requires_grad=True) * 2)
    assert str(o_err.value) == str(t_err.value)


# --- requires_grad ---------------------------------------------------------------------------


def test_requires_grad_errors():
    same_error(lambda L: L.zeros(2, dtype=L.int64).requires_grad_())
    same_error(lambda L: (L.ones(2, requires_grad=True) * 2).requires_grad_(False))


def test_type_with_dtype():
    assert_same(*both(lambda L: L.ones(2).type(L.float64)))


def test_type_with_legacy_name():
    o = retrograd.ones(2).type("retrograd.DoubleTensor")
    t = torch.ones(2).type("torch.DoubleTensor")
    assert_same(o, t)


def test_T_warns_on_non_matrix():
    with pytest.warns(UserWarning, match="The use of `x.T` on tensors of dimension other than 2"):
        _ = retrograd.zeros(2, 3, 4).T
