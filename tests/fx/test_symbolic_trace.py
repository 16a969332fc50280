"""symbolic_trace: graphs and generated code of Modules and functions, against torch.fx."""

from __future__ import annotations

import importlib
import inspect
import linecache
import traceback

import numpy as np
import pytest
import torch

import retrograd
from retrograd.fx import GraphModule, Proxy, Tracer, symbolic_trace, wrap
from retrograd.fx.proxy import TraceError


def _fx(lib):
    return importlib.import_module(lib.__name__ + ".fx")


def _same_text(ours: str, theirs: str) -> None:
    assert ours == theirs.replace("torch.", "retrograd.")


def _net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 4)
            self.p = nn.Parameter(lib.ones(4))
            self.register_buffer("b", lib.zeros(4))

        def forward(self, x, y=2):
            z = self.lin(x) + self.p - self.b
            w = lib.relu(z).sum(dim=1, keepdim=True) * y
            return w.view(-1), {"a": z.shape, "b": [z[0], x.t()]}, -z, z @ z.t()

    return Net


def _nested(lib):
    nn = lib.nn
    net = _net(lib)

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
            self.sub = net()

        def forward(self, x):
            return self.layers(x).sum() + self.sub.lin.weight.sum() + x.size(0)

    return Outer


@pytest.mark.parametrize("make", [_net, _nested])
def test_module_code_and_graph_match_torch(make):
    ours = symbolic_trace(make(retrograd)())
    theirs = _fx(torch).symbolic_trace(make(torch)())
    _same_text(ours.code, theirs.code)
    _same_text(str(ours.graph), str(theirs.graph))
    assert [n.name for n in ours.graph.nodes] == [n.name for n in theirs.graph.nodes]
    assert [n.op for n in ours.graph.nodes] == [n.op for n in theirs.graph.nodes]


def test_function_code_matches_torch():
    def body(lib):
        def f(x, y):
            a = lib.sin(x) * y
            b = a.max()
            return a.sum() + b + lib.relu(a).mean()
        return f

    _same_text(symbolic_trace(body(retrograd)).code, _fx(torch).symbolic_trace(body(torch)).code)


def test_traced_module_computes_the_same():
    net = _net(retrograd)()
    gm = symbolic_trace(net)
    x = retrograd.randn(2, 3)
    for a, b in [(gm(x)[0], net(x)[0]), (gm(x, 3)[3], net(x, 3)[3])]:
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert gm.lin is net.lin and gm.p is net.p
    assert isinstance(gm, GraphModule) and type(gm).__name__ == "Net"
    # gradients flow to the original parameters
    gm(x)[0].sum().backward()
    assert net.lin.weight.grad is not None


def test_unused_value_is_freed_at_once():
    gm = symbolic_trace(lambda x: (x + 1, x)[1])
    theirs = _fx(torch).symbolic_trace(lambda x: (x + 1, x)[1])
    _same_text(gm.code, theirs.code)


def test_control_flow_on_a_proxy_is_an_error():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(TraceError, match="symbolically traced variables cannot be used as "
                                          "inputs to control flow"):
        symbolic_trace(f)
    with pytest.raises(_fx(torch).proxy.TraceError, match="control flow"):
        _fx(torch).symbolic_trace(f)


def test_len_needs_wrap():
    with pytest.raises(RuntimeError, match="'len' is not supported in symbolic tracing"):
        symbolic_trace(lambda x: len(x))


def test_concrete_args():
    def f(x, flag):
        return x * 2 if flag else x

    gm = symbolic_trace(f, concrete_args={"flag": True})
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "call_function", "output"]
    assert gm(retrograd.ones(1)).tolist() == [2.]


def clamp_norm(x, limit):
    # not traceable: control flow on a value
    return x if float(x.norm()) <= limit else x * (limit / float(x.norm()))


wrap("clamp_norm")


@wrap
def twice(x):
    return x * 2


def test_wrap_keeps_a_function_whole():
    def f(x):
        return twice(clamp_norm(x, 1.0)) + 1

    gm = symbolic_trace(f)
    calls = gm.graph.find_nodes(op="call_function")
    assert [n.target for n in calls[:2]] == [clamp_norm, twice]
    assert all(n.meta["is_wrapped"] for n in calls[:2])
    # a global of the generated code that is not public gets a name of its own
    assert "clamp_norm = clamp_norm_1(x, 1.0)" in gm.code
    x = retrograd.tensor([3., 4.])
    np.testing.assert_allclose(gm(x).numpy(), f(x).numpy())
    # patches are gone after tracing
    assert globals()["clamp_norm"] is clamp_norm and not hasattr(clamp_norm, "__fx_records__")
    assert not hasattr(retrograd.relu, "__fx_records__")


def test_wrap_outside_module_level_is_an_error():
    with pytest.raises(NotImplementedError, match="top level of a module"):
        wrap("len")


def test_user_meta_survives_copies():
    gm = symbolic_trace(lambda x: retrograd.relu(x))
    relu = gm.graph.find_nodes(op="call_function")[0]
    relu.meta["user_cache_hash"] = "abc"
    import copy

    g2 = copy.deepcopy(gm.graph)
    assert g2.find_nodes(op="call_function")[0].meta["user_cache_hash"] == "abc"


def test_generated_code_is_visible_to_tools():
    """NOTE [Visible generated code]: source, tracebacks and pdb see the generated lines."""
    gm = symbolic_trace(lambda x: retrograd.relu(x) + 1)
    assert inspect.getsource(type(gm).forward) == gm.code.lstrip("\n")[:len(
        inspect.getsource(type(gm).forward))]
    filename = type(gm).forward.__code__.co_filename
    assert linecache.getline(filename, 5).strip().startswith("relu = retrograd.relu(x)")

    with pytest.raises(TypeError) as info:
        gm("not a tensor")
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(f.filename == filename and "retrograd.relu" in f.line for f in frames)


def test_custom_leaf_modules():
    class MyTracer(Tracer):
        def is_leaf_module(self, m, name):
            return name == "inner" or super().is_leaf_module(m, name)

    class Inner(retrograd.nn.Module):
        def forward(self, x):
            return x + 1

    class Outer(retrograd.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()

        def forward(self, x):
            return self.inner(x) * 2

    graph = MyTracer().trace(Outer())
    assert [n.op for n in graph.nodes] == ["placeholder", "call_module", "call_function",
                                           "output"]
    assert [n.op for n in symbolic_trace(Outer()).graph.nodes] == [
        "placeholder", "call_function", "call_function", "output"]


def test_proxy_repr_and_patches_restored_after_error():
    from retrograd.nn.modules.module import Module

    call = Module.__dict__["__call__"]

    def bad(x):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        symbolic_trace(bad)
    assert Module.__dict__["__call__"] is call
    assert not hasattr(retrograd.sin, "__fx_records__")
    g = retrograd.fx.Graph()
    assert repr(Proxy(g.placeholder("x"))) == "Proxy(x)"


def test_print_readable_matches_torch():
    def f(lib):
        return lambda x: lib.relu(x) + 1

    ours = symbolic_trace(f(retrograd)).print_readable(print_output=False)
    theirs = _fx(torch).symbolic_trace(f(torch)).print_readable(print_output=False)
    assert ours == theirs.replace("torch.", "retrograd.")


def test_tensor_operators_with_a_proxy_on_the_right():
    w = retrograd.tensor([1., 2.])
    gm = symbolic_trace(lambda x: (w + x) * (w @ x) - (w < x).float())
    assert [n.target.__name__ for n in gm.graph.find_nodes(op="call_function")] == [
        "add", "matmul", "mul", "gt", "sub"]  # w < x is x.__gt__(w)
    x = retrograd.tensor([3., 1.])
    np.testing.assert_allclose(gm(x).numpy(), ((w + x) * (w @ x) - (w < x).float()).numpy())
    assert not hasattr(retrograd.Tensor.__dict__["__add__"], "__wrapped__")


def test_functions_imported_by_name_are_recorded():
    from retrograd import relu

    def f(x):
        return relu(x) + 1

    gm = symbolic_trace(f)
    assert gm.graph.find_nodes(op="call_function")[0].target is retrograd.relu
    assert "relu = retrograd.relu(x)" in gm.code
