"""Composite functions and factories get torch's profiler ranges (NOTE [Profiled composites]),
and only while a profiler runs."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((4, 5))
W = np.random.default_rng(1).standard_normal((3, 5))
B = np.array([0.0, 1.0, 2.0])

PROGRAMS = {
    "linear": lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
    "linear_no_bias": lambda lib, x, w, b: lib.nn.functional.linear(x, w),
    "linear_module": lambda lib, x, w, b: _linear_module(lib)(x),
    "matmul": lambda lib, x, w, b: lib.matmul(x, w.t()),
    "matmul_operator": lambda lib, x, w, b: x @ w.t(),
    "softmax": lambda lib, x, w, b: lib.nn.functional.softmax(x, 1),
    "softmax_method": lambda lib, x, w, b: x.softmax(1),
    "softmax_function": lambda lib, x, w, b: lib.softmax(x, 1),
    "log_softmax": lambda lib, x, w, b: lib.nn.functional.log_softmax(x, dim=1),
    "log_softmax_method": lambda lib, x, w, b: x.log_softmax(1),
    "cross_entropy": lambda lib, x, w, b: lib.nn.functional.cross_entropy(x[:3], b.long()),
    "layer_norm": lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (5,)),
    "randn": lambda lib, x, w, b: lib.randn(2, 3),
    "rand": lambda lib, x, w, b: lib.rand((2, 3), dtype=lib.float64),
    "zeros": lambda lib, x, w, b: lib.zeros(2, 3),
    "ones": lambda lib, x, w, b: lib.ones(2, 3, requires_grad=True),
    "empty": lambda lib, x, w, b: lib.empty(2, 3),
}

# torch's composites call some internal ops retrograd does not split out (aten::transpose
# under aten::t, aten::nll_loss under aten::nll_loss_nd): the ranges compared are these
COMPOSITES = {"aten::linear", "aten::matmul", "aten::softmax", "aten::log_softmax",
              "aten::cross_entropy_loss", "aten::layer_norm", "aten::randn", "aten::rand",
              "aten::zeros", "aten::ones", "aten::empty", "aten::normal_", "aten::uniform_",
              "aten::zero_", "aten::fill_", "aten::addmm", "aten::mm", "aten::_softmax",
              "aten::_log_softmax", "aten::native_layer_norm"}


def _linear_module(lib):
    layer = lib.nn.Linear(5, 3).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(W))
        layer.bias.copy_(lib.tensor(B))
    return layer


def _events(lib, name):
    x, w, b = (lib.tensor(a, requires_grad=True) for a in (X, W, B))
    program = PROGRAMS[name]
    with lib.autograd.profiler.profile(record_shapes=True) as p:
        program(lib, x, w, b)
    out = []
    for e in p.function_events:
        if e.name in COMPOSITES and e.name not in ("aten::mm", "aten::addmm") \
                and e.cpu_parent is None:
            children = [c.name for c in e.cpu_children if c.name in COMPOSITES]
            out.append((e.name, e.input_shapes, children))
    return out


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_ranges_and_shapes_match_torch(name):
    ours = _events(retrograd, name)
    theirs = _events(torch, name)
    if name == "linear_no_bias":  # torch: aten::matmul inside (retrograd calls mm directly)
        theirs = [(n, s, ["aten::mm" if c == "aten::matmul" else c for c in ch])
                  for n, s, ch in theirs]
    if name == "cross_entropy":  # torch's second child is aten::nll_loss_nd
        theirs = [(n, s, [c for c in ch if c != "aten::nll_loss_nd"]) for n, s, ch in theirs]
    assert ours == theirs


def test_factories_draw_the_same_values_when_profiled():
    def draw():
        retrograd.manual_seed(3)
        return [retrograd.randn(3, 2), retrograd.rand(4, dtype=retrograd.float64),
                retrograd.zeros(2, dtype=retrograd.int64), retrograd.ones(3, dtype=retrograd.bool),
                retrograd.randn(2, requires_grad=True)]

    plain = draw()
    with retrograd.autograd.profiler.profile():
        profiled = draw()
    for a, b in zip(plain, profiled):
        assert a.dtype is b.dtype and a.requires_grad == b.requires_grad
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("call", [
    lambda lib: lib.randn(2, -1), lambda lib: lib.zeros(-2), lambda lib: lib.randn("a"),
    lambda lib: lib.randn(2, dtype=lib.int64), lambda lib: lib.ones(2, bad=1),
    lambda lib: lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 2)),
])
def test_errors_under_the_profiler_are_torchs(call):
    def error(lib):
        with pytest.raises(Exception) as info:
            with lib.autograd.profiler.profile():
                call(lib)
        return type(info.value).__name__, str(info.value)

    assert error(retrograd) == error(torch)


def test_the_originals_are_back_after_the_profiler():
    before = (retrograd.randn, retrograd.matmul, retrograd.nn.functional.linear,
              retrograd.Tensor.__dict__["softmax"], retrograd.Tensor.__dict__["__matmul__"])
    with retrograd.autograd.profiler.profile():
        assert retrograd.nn.functional.linear is not before[2]
    with pytest.raises(ValueError):
        with retrograd.profiler.profile():
            raise ValueError
    after = (retrograd.randn, retrograd.matmul, retrograd.nn.functional.linear,
             retrograd.Tensor.__dict__["softmax"], retrograd.Tensor.__dict__["__matmul__"])
    assert all(a is b for a, b in zip(before, after))


def test_record_function_enter_and_exit_ops():
    def program(lib):
        x = lib.ones(2)
        with lib.autograd.profiler.profile() as p:
            handle = lib.ops.profiler._record_function_enter("bar", None)
            x * 2
            lib.ops.profiler._record_function_exit(handle)
            handle = lib.ops.profiler._record_function_enter_new("baz")
            x + 1
            lib.ops.profiler._record_function_exit(handle)
        return [(e.name, [c.name for c in e.cpu_children if c.name in ("aten::mul", "aten::add")])
                for e in p.function_events if e.name in ("bar", "baz")]

    assert program(retrograd) == program(torch)
