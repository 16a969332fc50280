"""NumPy meeting tensors, as torch (NOTE [Array operands]): ufuncs give tensors back, converting
a tensor that requires grad is refused, np.array copies and np.asarray shares, and `==` with an
array compares element by element."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of

UFUNC_CALLS = {
    "sin": lambda t: np.sin(t),
    "add_array": lambda t: np.add(t, np.ones(3, dtype=np.float32)),
    "add_scalar": lambda t: np.add(t, 1),
    "multiply_self": lambda t: np.multiply(t, t),
    "greater_is_uint8": lambda t: np.greater(t, 0.5),
    "reduce_to_0d": lambda t: np.add.reduce(t),
    "sqrt_0d": lambda t: np.sqrt(t[0]),
    "maximum": lambda t: np.maximum(t, t * 0),
    "float64_in_float64_out": lambda t: np.exp(t.double()),
}


def _quiet(fn):
    """torch's __array_wrap__ takes one argument, for which NumPy 2 warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return fn()


@pytest.mark.parametrize("name", list(UFUNC_CALLS))
def test_ufunc_on_tensor_gives_a_tensor_as_torch(name):
    def prog(lib):
        t = lib.tensor([0.25, 1.0, 2.0])
        out = _quiet(lambda: UFUNC_CALLS[name](t))
        assert isinstance(out, lib.Tensor)
        return out

    both(prog)


def test_ufunc_result_owns_fresh_memory():
    t = retrograd.tensor([1.0, 2.0])
    out = np.negative(t)
    out[0] = 7.0
    assert t.tolist() == [1.0, 2.0]
    assert out.tolist() == [7.0, -2.0]


@pytest.mark.parametrize("call", ["sin", "asarray", "array", "concatenate"])
def test_converting_a_tensor_that_requires_grad_is_refused_as_torch(call):
    fns = {"sin": np.sin, "asarray": np.asarray, "array": np.array,
           "concatenate": lambda t: np.concatenate([t, t])}

    def prog(lib):
        t = lib.ones(2, requires_grad=True)
        return error_of(lambda: _quiet(lambda: fns[call](t)))

    result = both(prog)
    assert result[0] == "raised" and "requires grad" in result[2]


def test_conversion_under_no_grad_is_allowed_as_torch():
    def prog(lib):
        t = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            return np.asarray(t).tolist()

    assert both(prog) == [1.0, 1.0]


def test_np_array_copies_and_np_asarray_shares_as_torch():
    def prog(lib):
        t = lib.tensor([1.0, 2.0])
        copied = _quiet(lambda: np.array(t))
        copied[0] = 5.0
        shared = np.asarray(t)
        shared[1] = 9.0
        converted = np.asarray(t, dtype=np.float64)
        converted[0] = -1.0
        return t.tolist(), copied.tolist(), converted.dtype.name

    assert both(prog) == ([1.0, 9.0], [5.0, 2.0], "float64")


@pytest.mark.parametrize("other", [np.ones(2), np.ones((3, 1)), np.array([0.1, 1.0]),
                                   np.ones((), dtype=np.float64)],
                         ids=["same", "broadcast", "float64_values", "zero_dim"])
def test_tensor_equals_array_elementwise_as_torch(other):
    def prog(lib):
        t = lib.tensor([0.1, 1.0])
        return [t == other, other == t]

    both(prog)


def test_tensor_not_equal_array_is_elementwise():
    """Deliberate: torch's `t != a` is Python's identity fallback (True, a bool)."""
    t = retrograd.tensor([0.1, 1.0])
    a = np.array([0.1, 1.0], dtype=np.float32)
    assert (t != a).tolist() == [False, False]
    assert (a != t).tolist() == [False, False]
    assert (t != np.array([0.1, 2.0])).tolist() == [True, True]  # float64 0.1 is not float32's


@pytest.mark.parametrize("op", ["lt", "ge"])
def test_ordering_against_array_raises_as_torch(op):
    import operator

    def prog(lib):
        return error_of(lambda: getattr(operator, op)(lib.ones(2), np.ones(2)))

    assert both(prog)[0] == "raised"


@pytest.mark.parametrize("case", ["float64_array", "int_tensor", "broadcast", "sub",
                                  "float32_array"])
def test_arithmetic_with_an_array_promotes_as_torch(case):
    """Where torch's NumPy route and tensor promotion agree (arrays with dims)."""
    calls = {
        "float64_array": lambda lib: lib.ones(3) + np.full(3, 0.5),
        "int_tensor": lambda lib: lib.arange(3) * np.full(3, 1.5),
        "broadcast": lambda lib: lib.ones(2) * np.ones((3, 1)),
        "sub": lambda lib: lib.ones(3, dtype=lib.float64) - np.ones(3, dtype=np.float32),
        "float32_array": lambda lib: lib.ones(3, dtype=lib.float16) + np.ones(3, np.float32),
    }

    def prog(lib):
        return _quiet(lambda: calls[case](lib))

    both(prog)


def test_arithmetic_with_an_array_keeps_the_tensors_history():
    """torch hands `t + a` to NumPy, which refuses a tensor that requires grad; retrograd runs
    its own op, so the result is differentiable (README: known gaps)."""
    w = retrograd.ones(3, requires_grad=True)
    y = w * np.array([1.0, 2.0, 3.0])
    assert y.dtype == retrograd.float64 and type(y.grad_fn).__name__ == "MulBackward0"
    y.sum().backward()
    assert w.grad.tolist() == [1.0, 2.0, 3.0]


def test_compile_sees_an_array_conversion_as_data_dependent():
    """np.asarray(x) inside a compiled function reads x's values, as x.numpy() does: the
    function runs eagerly for them (right values for each input) and fullgraph=True refuses,
    naming the conversion and the user's line."""

    def f(x):
        return x - float(np.asarray(x).mean())

    compiled = retrograd.compile(f)
    for data in ([1.0, 2.0, 3.0], [10.0, 20.0, 30.0]):
        assert compiled(retrograd.tensor(data)).tolist() == f(retrograd.tensor(data)).tolist()
    with pytest.raises(RuntimeError, match=r"data-dependent Tensor\.numpy\(\) at .*:\d+"):
        retrograd.compile(f, fullgraph=True)(retrograd.tensor([1.0, 2.0]))
