"""retrograd.testing: assert_close's tolerances and messages against torch.testing's, and
make_tensor's arguments."""

import numpy as np
import pytest
import torch

import retrograd
from retrograd.testing import assert_close, make_tensor


def _outcome(lib, fn):
    close = torch.testing.assert_close if lib is torch else assert_close
    try:
        fn(lib, close)
    except Exception as e:  # noqa: BLE001 - type and message are compared
        return type(e), str(e).replace("torch", "retrograd").replace(
            "retrograd._tensor.Tensor", "retrograd.Tensor")
    return None


CASES = {
    "close_values": lambda L, c: c(L.tensor([1.0, 2.0, 3.0, 4.0]),
                                   L.tensor([1.0, 2.001, 3.0, 6.0])),
    "within_tolerance": lambda L, c: c(L.tensor([0.0, 1e-6]), L.tensor([0.0, 0.0])),
    "dtype": lambda L, c: c(L.ones(2), L.ones(2, dtype=L.float64)),
    "dtype_unchecked": lambda L, c: c(L.ones(2), L.ones(2, dtype=L.float64) + 1e-6,
                                      check_dtype=False),
    "shape": lambda L, c: c(L.ones(4), L.ones(2, 2)),
    "stride": lambda L, c: c(L.zeros(2, 2), L.zeros(2, 2).t(), check_stride=True),
    "nan": lambda L, c: c(L.tensor([1.0, float("nan")]), L.tensor([1.0, float("nan")])),
    "equal_nan": lambda L, c: c(L.tensor([float("nan")]), L.tensor([float("nan")]),
                                equal_nan=True),
    "ints": lambda L, c: c(L.tensor([1, 2]), L.tensor([1, 3])),
    "int32": lambda L, c: c(L.tensor([5, 2], dtype=L.int32), L.tensor([1, 2], dtype=L.int32)),
    "bools": lambda L, c: c(L.tensor([True, False]), L.tensor([True, True])),
    "zero_dim": lambda L, c: c(L.tensor(1.0), L.tensor(1.5)),
    "zero_dim_nan": lambda L, c: c(L.tensor(float("nan")), L.tensor(float("nan"))),
    "one_element": lambda L, c: c(L.tensor([1.0]), L.tensor([1.5])),
    "2d_index": lambda L, c: c(L.tensor([[1.0, 2.0], [3.0, 4.0]]),
                               L.tensor([[1.0, 2.0], [3.5, 4.0]])),
    "all_differ": lambda L, c: c(L.zeros(3, 3), L.ones(3, 3)),
    "zero_expected": lambda L, c: c(L.tensor([0.0, 1.0]), L.tensor([1.0, 0.0])),
    "half": lambda L, c: c(L.ones(4).half(), L.ones(4).half() + 0.01),
    "half_close": lambda L, c: c(L.ones(4).half(), L.ones(4).half() + 1e-3),
    "float64": lambda L, c: c(L.ones(2, dtype=L.float64), L.ones(2, dtype=L.float64) + 1e-6),
    "infs": lambda L, c: c(L.tensor([1.0, float("inf")]), L.tensor([1.0, float("inf")])),
    "opposite_infs": lambda L, c: c(L.tensor([1.0, float("inf")]),
                                    L.tensor([1.0, -float("inf")])),
    "explicit_tolerances": lambda L, c: c(L.tensor([1, 2]), L.tensor([1, 3]), rtol=0.5, atol=0),
    "only_rtol": lambda L, c: c(L.ones(2), L.ones(2), rtol=1e-3),
    "only_atol": lambda L, c: c(L.ones(2), L.ones(2), atol=1e-3),
    "msg_str": lambda L, c: c(L.ones(2), L.ones(2) + 1, msg="custom"),
    "msg_callable": lambda L, c: c(L.ones(2), L.ones(2) + 1, msg=lambda m: "X " + m),
    "scalars": lambda L, c: c(1.0, 1.1),
    "scalars_close": lambda L, c: c(1.0, 1.0 + 1e-9),
    "int_scalars": lambda L, c: c(1, 2),
    "scalar_types": lambda L, c: c(1, 1.0),
    "list": lambda L, c: c([L.ones(2), L.ones(2)], [L.ones(2), L.ones(2) + 1]),
    "nested": lambda L, c: c({"x": [L.ones(2), {"y": L.ones(2)}]},
                             {"x": [L.ones(2), {"y": L.ones(2) + 1}]}),
    "length": lambda L, c: c([1, 2], [1, 2, 3]),
    "tensor_vs_list": lambda L, c: c(L.ones(2), [1.0, 1.0]),
    "tensor_vs_numpy": lambda L, c: c(L.ones(2), np.ones(2)),
    "numpy": lambda L, c: c(np.array([1.0, 2.0]), np.array([1.0, 3.0])),
    "requires_grad_ignored": lambda L, c: c(L.ones(2, requires_grad=True), L.ones(2)),
    "dtype_mixed_ints": lambda L, c: c(L.tensor([1, 2]), L.tensor([1.0, 2.0])),
}


@pytest.mark.parametrize("case", list(CASES))
def test_assert_close_matches_torch(case):
    assert _outcome(retrograd, CASES[case]) == _outcome(torch, CASES[case])


def test_assert_close_passes_identical_structures():
    x = retrograd.randn(3, 4)
    assert_close({"a": [x, 2, 3.0], "b": (x.double(),)}, {"a": [x.clone(), 2, 3.0],
                                                          "b": (x.double(),)})


def test_make_tensor_ranges_and_dtypes():
    retrograd.manual_seed(0)
    x = make_tensor(200, dtype=retrograd.float32, device="cpu")
    assert x.shape == (200,) and x.dtype is retrograd.float32
    assert -9 <= x.min().item() and x.max().item() <= 9
    i = make_tensor((4, 50), dtype=retrograd.int64, device="cpu", low=0, high=3)
    assert set(np.unique(i.numpy()).tolist()) <= {0, 1, 2}
    u = make_tensor(100, dtype=retrograd.uint8, device="cpu")
    assert 0 <= u.min().item() and u.max().item() < 10
    b = make_tensor(100, dtype=retrograd.bool, device="cpu")
    assert b.dtype is retrograd.bool
    z = make_tensor(100, dtype=retrograd.int64, device="cpu", low=0, high=1, exclude_zero=True)
    assert z.tolist() == [1] * 100
    f = make_tensor(100, dtype=retrograd.float32, device="cpu", low=0, high=1e-30,
                    exclude_zero=True)
    assert (f != 0).all()
    assert make_tensor((), dtype=retrograd.float64, device="cpu").shape == ()


def test_make_tensor_is_repeatable_under_manual_seed():
    retrograd.manual_seed(3)
    a = make_tensor(2, 3, dtype=retrograd.float32, device="cpu")
    retrograd.manual_seed(3)
    b = make_tensor(2, 3, dtype=retrograd.float32, device="cpu")
    assert a.tolist() == b.tolist()


def test_make_tensor_layouts_match_torch():
    for kwargs in ({"noncontiguous": True}, {"memory_format": "channels_last"}):
        shape = (1, 2, 3, 4)
        tk = dict(kwargs)
        rk = dict(kwargs)
        if "memory_format" in kwargs:
            tk["memory_format"] = torch.channels_last
            rk["memory_format"] = retrograd.channels_last
        t = torch.testing.make_tensor(*shape, dtype=torch.float32, device="cpu", **tk)
        r = make_tensor(*shape, dtype=retrograd.float32, device="cpu", **rk)
        assert r.stride() == t.stride() and r.is_contiguous() == t.is_contiguous()


def test_make_tensor_requires_grad_and_errors_match_torch():
    r = make_tensor(2, 2, dtype=retrograd.float32, device="cpu", requires_grad=True)
    assert r.requires_grad and r.is_leaf
    for kwargs in ({"dtype": "int64", "requires_grad": True}, {"dtype": "float32", "low": 5,
                                                                "high": 2},
                   {"dtype": "float32", "low": float("nan")}):
        msgs = []
        for lib in (torch, retrograd):
            kw = dict(kwargs, dtype=getattr(lib, kwargs["dtype"]))
            fn = torch.testing.make_tensor if lib is torch else make_tensor
            with pytest.raises(ValueError) as e:
                fn(2, device="cpu", **kw)
            msgs.append(str(e.value).replace("torch", "retrograd"))
        assert msgs[1] == msgs[0]
