"""retrograd.jit against torch.jit: the same programs, the same values, gradients and errors.

retrograd runs TorchScript programs eagerly: script and trace return what they are given
(trace after one run on the example inputs), so where torch's answer depends on code being
compiled (is_scripting() inside a scripted function, is_tracing() when a traced function is
called later, a frozen module's parameters) the tests assert retrograd's eager answer and say
what torch gives.
"""

# ruff: noqa: UP006, UP007, UP045 - the typing spellings TorchScript programs use are tested

import warnings
from typing import Dict, Final, List, Optional, Tuple, Union  # noqa: UP035

import numpy as np
import pytest

import retrograd
from tests.nn_functional_helpers import raises_like

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LIBS = {"retrograd": retrograd, "torch": torch}


def arrays(seed: int, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def tensors(lib, arrs, requires_grad=False):
    return [lib.tensor(a, dtype=lib.float64, requires_grad=requires_grad) for a in arrs]


def np_of(t) -> np.ndarray:
    return t.detach().numpy()


def copy_weights(dst, src) -> None:
    """Load torch module src's weights into retrograd module dst."""
    dst.load_state_dict({k: retrograd.tensor(np_of(v)) for k, v in src.state_dict().items()})


def make_net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(3, 4)
            self.fc2 = nn.Linear(4, 2)
            self.drop = nn.Dropout(0.0)

        def forward(self, x):
            return self.fc2(self.drop(self.fc1(x).tanh()))

    return Net().double()


# -- script ----------------------------------------------------------------------------------


def test_script_decorated_function_values_and_gradients():
    out = {}
    for name, lib in LIBS.items():
        @lib.jit.script
        def f(a, b):
            return (a * b).sin().sum() + (a - b).pow(2).mean()

        a, b = tensors(lib, arrays(0, (3, 4), (3, 4)), requires_grad=True)
        y = f(a, b)
        y.backward()
        out[name] = (np_of(y), np_of(a.grad), np_of(b.grad))
    for ours, theirs in zip(out["retrograd"], out["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_script_returns_the_function_itself():
    def f(x):
        return x + 1

    assert retrograd.jit.script(f) is f


def test_scripted_module_trains_like_torch():
    res = {}
    t_net = make_net(torch)
    r_net = make_net(retrograd)
    copy_weights(r_net, t_net)
    for name, lib, net in (("retrograd", retrograd, r_net), ("torch", torch, t_net)):
        s = lib.jit.script(net)
        opt = lib.optim.SGD(s.parameters(), lr=0.1)
        x, target = tensors(lib, arrays(1, (5, 3), (5, 2)))
        loss = lib.nn.functional.mse_loss(s(x), target)
        loss.backward()
        grads = {k: np_of(p.grad) for k, p in s.named_parameters()}
        opt.step()
        s.eval()
        assert not s.training
        s.train()
        assert s.training
        res[name] = (np_of(loss), grads, list(s.state_dict()),
                     {k: np_of(v) for k, v in s.state_dict().items()})
    (r_loss, r_grads, r_keys, r_state), (t_loss, t_grads, t_keys, t_state) = \
        res["retrograd"], res["torch"]
    np.testing.assert_allclose(r_loss, t_loss, rtol=1e-12)
    assert r_keys == t_keys
    assert list(r_grads) == list(t_grads)
    for k in t_grads:
        np.testing.assert_allclose(r_grads[k], t_grads[k], rtol=1e-10)
    for k in t_state:
        np.testing.assert_allclose(r_state[k], t_state[k], rtol=1e-10)


def test_script_module_is_the_module():
    net = make_net(retrograd)
    assert retrograd.jit.script(net) is net


def test_script_refuses_a_module_class():
    with pytest.raises(RuntimeError) as theirs:
        torch.jit.script(torch.nn.Linear)
    with pytest.raises(RuntimeError) as ours:
        retrograd.jit.script(retrograd.nn.Linear)
    # the message names the class, whose module path is the library's own
    assert str(ours.value) == str(theirs.value).replace("torch.nn", "retrograd.nn")


def _branch_on_scripting_torch(x):
    if torch.jit.is_scripting():
        return x + 1
    return x - 1


def _branch_on_scripting_retrograd(x):
    if retrograd.jit.is_scripting():
        return x + 1
    return x - 1


def test_is_scripting_is_false_when_run_eagerly():
    # torch compiles the function, and inside compiled code is_scripting() is True; retrograd
    # runs it as Python, where it is False (as torch's own eager call of the same function)
    t = torch.jit.script(_branch_on_scripting_torch)(torch.zeros(1))
    r = retrograd.jit.script(_branch_on_scripting_retrograd)(retrograd.zeros(1))
    assert t.item() == 1.0
    assert r.item() == -1.0
    assert _branch_on_scripting_torch(torch.zeros(1)).item() == r.item()
    assert retrograd.jit.is_scripting() is False


def make_marked(lib):
    nn, jit = lib.nn, lib.jit

    class Marked(nn.Module):
        def __init__(self, use_unused: bool) -> None:
            super().__init__()
            self.use_unused = use_unused
            self.fc = nn.Linear(3, 3)

        @jit.ignore
        def python_helper(self, x):
            return x * 2

        @jit.ignore(drop=False)
        def another_helper(self, x):
            return x + 3

        @jit.unused
        def memory_hungry(self, x):
            return x * 10

        @jit.export
        def exported(self, x):
            return self.fc(x).relu()

        def forward(self, x):
            if self.use_unused:
                return self.memory_hungry(x)
            return self.another_helper(self.python_helper(self.fc(x)))

    return Marked


def test_ignore_unused_export_methods():
    t_cls, r_cls = make_marked(torch), make_marked(retrograd)
    t_mod, r_mod = t_cls(False).double(), r_cls(False).double()
    copy_weights(r_mod, t_mod)
    t_s, r_s = torch.jit.script(t_mod), retrograd.jit.script(r_mod)
    (xr,), (xt,) = tensors(retrograd, arrays(2, (2, 3))), tensors(torch, arrays(2, (2, 3)))
    np.testing.assert_allclose(np_of(r_s(xr)), np_of(t_s(xt)), rtol=1e-12)
    np.testing.assert_allclose(np_of(r_s.exported(xr)), np_of(t_s.exported(xt)), rtol=1e-12)
    # an @unused method's body is dropped by the compiler (calling it raises); eagerly it runs
    r_unused = retrograd.jit.script(r_cls(True).double())
    np.testing.assert_allclose(np_of(r_unused(xr)), np_of(xr) * 10)
    with pytest.raises(torch.jit.Error):
        torch.jit.script(t_cls(True).double())(xt)


def test_ignore_arguments_checked_like_torch():
    raises_like(lambda: retrograd.jit.ignore(drop=3), lambda: torch.jit.ignore(drop=3))
    for lib in LIBS.values():
        with pytest.warns(FutureWarning, match=r"ignore\(True\) has been deprecated"):
            deco = lib.jit.ignore(True)

        def f(x):
            return x

        assert deco(f) is f


def test_markers_return_their_argument():
    def f(x):
        return x

    jit = retrograd.jit
    for marker in (jit.ignore, jit.unused, jit.export, jit._overload, jit._overload_method,
                   jit.script_if_tracing):
        assert marker(f) is f
    prop = property(f)
    assert jit.unused(prop) is prop

    class Iface:
        def run(self, x):
            return x

    assert jit.interface(Iface) is Iface
    raises_like(lambda: retrograd.jit.interface(f), lambda: torch.jit.interface(f))


def test_overloaded_function_runs_its_implementation():
    outs = []
    for lib in LIBS.values():
        @lib.jit._overload
        def g(x: int) -> int: ...

        @lib.jit._overload
        def g(x: float) -> float: ...  # noqa: F811

        def g(x):  # noqa: F811
            return x * 2

        outs.append((g(3), g(1.5)))
    assert outs[0] == outs[1] == (6, 3.0)


def test_annotate_final_attribute():
    for lib in LIBS.values():
        assert lib.jit.annotate(List[int], []) == []
        x = lib.jit.annotate(Optional[int], 4)
        assert x == 4
    assert retrograd.jit.Final is torch.jit.Final
    assert tuple(retrograd.jit.Attribute(1, int)) == tuple(torch.jit.Attribute(1, int))
    assert retrograd.jit.Attribute._fields == torch.jit.Attribute._fields
    assert repr(retrograd.jit.Attribute(1, int)) == repr(torch.jit.Attribute(1, int))


def make_old_style(lib):
    jit = lib.jit

    class Old(jit.ScriptModule):
        def __init__(self) -> None:
            super().__init__()
            self.scale = jit.Attribute(0.5, float)
            self.fc = lib.nn.Linear(2, 2)

        @jit.script_method
        def forward(self, x):
            return self.fc(x) * self.scale

    return Old().double()


def test_script_module_subclass_with_attribute():
    t_mod, r_mod = make_old_style(torch), make_old_style(retrograd)
    copy_weights(r_mod, t_mod)
    assert r_mod.scale == t_mod.scale == 0.5
    assert isinstance(r_mod, retrograd.nn.Module)
    assert isinstance(r_mod, retrograd.jit.ScriptModule)
    (xr,), (xt,) = tensors(retrograd, arrays(3, (4, 2))), tensors(torch, arrays(3, (4, 2)))
    np.testing.assert_allclose(np_of(r_mod(xr)), np_of(t_mod(xt)), rtol=1e-12)
    assert list(r_mod.state_dict()) == list(t_mod.state_dict())


def test_classes():
    jit = retrograd.jit
    assert issubclass(jit.ScriptModule, retrograd.nn.Module)
    assert issubclass(jit.RecursiveScriptModule, jit.ScriptModule)
    assert issubclass(jit.TracerWarning, Warning) and issubclass(jit.ScriptWarning, Warning)
    assert issubclass(jit.Error, Exception)
    assert jit.Future is retrograd.futures.Future
    with pytest.raises(TypeError):
        jit.ScriptFunction()
    # scripting returns the eager module, which is not a ScriptModule (torch's would be)
    assert not isinstance(jit.script(retrograd.nn.Linear(1, 1)), jit.ScriptModule)


def test_compilation_unit():
    cu = retrograd.jit.CompilationUnit()
    assert cu.get_functions() == [] and cu.find_function("f") is None
    with pytest.raises(RuntimeError, match="eagerly"):
        retrograd.jit.CompilationUnit("def f(x):\n    return x + 1\n")
    with pytest.raises(RuntimeError, match="eagerly"):
        cu.define("def f(x):\n    return x + 1\n")


def make_block(lib):
    """A module written the way TorchScript-ready code is: Final constant, annotate, Optional
    argument, an is_scripting() branch, a list output."""
    Tensor = lib.Tensor

    class Block(lib.nn.Module):
        scale: Final[float]

        def __init__(self) -> None:
            super().__init__()
            self.scale = 0.5
            self.fc = lib.nn.Linear(3, 3)

        def forward(self, x: Tensor, extra: Optional[Tensor] = None) -> List[Tensor]:
            outs = lib.jit.annotate(List[Tensor], [])
            h = self.fc(x) * self.scale
            if extra is not None:
                h = h + extra
            if not lib.jit.is_scripting():
                h = h * 1.0
            for i in range(2):
                outs.append(h + i)
            return outs

    return Block().double()


def test_scripted_torchscript_style_module():
    t_mod, r_mod = make_block(torch), make_block(retrograd)
    copy_weights(r_mod, t_mod)
    res = {}
    for name, lib, mod in (("retrograd", retrograd, r_mod), ("torch", torch, t_mod)):
        s = lib.jit.script(mod)
        x, e = tensors(lib, arrays(14, (2, 3), (2, 3)), requires_grad=True)
        outs = s(x, e) + s(x)
        sum(o.sum() for o in outs).backward()
        res[name] = [np_of(o) for o in outs] + [np_of(x.grad), np_of(e.grad)] + \
            [np_of(p.grad) for p in s.parameters()]
    assert len(res["retrograd"]) == len(res["torch"])
    for ours, theirs in zip(res["retrograd"], res["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


with warnings.catch_warnings():  # script's DeprecationWarning, at import
    warnings.simplefilter("ignore", DeprecationWarning)

    @torch.jit.script
    class _TorchPair:
        def __init__(self, a: torch.Tensor, b: torch.Tensor) -> None:
            self.a = a
            self.b = b

        def total(self) -> torch.Tensor:
            return self.a * self.b + self.b

    @retrograd.jit.script
    class _RetrogradPair:
        def __init__(self, a: retrograd.Tensor, b: retrograd.Tensor) -> None:
            self.a = a
            self.b = b

        def total(self) -> retrograd.Tensor:
            return self.a * self.b + self.b


def test_scripted_class():
    (ra, rb), (ta, tb) = tensors(retrograd, arrays(15, (3,), (3,))), \
        tensors(torch, arrays(15, (3,), (3,)))
    np.testing.assert_allclose(np_of(_RetrogradPair(ra, rb).total()),
                               np_of(_TorchPair(ta, tb).total()), rtol=1e-12)
    assert isinstance(_RetrogradPair, type)


# -- trace -----------------------------------------------------------------------------------


def _traced_fn(a, b):
    return (a * b).exp().sum(0) - b


def test_trace_function_values_and_gradients():
    out = {}
    for name, lib in LIBS.items():
        ex = tensors(lib, arrays(4, (2, 3), (2, 3)))
        traced = lib.jit.trace(_traced_fn, tuple(ex))
        a, b = tensors(lib, arrays(5, (2, 3), (2, 3)), requires_grad=True)
        y = traced(a, b)
        y.sum().backward()
        out[name] = (np_of(y), np_of(a.grad), np_of(b.grad))
    for ours, theirs in zip(out["retrograd"], out["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert retrograd.jit.trace(_traced_fn, tuple(tensors(retrograd, arrays(4, (1,), (1,))))) \
        is _traced_fn


def test_trace_single_tensor_and_kwarg_examples():
    def f(x):
        return x.tanh() * 2

    def g(a, b):
        return a - b

    vals = {}
    for name, lib in LIBS.items():
        (x,) = tensors(lib, arrays(6, (3,)))
        a, b = tensors(lib, arrays(7, (3,), (3,)))
        tf = lib.jit.trace(f, x)
        tg = lib.jit.trace(g, example_kwarg_inputs={"a": a, "b": b})
        vals[name] = (np_of(tf(x)), np_of(tg(a, b)))
    for ours, theirs in zip(vals["retrograd"], vals["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_trace_module_values_grads_state_dict():
    t_net, r_net = make_net(torch), make_net(retrograd)
    copy_weights(r_net, t_net)
    res = {}
    for name, lib, net in (("retrograd", retrograd, r_net), ("torch", torch, t_net)):
        (ex,) = tensors(lib, arrays(8, (1, 3)))
        traced = lib.jit.trace(net, ex)
        (x,) = tensors(lib, arrays(9, (4, 3)))
        y = traced(x)
        y.pow(2).sum().backward()
        res[name] = (np_of(y), {k: np_of(p.grad) for k, p in traced.named_parameters()},
                     list(traced.state_dict()))
        if lib is retrograd:
            assert traced is net
    (r_y, r_g, r_k), (t_y, t_g, t_k) = res["retrograd"], res["torch"]
    np.testing.assert_allclose(r_y, t_y, rtol=1e-12)
    assert r_k == t_k and list(r_g) == list(t_g)
    for k in t_g:
        np.testing.assert_allclose(r_g[k], t_g[k], rtol=1e-10)


def make_two_methods(lib):
    class Two(lib.nn.Module):
        def forward(self, x, y=None):
            return x * 3

        def other(self, x):
            return x * 2

    return Two()


def test_trace_module_methods_and_bound_forward():
    for lib in LIBS.values():
        (x,) = tensors(lib, arrays(10, (2,)))
        mod = make_two_methods(lib)
        t = lib.jit.trace_module(mod, {"forward": x, "other": (x,)})
        np.testing.assert_allclose(np_of(t.other(x)), np_of(x) * 2)
        np.testing.assert_allclose(np_of(t(x)), np_of(x) * 3)
        t2 = lib.jit.trace(mod.forward, x)
        np.testing.assert_allclose(np_of(t2(x)), np_of(x) * 3)
    m = make_two_methods(retrograd)
    assert retrograd.jit.trace_module(m, {"forward": retrograd.ones(1)}) is m


def test_is_tracing_while_trace_runs():
    seen: dict[str, list[bool]] = {"retrograd": [], "torch": []}
    for name, lib in LIBS.items():
        def f(x, lib=lib, name=name):
            seen[name].append(lib.jit.is_tracing())
            return x + 1

        (x,) = tensors(lib, arrays(11, (2,)))
        traced = lib.jit.trace(f, x, check_trace=False)
        n = len(seen[name])
        traced(x)
        if lib is retrograd:
            # the returned function is f itself: later calls run it, outside any trace
            assert seen[name][n:] == [False]
        else:
            assert seen[name][n:] == []  # torch replays its recording, f does not run
    assert seen["retrograd"][:1] == seen["torch"][:1] == [True]


def test_check_inputs_run_traced_with_grad_off():
    seen: dict[str, list[tuple[bool, bool]]] = {"retrograd": [], "torch": []}
    for name, lib in LIBS.items():
        def f(x, lib=lib, name=name):
            seen[name].append((lib.jit.is_tracing(), lib.is_grad_enabled()))
            return x + 1

        lib.jit.trace(f, lib.ones(2), check_inputs=[(lib.ones(3),)])
    # torch also runs f once more without tracing, to compare with its recording
    assert seen["retrograd"] == seen["torch"][:2] == [(True, True), (True, False)]
    assert retrograd.jit.is_tracing() is False


def test_trace_errors_like_torch():
    def both(make):
        return raises_like(lambda: make(retrograd), lambda: make(torch))

    def ones(lib):
        return lib.ones(2)

    both(lambda lib: lib.jit.trace(lambda x: 3, ones(lib)))
    both(lambda lib: lib.jit.trace(lambda x: None, ones(lib)))
    both(lambda lib: lib.jit.trace(lambda x: (x, 2), ones(lib)))
    both(lambda lib: lib.jit.trace(lambda x: {"a": x}, ones(lib)))
    both(lambda lib: lib.jit.trace(lambda x: (x, {"b": x}), ones(lib)))
    both(lambda lib: lib.jit.trace(lambda a, b: a * b, (ones(lib), 2)))
    both(lambda lib: lib.jit.trace(lambda a, b: a * b, (ones(lib), 2.0)))
    both(lambda lib: lib.jit.trace(lambda a, b: a, (ones(lib), None)))
    both(lambda lib: lib.jit.trace(lambda a: a + 1, 3))
    both(lambda lib: lib.jit.trace(lambda a: a + 1))
    both(lambda lib: lib.jit.trace(make_two_methods(lib)))
    both(lambda lib: lib.jit.trace(make_two_methods(lib).other, ones(lib)))
    both(lambda lib: lib.jit.trace(make_two_methods(lib), example_kwarg_inputs={"z": ones(lib)}))
    both(lambda lib: lib.jit.trace_module(lambda x: x, {"forward": ones(lib)}))
    both(lambda lib: lib.jit.trace_module(make_two_methods(lib), ones(lib)))
    both(lambda lib: lib.jit.trace_module(make_two_methods(lib), {"nope": ones(lib)}))
    # the user's own error surfaces at trace time, as torch's does
    both(lambda lib: lib.jit.trace(lambda a, b: a + b, ones(lib)))
    # and on check inputs, which torch traces again
    both(lambda lib: lib.jit.trace(lambda a: a.view(1, 2), ones(lib),
                                   check_inputs=[(lib.ones(3),)]))
    both(lambda lib: lib.jit.trace(lib.nn.Linear(2, 2), ones(lib),
                                   check_inputs=[(lib.ones(3),)]))


def test_trace_non_strict_allows_dict_outputs():
    for lib in LIBS.values():
        x = lib.ones(2)
        f = lib.jit.trace(lambda x: {"a": x * 2}, x, strict=False)
        np.testing.assert_allclose(np_of(f(x)["a"]), [2.0, 2.0])


def test_deprecation_and_optimize_warnings_like_torch():
    def f(x):
        return x + 1

    def messages(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.jit.script(f)
            lib.jit.trace(f, lib.ones(1), optimize=True, check_trace=False)
            lib.jit.wait(lib.jit.fork(f, lib.ones(1)))
            lib.jit.set_fusion_strategy(lib.jit.set_fusion_strategy([("STATIC", 1)]))
            lib.jit.freeze(lib.jit.script(lib.nn.Linear(1, 1).eval()))
        return [(w.category, str(w.message)) for w in caught
                if issubclass(w.category, (DeprecationWarning, FutureWarning))]

    assert messages(retrograd) == messages(torch)


# -- isinstance ------------------------------------------------------------------------------


def isinstance_cases(lib):
    T = lib.Tensor
    t = lib.ones(1)
    return [
        ([1, 2], List[int]), ([1, 2.0], List[int]), ([1.0], List[float]), ([t, t], List[T]),
        ({"a": t}, Dict[str, T]), ({"a": 1}, Dict[str, T]), ({1: t}, Dict[str, T]),
        ((t, 1), Tuple[T, int]), ((t,), Tuple[T, int]), ((t, "x"), Tuple[T, int]),
        (None, Optional[T]), (t, Optional[T]), (1, Optional[T]), ([1], Optional[List[int]]),
        (None, Optional[List[int]]), ([[1], [2]], List[List[int]]), ([[1], [2.0]], List[List[int]]),
        ({"a": [t]}, Dict[str, List[T]]), ({"a": (t, 1)}, Dict[str, Tuple[T, int]]),
        (3, (int, str)), ("s", (List[int], str)), (2.0, (int, str)), (True, int), (3, int),
        (t, T), (3, T), ("s", Union[str, int]), (1, Union[int, str]), (1.5, Union[str, int]),
        ([1], list[int]), ({"a": 1}, dict[str, int]), ((1, 2), tuple[int, int]),
    ]


def test_isinstance_matches_torch():
    ours = [retrograd.jit.isinstance(o, tp) for o, tp in isinstance_cases(retrograd)]
    theirs = [torch.jit.isinstance(o, tp) for o, tp in isinstance_cases(torch)]
    assert ours == theirs


def test_isinstance_unions_checked_member_by_member():
    # torch's eager check answers True for None against any Union and stops at a Union's first
    # container member; retrograd checks every member (the answer compiled TorchScript gives)
    assert retrograd.jit.isinstance(3, Union[List[int], int]) is True
    assert retrograd.jit.isinstance(None, Union[int, str]) is False


def test_isinstance_errors_and_empty_warning_like_torch():
    for bad in (List, Dict, Tuple, Optional, list, dict, tuple):
        raises_like(lambda bad=bad: retrograd.jit.isinstance([1], bad),
                    lambda bad=bad: torch.jit.isinstance([1], bad))
    raises_like(lambda: retrograd.jit.isinstance(1, [int]), lambda: torch.jit.isinstance(1, [int]))
    for lib in LIBS.values():
        with pytest.warns(UserWarning, match="The inner type of a container is lost"):
            assert lib.jit.isinstance([], List[str])


# -- fork / wait -----------------------------------------------------------------------------


def test_fork_wait_values():
    out = {}
    for name, lib in LIBS.items():
        def work(a, scale=1.0):
            return a * scale + 1

        (x,) = tensors(lib, arrays(12, (3,)), requires_grad=True)
        fut = lib.jit.fork(work, x, scale=3.0)
        assert fut.done()
        y = lib.jit.wait(fut)
        y.sum().backward()
        out[name] = (np_of(y), np_of(x.grad))
    for ours, theirs in zip(out["retrograd"], out["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert isinstance(retrograd.jit.fork(lambda: 1), retrograd.futures.Future)


def test_fork_raises_the_task_error_at_fork():
    def bad(x):
        raise ValueError("task failed")

    raises_like(lambda: retrograd.jit.fork(bad, retrograd.ones(1)),
                lambda: torch.jit.fork(bad, torch.ones(1)))


# -- freeze / optimize_for_inference ---------------------------------------------------------


def test_freeze_requires_eval_mode_like_torch():
    raises_like(lambda: retrograd.jit.freeze(retrograd.jit.script(make_net(retrograd))),
                lambda: torch.jit.freeze(torch.jit.script(make_net(torch))))


def test_freeze_refuses_what_is_not_a_module_like_torch():
    def f(x):
        return x

    raises_like(lambda: retrograd.jit.freeze(retrograd.jit.script(f)),
                lambda: torch.jit.freeze(torch.jit.script(f)))
    raises_like(lambda: retrograd.jit.optimize_for_inference(f),
                lambda: torch.jit.optimize_for_inference(f))


def test_freeze_unknown_preserved_attr_like_torch():
    raises_like(
        lambda: retrograd.jit.freeze(retrograd.jit.script(make_net(retrograd).eval()),
                                     preserved_attrs=["nonexist"]),
        lambda: torch.jit.freeze(torch.jit.script(make_net(torch).eval()),
                                 preserved_attrs=["nonexist"]))


def test_frozen_and_optimized_modules_compute_like_torch():
    t_net, r_net = make_net(torch), make_net(retrograd)
    copy_weights(r_net, t_net)
    (xr,), (xt,) = tensors(retrograd, arrays(13, (3, 3))), tensors(torch, arrays(13, (3, 3)))
    r_frozen = retrograd.jit.freeze(retrograd.jit.script(r_net.eval()))
    t_frozen = torch.jit.freeze(torch.jit.script(t_net.eval()))
    np.testing.assert_allclose(np_of(r_frozen(xr)), np_of(t_frozen(xt)), rtol=1e-12)
    # the module itself, still holding its parameters (torch's frozen copy holds none)
    assert r_frozen is r_net
    # optimize_for_inference puts a training module in eval mode first, as torch's does
    r_net.train()
    t_net.train()
    r_opt = retrograd.jit.optimize_for_inference(retrograd.jit.script(r_net))
    t_opt = torch.jit.optimize_for_inference(torch.jit.script(t_net))
    assert r_opt.training is False
    np.testing.assert_allclose(np_of(r_opt(xr)), np_of(t_opt(xt)), rtol=1e-12)


def test_freeze_accepts_a_plain_module():
    # torch needs a ScriptModule; retrograd's script returns the module, so any module is one
    net = make_net(retrograd).eval()
    assert retrograd.jit.freeze(net) is net
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        torch.jit.freeze(make_net(torch).eval())


# -- save / load -----------------------------------------------------------------------------


def test_save_and_load_refuse(tmp_path):
    path = tmp_path / "m.pt"
    net = retrograd.jit.script(make_net(retrograd))
    with pytest.raises(RuntimeError, match=r"retrograd\.save\(model\.state_dict\(\), f\)"):
        retrograd.jit.save(net, str(path))
    assert not path.exists()
    retrograd.save(net.state_dict(), str(path))
    with pytest.raises(RuntimeError, match=r"cannot read a TorchScript archive"):
        retrograd.jit.load(str(path))
    # the route the messages point to works
    other = make_net(retrograd)
    other.load_state_dict(retrograd.load(str(path)))
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(np_of(other.state_dict()[k]), np_of(v))


# -- fuser settings --------------------------------------------------------------------------


@pytest.fixture
def restore_fusion():
    saved = {name: lib.jit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)])
             for name, lib in LIBS.items()}
    onednn = {name: lib.jit.onednn_fusion_enabled() for name, lib in LIBS.items()}
    yield
    for name, lib in LIBS.items():
        lib.jit.set_fusion_strategy(saved[name])
        lib.jit.enable_onednn_fusion(onednn[name])


def test_set_fusion_strategy_returns_previous_like_torch(restore_fusion):
    seq = [[("STATIC", 2)], [("DYNAMIC", 3), ("STATIC", 1)], []]
    r = [retrograd.jit.set_fusion_strategy(s) for s in seq]
    t = [torch.jit.set_fusion_strategy(s) for s in seq]
    assert r == t
    raises_like(lambda: retrograd.jit.set_fusion_strategy([("FOO", 3)]),
                lambda: torch.jit.set_fusion_strategy([("FOO", 3)]))
    with pytest.raises(TypeError):
        retrograd.jit.set_fusion_strategy("STATIC")


def test_onednn_and_fuser_like_torch(restore_fusion):
    states = {}
    for name, lib in LIBS.items():
        seen = [lib.jit.onednn_fusion_enabled(), lib.jit.enable_onednn_fusion(True),
                lib.jit.onednn_fusion_enabled()]
        for fuser in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
            with lib.jit.fuser(fuser) as r:
                seen += [fuser, r, lib.jit.onednn_fusion_enabled()]
            seen.append(lib.jit.onednn_fusion_enabled())
        lib.jit.enable_onednn_fusion(False)
        seen.append(lib.jit.onednn_fusion_enabled())
        states[name] = seen
    assert states["retrograd"] == states["torch"]

    def bad(lib):
        with lib.jit.fuser("fuser9"):
            pass

    raises_like(lambda: bad(retrograd), lambda: bad(torch))


def test_strict_fusion_and_optimized_execution_like_torch():
    for lib in LIBS.values():
        with pytest.warns(UserWarning, match="Only works in script mode"):
            ctx = lib.jit.strict_fusion()
        with ctx as r:
            assert r is None
        with lib.jit.optimized_execution(False) as r:
            assert r is None
