"""repr(tensor) parity with torch: number formats, layout, summarisation and suffixes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

NAN, INF = float("nan"), float("inf")
_rng = np.random.default_rng(0)
# fixed data (builders run once per library and must see the same values)
R3 = _rng.standard_normal((2, 3, 4)).tolist()
R4 = _rng.standard_normal((2, 2, 2, 2)).tolist()
R30 = _rng.standard_normal(30).tolist()
R3x15 = _rng.standard_normal((3, 15)).tolist()
R9 = _rng.standard_normal(9).tolist()
R2x9 = _rng.standard_normal((2, 9)).tolist()

# (name, builder(lib) -> tensor); builders use only API both libraries share
CASES = [
    ("float_1d", lambda L: L.tensor([1.5, 2.25, -3.125])),
    ("float_ints", lambda L: L.tensor([1.0, 2.0, -3.0])),
    ("float_int_big", lambda L: L.tensor([1.0, 2000.0])),
    ("float_int_1e8", lambda L: L.tensor([1.0e8, 2.0])),
    ("float_int_1e9", lambda L: L.tensor([3.0e9])),
    ("float_zero_only", lambda L: L.tensor([0.0, 0.0])),
    ("neg_zero", lambda L: L.tensor([-0.0, 0.0, 1.0])),
    ("neg_zero_frac", lambda L: L.tensor([-0.0, 0.5])),
    ("nan_inf", lambda L: L.tensor([NAN, INF, -INF, 1.5])),
    ("nan_inf_ints", lambda L: L.tensor([NAN, INF, -INF, 2.0])),
    ("only_nan", lambda L: L.tensor([NAN])),
    ("sci_small", lambda L: L.tensor([1e-5, 1.0])),
    ("sci_range", lambda L: L.tensor([0.001, 2.5])),
    ("sci_big", lambda L: L.tensor([1.5e10, 2.5])),
    ("sci_tiny", lambda L: L.tensor([1e-30, -2e-35])),
    ("sci_huge", lambda L: L.tensor([1e38, -3e37])),
    ("sci_3digit_exp", lambda L: L.tensor([1e-300, 1e300], dtype=L.float64)),
    ("rounding", lambda L: L.tensor([0.00015, 0.99995, 9.99995])),
    ("precision_width", lambda L: L.tensor([123.456, -0.5])),
    ("float_0d", lambda L: L.tensor(3.5)),
    ("float_0d_int", lambda L: L.tensor(3.0)),
    ("float_0d_nan", lambda L: L.tensor(NAN)),
    ("float_0d_small", lambda L: L.tensor(1e-7)),
    ("float_0d_negzero", lambda L: L.tensor(-0.0)),
    ("int_0d", lambda L: L.tensor(7)),
    ("bool_0d", lambda L: L.tensor(False)),
    ("int_1d", lambda L: L.tensor([1, -20, 300])),
    ("int_2d", lambda L: L.tensor([[1, 2], [-30, 4]])),
    ("bool_1d", lambda L: L.tensor([True, False, True])),
    ("bool_all_true", lambda L: L.tensor([True, True])),
    ("bool_2d", lambda L: L.tensor([[True], [False]])),
    ("float_2d", lambda L: L.tensor([[1.5, -2.0], [3.25, 4.0]])),
    ("float_3d", lambda L: L.tensor(R3)),
    ("float_4d", lambda L: L.tensor(R4)),
    ("long_row_wrap", lambda L: L.tensor(R30)),
    ("long_int_row", lambda L: L.tensor(list(range(-40, 40)))),
    ("wide_2d_wrap", lambda L: L.tensor(R3x15)),
    ("float64", lambda L: L.tensor([1.5, 2.0], dtype=L.float64)),
    ("float64_0d", lambda L: L.tensor(1.5, dtype=L.float64)),
    ("float16", lambda L: L.tensor([1.5, 2.0, 0.1], dtype=L.float16)),
    ("bfloat16", lambda L: L.tensor([1.5, 2.0, 0.1], dtype=L.bfloat16)),
    ("float8_e4m3fn", lambda L: L.tensor([1.5, 2.0, 0.1], dtype=L.float8_e4m3fn)),
    ("float8_e5m2", lambda L: L.tensor([1.5, 2.0, 0.1], dtype=L.float8_e5m2)),
    ("int32", lambda L: L.tensor([1, 2], dtype=L.int32)),
    ("int8", lambda L: L.tensor([-128, 127], dtype=L.int8)),
    ("uint8", lambda L: L.tensor([0, 255], dtype=L.uint8)),
    ("int16_0d", lambda L: L.tensor(5, dtype=L.int16)),
    ("empty_1d", lambda L: L.tensor([])),
    ("empty_2d", lambda L: L.zeros(0, 3)),
    ("empty_3d", lambda L: L.zeros(2, 0, 3)),
    ("empty_int", lambda L: L.zeros(0, dtype=L.int64)),
    ("empty_int32_2d", lambda L: L.zeros(3, 0, dtype=L.int32)),
    ("empty_bool", lambda L: L.zeros(0, dtype=L.bool)),
    ("empty_float64", lambda L: L.zeros(0, dtype=L.float64)),
    ("big_1d", lambda L: L.arange(2000)),
    ("big_float_1d", lambda L: L.arange(1001) / 7),
    ("threshold_exact", lambda L: L.arange(1000) / 3),
    ("big_2d", lambda L: L.arange(10000).reshape(100, 100) / 3),
    ("big_2d_narrow", lambda L: L.arange(3000).reshape(1000, 3) * 1.0),
    ("big_3d", lambda L: L.arange(2 * 30 * 40).reshape(2, 30, 40)),
    ("big_int_neg", lambda L: L.arange(-1500, 1500)),
    ("big_bool", lambda L: L.tensor([True, False, False] * 400)),
    # the outliers are in the summarised part, so they decide the format
    ("summary_outliers", lambda L: L.tensor([1e-8] + [1.0] * 2000 + [5.5])),
    ("summary_hidden_outlier", lambda L: L.tensor([1.0] * 1000 + [1e-8] + [1.0] * 1000)),
    ("requires_grad", lambda L: L.tensor([1.0, 2.0], requires_grad=True)),
    ("requires_grad_0d", lambda L: L.tensor(1.0, requires_grad=True)),
    ("grad_fn_mul", lambda L: L.tensor([1.0, 2.0], requires_grad=True) * 2),
    ("grad_fn_add_f64", lambda L: L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True) + 1),
    ("grad_fn_clone", lambda L: L.tensor([[1.0, 2.0]], requires_grad=True).clone()),
    ("grad_fn_sum", lambda L: L.tensor([1.0, 2.0], requires_grad=True).sum()),
    ("grad_fn_view", lambda L: L.tensor([1.0, 2.0], requires_grad=True).view(2, 1)),
    ("suffix_wrap", lambda L: L.tensor(R9, dtype=L.float64, requires_grad=True) * 2),
    ("suffix_wrap_2d", lambda L: L.tensor(R2x9, dtype=L.float16)),
    ("noncontig", lambda L: L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).t()),
    ("from_numpy_f64", lambda L: L.from_numpy(np.array([0.1, 0.2]))),
    ("from_numpy_i32", lambda L: L.from_numpy(np.array([[1, 2]], dtype=np.int32))),
]


def _build(lib, builder):
    out = builder(lib)
    if out is None:
        pytest.skip("needs an op not available yet")
    return out


@pytest.mark.parametrize("name,builder", CASES, ids=[c[0] for c in CASES])
def test_repr_matches_torch(name, builder):
    ours = _build(retrograd, builder)
    theirs = _build(torch, builder)
    expected = repr(theirs).replace("torch.", "retrograd.")
    assert repr(ours) == expected
    assert str(ours) == expected


@pytest.fixture
def restore_printoptions():
    yield
    retrograd.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


PRINTOPT_CASES = [
    {"precision": 2},
    {"precision": 8},
    {"precision": 0},
    {"sci_mode": True},
    {"sci_mode": False},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"linewidth": 40},
    {"linewidth": 200},
    {"profile": "short"},
    {"profile": "full"},
]

PRINTOPT_TENSORS = [
    lambda L: L.tensor([1.123456789, -2.5, 1e-3]),
    lambda L: L.tensor([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]),
    lambda L: L.tensor(list(range(20))),
    lambda L: L.arange(1200) / 11,
    lambda L: L.tensor([1e-6, 12345.678]),
    lambda L: L.zeros(3),
    lambda L: L.tensor([1, -2, 3]),
    lambda L: L.tensor([[NAN, 1.0], [INF, 2.0]]),
]


@pytest.mark.parametrize("opts", PRINTOPT_CASES, ids=lambda o: "-".join(f"{k}={v}"
                                                                         for k, v in o.items()))
@pytest.mark.parametrize("which", range(len(PRINTOPT_TENSORS)))
def test_set_printoptions_matches_torch(opts, which, restore_printoptions):
    retrograd.set_printoptions(**opts)
    torch.set_printoptions(**opts)
    ours = PRINTOPT_TENSORS[which](retrograd)
    theirs = PRINTOPT_TENSORS[which](torch)
    assert repr(ours) == repr(theirs).replace("torch.", "retrograd.")


def test_printoptions_profile_full_has_no_threshold(restore_printoptions):
    retrograd.set_printoptions(profile="full")
    assert "..." not in repr(retrograd.arange(5000))
    from retrograd._tensor_str import get_printoptions

    assert get_printoptions()["threshold"] == math.inf


def test_set_printoptions_sci_mode_none_resets(restore_printoptions):
    retrograd.set_printoptions(sci_mode=True)
    assert repr(retrograd.tensor([1.5])) == "tensor([1.5000e+00])"
    retrograd.set_printoptions(precision=4)  # sci_mode defaults to None again
    assert repr(retrograd.tensor([1.5])) == "tensor([1.5000])"


def test_default_dtype_changes_suffix():
    prev = retrograd.get_default_dtype()
    try:
        retrograd.set_default_dtype(retrograd.float64)
        torch.set_default_dtype(torch.float64)
        for build in (lambda L: L.tensor([1.5]), lambda L: L.tensor([1.5], dtype=L.float32),
                      lambda L: L.zeros(0), lambda L: L.zeros(0, dtype=L.float32)):
            assert repr(build(retrograd)) == repr(build(torch)).replace("torch.", "retrograd.")
    finally:
        retrograd.set_default_dtype(prev)
        torch.set_default_dtype(torch.float32)


def test_tensor_subclass_uses_class_name():
    class MyTensor(retrograd.Tensor):
        pass

    t = retrograd.tensor([1.0])
    sub = MyTensor.__new__(MyTensor)
    for slot in ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_grad",
                 "_version_counter", "_view", "_grad_acc", "_meta"):
        setattr(sub, slot, getattr(t, slot))
    assert repr(sub) == "MyTensor([1.])"


def test_format_of_0d_tensor_with_spec():
    assert f"{retrograd.tensor(2.5):.2f}" == f"{torch.tensor(2.5):.2f}"
