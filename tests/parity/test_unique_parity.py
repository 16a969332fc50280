"""unique and friends on a float input that requires grad: only the values require grad, their
node has torch's name, and its backward raises torch's NotImplementedError; the errors; and
the values of integers, counted or sorted."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of

torch = pytest.importorskip("torch")


def _calls(lib, x):
    return {
        "unique": lambda: lib.unique(x, return_inverse=True, return_counts=True),
        "unique_dim": lambda: lib.unique(x, dim=0, return_inverse=True),
        "unique_consecutive": lambda: lib.unique_consecutive(x, return_counts=True),
        "unique_consecutive_dim": lambda: lib.unique_consecutive(x, dim=0),
        "_unique": lambda: lib._unique(x, sorted=False, return_inverse=True),
        "_unique2": lambda: lib._unique2(x),
        "vf_unique_dim": lambda: lib._VF.unique_dim(x, 0),
        "vf_unique_consecutive": lambda: lib._VF.unique_consecutive(x, True),
        "method": lambda: x.unique(sorted=True, return_counts=True),
    }


@pytest.mark.parametrize("name", list(_calls(None, None)))
def test_only_the_values_require_grad_and_backward_is_not_implemented(name):
    def prog(lib):
        x = lib.tensor([3.0, 1.0, 3.0, 2.0, 2.0], requires_grad=True)
        res = _calls(lib, x)[name]()
        res = res if isinstance(res, tuple) else (res,)
        flags = [(r.requires_grad, None if r.grad_fn is None else r.grad_fn.name(), r.dtype)
                 for r in res]
        return res, flags, error_of(lambda: res[0].sum().backward())

    both(prog)


def test_unique_of_an_int_input_has_no_grad_fn():
    def prog(lib):
        x = lib.tensor([[2, 2], [1, 0]])
        with lib.enable_grad():
            res = lib.unique(x, return_inverse=True, dim=1)
        return res, [r.requires_grad for r in res]

    both(prog)


def test_errors():
    def prog(lib):
        return [
            error_of(lambda: lib.unique(lib.tensor(5.0), dim=0)),
            error_of(lambda: lib.unique(lib.zeros(2, 3), dim=2)),
            error_of(lambda: lib.unique(lib.zeros(2, 0), dim=0)),
            error_of(lambda: lib.unique_consecutive(lib.zeros(0, 2, 3), dim=-1)),
            error_of(lambda: lib.unique_consecutive(lib.zeros(2, 3), dim=-3)),
            error_of(lambda: lib.unique(1)),
            error_of(lambda: lib.unique(lib.zeros(0, 2), dim=0, return_counts=True)),
            error_of(lambda: lib.unique(lib.zeros(2, 0), dim=1, return_inverse=True)),
        ]

    both(prog)


def test_unique_gives_torch_values_for_mixed_values():
    # (torch's order of slices holding NaN is its sort's accident; retrograd puts them last)
    def prog(lib):
        nan = float("nan")
        x = lib.tensor([[2.5, nan, -1.0], [2.5, 0.0, nan], [2.5, nan, -1.0]])
        y = lib.tensor([[2.5, 7.0, -1.0], [2.5, 0.0, 7.0], [2.5, 7.0, -1.0]])
        return (lib.unique(x, return_inverse=True, return_counts=True),
                lib.unique(y, dim=1, return_inverse=True, return_counts=True),
                lib.unique_consecutive(x, return_inverse=True, return_counts=True),
                lib.unique(x.to(lib.bfloat16), return_counts=True)[0].float(),
                lib.unique(y.to(lib.float16), dim=0, return_counts=True),
                lib.unique(lib.tensor([True, False, True]), return_inverse=True))

    both(prog)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int16"])
@pytest.mark.parametrize("span", [3, 100, 10**6])
def test_unique_of_integers_counted_or_sorted_matches_torch(dtype, span):
    # narrow ranges are counted (O(n)), wide ones sorted: both give torch's results
    rng = np.random.default_rng(span)
    hi = min(span, int(np.iinfo(dtype).max))
    values = rng.integers(-hi if np.iinfo(dtype).min < 0 else 0, hi, (40, 25)).astype(dtype)
    ours = retrograd.from_numpy(values.copy()).unique(return_inverse=True, return_counts=True)
    theirs = torch.from_numpy(values.copy()).unique(return_inverse=True, return_counts=True)
    for a, b in zip(ours, theirs):
        assert str(a.dtype).rsplit(".", 1)[-1] == str(b.dtype).rsplit(".", 1)[-1]
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("dtype, low, high", [("int8", -128, 128), ("int16", -32768, -32000),
                                              ("int64", -(2**63), -(2**63) + 50),
                                              ("uint64", 2**64 - 60, 2**64)])
def test_unique_of_integers_at_the_ends_of_their_range_matches_torch(dtype, low, high):
    # counting offsets from the least value must not wrap in the input's own dtype
    values = np.arange(low, high, 2 if high - low > 200 else 1, dtype=object).astype(dtype)
    values = np.concatenate([values, values[::3]])
    ours = retrograd.from_numpy(values.copy()).unique(return_inverse=True, return_counts=True)
    expected = np.unique(values, return_inverse=True, return_counts=True)
    for a, b in zip(ours, expected):
        np.testing.assert_array_equal(a.numpy(), b.reshape(a.shape))
    if dtype != "uint64":  # torch has no unique kernel for uint64
        theirs = torch.from_numpy(values.copy()).unique(return_inverse=True, return_counts=True)
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
