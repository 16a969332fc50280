"""uint16, uint32 and uint64 against torch: creation and its overflow rules, conversions, NumPy
and file round trips, torch's random streams, and every op torch runs on them. torch refuses
most arithmetic on them (NotImplementedError); retrograd runs NumPy's integer kernels there,
a deliberate difference (README), checked here against worked values."""

from __future__ import annotations

import copy
import io

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

WIDE = ["uint16", "uint32", "uint64"]


def _set(x):
    x[0] = 7
    x[1:3] = 0
    return x


def _save_load(lib, t):
    buf = io.BytesIO()
    lib.save({"t": t}, buf)
    buf.seek(0)
    return lib.load(buf)["t"]


def _np(d):
    return np.dtype(str(d).rsplit(".", 1)[-1])


# what torch 2.13 runs on these dtypes: name -> program over (lib, dtype d, t, u)
SUPPORTED = {
    "mul": lambda L, d, t, u: t * u,
    "true_div": lambda L, d, t, u: t / u,
    "true_div_scalar": lambda L, d, t, u: t / 2,
    "eq": lambda L, d, t, u: t == u,
    "ne": lambda L, d, t, u: t != u,
    "eq_scalar": lambda L, d, t, u: t == 1,
    "eq_float_tensor": lambda L, d, t, u: t == L.tensor([3.0, 1, 2, 5]),
    "sum": lambda L, d, t, u: t.sum(),
    "sum_dim": lambda L, d, t, u: t.reshape(2, 2).sum(0),
    "sum_dtype": lambda L, d, t, u: t.sum(dtype=L.int32),
    "sum_wide": lambda L, d, t, u: L.tensor([2**15, 2**15], dtype=d).sum(),
    "prod": lambda L, d, t, u: t.prod(),
    "cumsum": lambda L, d, t, u: t.cumsum(0),
    "sort": lambda L, d, t, u: t.sort(),
    "sort_descending": lambda L, d, t, u: t.sort(descending=True),
    "argsort": lambda L, d, t, u: t.argsort(),
    "unique": lambda L, d, t, u: t.unique(),
    "unique_inverse_counts": lambda L, d, t, u: t.unique(return_inverse=True,
                                                          return_counts=True),
    "bitwise_and": lambda L, d, t, u: t & u,
    "bitwise_or": lambda L, d, t, u: t | u,
    "bitwise_xor": lambda L, d, t, u: t ^ u,
    "bitwise_and_scalar": lambda L, d, t, u: t & 1,
    "any": lambda L, d, t, u: t.any(),
    "all": lambda L, d, t, u: t.all(),
    "equal": lambda L, d, t, u: L.equal(t, u),
    "allclose": lambda L, d, t, u: L.allclose(t, u),
    "to_float": lambda L, d, t, u: t.float(),
    "to_double": lambda L, d, t, u: t.double(),
    "to_half": lambda L, d, t, u: t.half(),
    "to_int64": lambda L, d, t, u: t.long(),
    "to_uint8": lambda L, d, t, u: t.to(L.uint8),
    "to_bool": lambda L, d, t, u: t.bool(),
    "from_float": lambda L, d, t, u: L.tensor([1.5, 7e4, -1.0]).to(d),
    "from_int64": lambda L, d, t, u: L.tensor([-1, 70000]).to(d),
    "from_int32": lambda L, d, t, u: L.tensor([-1, 5], dtype=L.int32).to(d),
    "cat": lambda L, d, t, u: L.cat([t, u]),
    "stack": lambda L, d, t, u: L.stack([t, u]),
    "index_list": lambda L, d, t, u: t[[0, 2]],
    "index_tensor": lambda L, d, t, u: t[L.tensor([3, 0])],
    "index_mask": lambda L, d, t, u: t[L.tensor([True, False, True, False])],
    "slice": lambda L, d, t, u: t[1:3],
    "setitem": lambda L, d, t, u: _set(t.clone()),
    "reshape": lambda L, d, t, u: t.reshape(2, 2),
    "clone": lambda L, d, t, u: t.clone(),
    "contiguous": lambda L, d, t, u: t.reshape(2, 2).t().contiguous(),
    "unsqueeze": lambda L, d, t, u: t.unsqueeze(0),
    "expand": lambda L, d, t, u: t[None].expand(2, 4),
    "chunk": lambda L, d, t, u: t.chunk(2),
    "split": lambda L, d, t, u: t.split(2),
    "narrow": lambda L, d, t, u: t.narrow(0, 1, 2),
    "permute": lambda L, d, t, u: t.reshape(2, 2).permute(1, 0),
    "transpose": lambda L, d, t, u: t.reshape(2, 2).T,
    "roll": lambda L, d, t, u: t.roll(1),
    "repeat": lambda L, d, t, u: t.repeat(2),
    "diag": lambda L, d, t, u: t.diag(),
    "zeros": lambda L, d, t, u: L.zeros(3, dtype=d),
    "ones": lambda L, d, t, u: L.ones(3, dtype=d),
    "full": lambda L, d, t, u: L.full((2,), 7, dtype=d),
    "zeros_like": lambda L, d, t, u: L.zeros_like(t),
    "full_like": lambda L, d, t, u: L.full_like(t, 9),
    "new_zeros": lambda L, d, t, u: t.new_zeros(2),
    "new_full": lambda L, d, t, u: t.new_full((2,), 3),
    "new_tensor": lambda L, d, t, u: t.new_tensor([1, 2]),
    "empty_like_dtype": lambda L, d, t, u: str(L.empty_like(t).dtype),
    "fill_": lambda L, d, t, u: t.clone().fill_(4),
    "fill_negative": lambda L, d, t, u: t.clone().fill_(-1),
    "zero_": lambda L, d, t, u: t.clone().zero_(),
    "copy_": lambda L, d, t, u: t.clone().copy_(u),
    "copy_from_float": lambda L, d, t, u: t.clone().copy_(L.tensor([1.0, 2, 3, 4])),
    "copy_into_float": lambda L, d, t, u: L.zeros(4).copy_(t),
    "where_eq": lambda L, d, t, u: L.where(t == 1, t, u),
    "promote_float_tensor": lambda L, d, t, u: t * L.tensor([1.5]),
    "promote_zero_dim_int": lambda L, d, t, u: t * L.tensor(2),
    "promote_python_float": lambda L, d, t, u: t * 1.5,
    "promote_python_bool": lambda L, d, t, u: t * True,
    "promote_python_int": lambda L, d, t, u: t * 3,
    "item": lambda L, d, t, u: t[3].item(),
    "tolist": lambda L, d, t, u: t.tolist(),
    "numpy": lambda L, d, t, u: t.numpy(),
    "repr": lambda L, d, t, u: repr(t),
    "str_2d": lambda L, d, t, u: str(t[None].expand(2, 4)),
    "type": lambda L, d, t, u: t.type(),
    "facts": lambda L, d, t, u: (t.is_signed(), t.is_floating_point(), t.element_size(),
                                 t.nbytes, d.itemsize, d.is_signed, d.is_floating_point),
    "iinfo": lambda L, d, t, u: (L.iinfo(d).max, L.iinfo(d).min, L.iinfo(d).bits,
                                 repr(L.iinfo(d))),
    "save_load": lambda L, d, t, u: _save_load(L, t),
    "deepcopy": lambda L, d, t, u: copy.deepcopy(t),
    "tensor_of_numpy": lambda L, d, t, u: L.tensor(np.array([1, 2], dtype=_np(d))),
    "as_tensor": lambda L, d, t, u: L.as_tensor(np.array([1, 2], dtype=_np(d))),
    "from_numpy": lambda L, d, t, u: L.from_numpy(np.array([[1, 2]], dtype=_np(d))),
    "default_collate": lambda L, d, t, u: L.utils.data.default_collate(
        [np.array([1, 2], dtype=_np(d)), np.array([3, 4], dtype=_np(d))]),
    "randint": lambda L, d, t, u: (L.manual_seed(0), L.randint(0, 5, (6,), dtype=d))[1],
    "randint_wide": lambda L, d, t, u: (L.manual_seed(4), L.randint(0, 2**16, (3,), dtype=d))[1],
    "randint_like": lambda L, d, t, u: (L.manual_seed(1), L.randint_like(t, 9))[1],
    "random_from_to": lambda L, d, t, u: (L.manual_seed(2),
                                          L.empty(5, dtype=d).random_(0, 100))[1],
    "random_to": lambda L, d, t, u: (L.manual_seed(3), L.empty(3, dtype=d).random_(5))[1],
}

# refused alike: promotion with any dtype but a floating one, and torch's range checks
REFUSED = {
    "promote_int64_tensor": lambda L, d, t, u: t + L.tensor([1]),
    "promote_uint8_tensor": lambda L, d, t, u: t * L.tensor([1], dtype=L.uint8),
    "promote_bool_tensor": lambda L, d, t, u: t * L.tensor([True] * 4),
    "promote_other_unsigned": lambda L, d, t, u: t * L.tensor(
        [1], dtype=L.uint32 if str(d).endswith("uint16") else L.uint16),
    "result_type": lambda L, d, t, u: L.result_type(t, L.tensor([1], dtype=L.uint8)),
    "promote_types_float8": lambda L, d, t, u: L.promote_types(d, L.float8_e5m2),
    "random_default_range": lambda L, d, t, u: L.empty(2, dtype=d).random_(),
    "random_below_zero": lambda L, d, t, u: L.empty(2, dtype=d).random_(-1, 5),
    "mean": lambda L, d, t, u: t.mean(),
}


def _plain(x):
    if hasattr(x, "numpy") and hasattr(x, "dtype"):
        return ("tensor", str(x.dtype).rsplit(".", 1)[-1], x.numpy().tolist(), tuple(x.shape))
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return ("array", str(x.dtype), x.tolist())
    if isinstance(x, str):
        return x.replace("torch.", "retrograd.")
    return x


def _run(lib, dtype_name, program):
    d = getattr(lib, dtype_name)
    t = lib.tensor([3, 1, 2, 5], dtype=d)
    u = lib.tensor([1, 1, 2, 0], dtype=d)
    return _plain(program(lib, d, t, u))


@pytest.mark.parametrize("name", sorted(SUPPORTED))
@pytest.mark.parametrize("dtype_name", WIDE)
def test_what_torch_runs_matches(dtype_name, name):
    assert _run(retrograd, dtype_name, SUPPORTED[name]) == _run(torch, dtype_name,
                                                                SUPPORTED[name])


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("dtype_name", WIDE)
def test_what_torch_refuses_is_refused(dtype_name, name):
    with pytest.raises(Exception) as theirs:
        _run(torch, dtype_name, REFUSED[name])
    with pytest.raises(Exception) as ours:
        _run(retrograd, dtype_name, REFUSED[name])
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


VALUES = [-1, -70000, 2**16, 2**32 + 3, 2**63, 2**64 - 1, 2**64, -2**63, -2**63 - 1]


@pytest.mark.parametrize("how", ["tensor", "full", "fill_"])
@pytest.mark.parametrize("dtype_name", WIDE)
def test_python_ints_convert_and_overflow_as_torch(dtype_name, how):
    def build(lib, v):
        d = getattr(lib, dtype_name)
        if how == "tensor":
            return lib.tensor([v], dtype=d)
        if how == "full":
            return lib.full((1,), v, dtype=d)
        return lib.zeros(1, dtype=d).fill_(v)

    for v in VALUES:
        outcomes = []
        for lib in (torch, retrograd):
            try:
                outcomes.append(("ok", build(lib, v).tolist()))
            except Exception as e:  # noqa: BLE001 - the error is what is compared
                outcomes.append((type(e).__name__, str(e)))
        assert outcomes[0] == outcomes[1], v


def test_numpy_unsigned_scalars_make_tensors_of_their_dtype():
    for name in ("uint16", "uint32"):
        for lib in (torch, retrograd):
            t = lib.tensor([np.dtype(name).type(3), np.dtype(name).type(4)])
            assert str(t.dtype).endswith(name) and t.tolist() == [3, 4]
    # torch refuses NumPy uint64 scalars ("an integer is required"); retrograd takes them
    t = retrograd.tensor([np.uint64(2**63 + 1), np.uint64(4)])
    assert t.dtype is retrograd.uint64 and t.tolist() == [2**63 + 1, 4]


def test_ints_beyond_64_bits_are_refused_as_torch():
    for lib in (torch, retrograd):
        with pytest.raises(OverflowError, match="int too big to convert"):
            lib.full((1,), 2**64, dtype=lib.int64)
        with pytest.raises(OverflowError, match="int too big to convert"):
            lib.zeros(1).fill_(2**64)
        with pytest.raises(OverflowError, match="can't convert negative int to unsigned"):
            lib.zeros(1, dtype=lib.int32).fill_(-2**63 - 1)


def test_floats_are_not_integers_for_uint64():
    for lib in (torch, retrograd):
        with pytest.raises(TypeError, match="an integer is required"):
            lib.tensor([1.5], dtype=lib.uint64)


@pytest.mark.parametrize("dtype_name", WIDE)
def test_torch_checkpoints_of_them_load(dtype_name):
    top = int(np.iinfo(dtype_name).max)
    buf = io.BytesIO()
    torch.save({"w": torch.tensor([1, top], dtype=getattr(torch, dtype_name))}, buf)
    buf.seek(0)
    ours = retrograd.load(buf)["w"]
    assert ours.dtype is getattr(retrograd, dtype_name) and ours.tolist() == [1, top]


def test_uint64_beyond_int64_round_trips():
    t = retrograd.tensor([2**64 - 1, 5], dtype=retrograd.uint64)
    assert _save_load(retrograd, t).tolist() == [2**64 - 1, 5]
    assert t.numpy().dtype == np.uint64 and t[0].item() == 2**64 - 1


def test_fill_of_a_negative_int_wraps_uint8_as_torch():
    # a negative Python int filled into an unsigned tensor wraps, as torch's checked fill does
    assert retrograd.zeros(2, dtype=retrograd.uint8).fill_(-1).tolist() == [255, 255]
    with pytest.raises(RuntimeError, match="value cannot be converted to type int16_t"):
        retrograd.zeros(2, dtype=retrograd.int16).fill_(70000)


@pytest.mark.parametrize("dtype_name", WIDE)
def test_integer_ops_torch_lacks_follow_numpy(dtype_name):
    """The deliberate difference: NumPy's integer kernels where torch has none, wrapping
    modulo 2**bits as uint8 does in both libraries."""
    d = getattr(retrograd, dtype_name)
    top = np.iinfo(dtype_name).max
    t = retrograd.tensor([3, 1, 2, 5], dtype=d)
    u = retrograd.tensor([1, 1, 2, 0], dtype=d)
    assert (t + u).tolist() == [4, 2, 4, 5] and (t + u).dtype is d
    assert (u - t).tolist() == [top - 1, 0, 0, top - 4]
    assert (-t).tolist() == [top - 2, top, top - 1, top - 4]
    assert (t < u).tolist() == [False, False, False, False]
    assert (t >= 2).tolist() == [True, False, True, True]
    assert t.max().item() == 5 and t.argmax().item() == 3 and t.min().dtype is d
    assert (t // 2).tolist() == [1, 0, 1, 2] and (t % 2).tolist() == [1, 1, 0, 1]
    assert (~u).tolist() == [top - 1, top - 1, top - 2, top]
    assert (t << 1).tolist() == [6, 2, 4, 10] and (t >> 1).tolist() == [1, 0, 1, 2]
    assert t.clamp(2, 4).tolist() == [3, 2, 2, 4]
    assert retrograd.arange(3, dtype=d).tolist() == [0, 1, 2]
    assert t.flip(0).tolist() == [5, 2, 1, 3]
    assert (t @ u).item() == 8


def test_wide_unsigned_tensors_do_not_require_grad():
    t = retrograd.tensor([1, 2], dtype=retrograd.uint32)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        t.requires_grad_()
