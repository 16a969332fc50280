"""out= variants of the namespace functions, against torch."""

from __future__ import annotations

import warnings

import pytest

from tests.parity.harness import both, error_of


@pytest.mark.parametrize("call", ["add", "mul", "exp", "mm", "sum", "where", "maximum"])
def test_out_writes_into_the_given_tensor(call):
    def prog(lib):
        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        out = lib.empty(2, 2) if call != "sum" else lib.empty(2)
        v = out._version
        args = {"add": (a, a), "mul": (a, 2), "exp": (a,), "mm": (a, a), "sum": (a, 0),
                "where": (a > 2, a, -a), "maximum": (a, a.t())}[call]
        res = getattr(lib, call)(*args, out=out)
        return res is out, out, out._version > v

    both(prog)


def test_out_errors_and_resize():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        grad_err = error_of(lambda: lib.add(x, 1, out=lib.empty(3)))
        cast_err = error_of(lambda: lib.add(lib.ones(3), 1.5, out=lib.empty(3, dtype=lib.long)))
        small = lib.empty(2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.mul(lib.ones(3), 2, out=small)
        resized = [str(m.message).split(" (Triggered")[0] for m in w]
        with lib.no_grad():
            nograd = lib.add(x, 1, out=lib.empty(3))
        return grad_err, cast_err, tuple(small.shape), resized, nograd

    both(prog)
