"""Non-Tensor arguments where an op takes a Tensor: torch's TypeError, never NumPy's error or an
AttributeError from inside retrograd. Numbers and arrays stay accepted where retrograd took them
(a second operand, `x + 1`)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


class Thing:
    pass


BAD = [object(), "a", None, b"ab", Thing(), [1.0], (1, 2), {1: 2}]


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("value", BAD, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("name", ["exp", "sin", "log", "neg", "sigmoid", "abs", "sum", "mean",
                                  "relu", "tanh", "sqrt"])
def test_unary_ops_refuse_non_tensors_as_torch(name, value):
    ours = _error(lambda: getattr(retrograd, name)(value))
    theirs = _error(lambda: getattr(torch, name)(value))
    assert ours == theirs


@pytest.mark.parametrize("name", ["exp", "neg", "log"])
@pytest.mark.parametrize("value", [1.0, 3, True])
def test_unary_ops_refuse_python_numbers_as_torch(name, value):
    ours = _error(lambda: getattr(retrograd, name)(value))
    theirs = _error(lambda: getattr(torch, name)(value))
    assert ours == theirs


@pytest.mark.parametrize("value", BAD, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "matmul"])
def test_binary_ops_refuse_non_tensors_as_torch(name, value):
    for args in ((value, "T"), ("T", value)):
        def call(lib, args=args):
            return getattr(lib, name)(*[lib.ones(2) if a == "T" else a for a in args])

        ours = _error(lambda: call(retrograd))
        theirs = _error(lambda: call(torch))
        assert ours == theirs


@pytest.mark.parametrize("value", [object(), "x", None])
def test_methods_count_positions_as_torch(value):
    for name in ("add", "mul", "sub"):
        ours = _error(lambda name=name: getattr(retrograd.ones(2), name)(value))
        theirs = _error(lambda name=name: getattr(torch.ones(2), name)(value))
        assert ours == theirs


def test_numbers_and_arrays_still_work_as_second_operands():
    x = retrograd.tensor([1.0, 2.0])
    assert (x + 1).tolist() == [2.0, 3.0]
    assert retrograd.mul(x, 2.5).tolist() == [2.5, 5.0]
    assert retrograd.add(x, np.float32(1)).tolist() == [2.0, 3.0]
    assert retrograd.maximum(x, retrograd.tensor(1.5)).tolist() == [1.5, 2.0]
    assert retrograd.mul(2, 3).item() == torch.mul(2, 3).item()


def test_optional_tensor_arguments_take_none():
    x = retrograd.randn(2, 3)
    assert retrograd.nn.functional.layer_norm(x, (3,), None, None).shape == (2, 3)
