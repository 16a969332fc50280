"""torch.compiler's and torch._dynamo's calls for programs that compile: is_compiling, disable,
graph_break, set_stance, backends, _dynamo.config; messages compared with torch 2.13's."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.compiler import config, counters
from tests.parity.harness import error_of, torch_or_skip


@pytest.fixture
def torch_compiler():
    """torch, with its compile caches and stance reset around the test."""
    torch = torch_or_skip()
    torch._dynamo.reset()
    yield torch
    torch.compiler.set_stance("default")
    torch._dynamo.reset()


def _ones(*shape):
    return retrograd.ones(*shape)


def test_is_compiling_is_true_only_while_the_function_is_captured():
    seen = []

    def f(x):
        seen.append(retrograd.compiler.is_compiling())
        return x * 2 + 1 if retrograd.compiler.is_compiling() else x * 2 + 1

    compiled = retrograd.compile(f, fullgraph=True)
    assert not retrograd.compiler.is_compiling()
    out = compiled(_ones(3))
    np.testing.assert_array_equal(out.numpy(), np.full(3, 3.0, np.float32))
    # captured once (True), then checked against an eager run (False); later calls run the
    # generated code without the Python
    assert seen == [True, False]
    compiled(_ones(3))
    assert seen == [True, False]
    assert retrograd.compiler.is_dynamo_compiling is retrograd.compiler.is_compiling
    assert retrograd._dynamo.is_compiling is retrograd.compiler.is_compiling
    assert retrograd.compiler.is_exporting() is False


def test_is_compiling_inside_a_custom_functions_backward():
    seen = []

    class Double(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen.append(retrograd.compiler.is_compiling())
            return g * 2

    x = retrograd.ones(2, requires_grad=True)
    retrograd.compile(lambda t: Double.apply(t).sum())(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    assert seen[0] is True  # the backward formula was captured into the graph


def test_a_disabled_function_runs_its_caller_eagerly_and_fullgraph_names_the_line():
    calls = []

    @retrograd.compiler.disable
    def helper(x):
        calls.append(retrograd.compiler.is_compiling())
        return x * 3

    assert helper.__name__ == "helper" and helper(_ones(1)).item() == 3.0
    lenient = retrograd.compile(lambda x: helper(x) + 1)
    for _ in range(2):
        np.testing.assert_array_equal(lenient(_ones(2)).numpy(), [4.0, 4.0])
    assert counters["cache_miss"] == 0  # nothing was generated
    assert not any(calls)

    def strict_fn(x):
        return helper(x) + 1

    strict = retrograd.compile(strict_fn, fullgraph=True)
    with pytest.raises(RuntimeError, match=r"call to .*helper, which is wrapped with "
                       r"retrograd.compiler.disable \(reason: None\) at .*test_compiler_api.py"):
        strict(_ones(2))


def test_compiling_a_disabled_function_or_module_leaves_it_alone():
    def f(x):
        return x + 1

    disabled = retrograd.compiler.disable(f, reason="host code")
    assert retrograd.compile(disabled) is disabled
    assert retrograd.compiler.disable(disabled)(_ones(1)).item() == 2.0
    model = retrograd.nn.Linear(2, 2)
    assert retrograd.compiler.disable(model) is model
    retrograd.compile(model)
    x = _ones(1, 2)
    np.testing.assert_allclose(model(x).detach().numpy(),
                               (x @ model.weight.T + model.bias).detach().numpy())
    assert counters["compiles"] == 0
    with pytest.raises(RuntimeError, match="reason: host code"):
        retrograd.compile(lambda x: disabled(x) * 2, fullgraph=True)(x)


def test_graph_break_runs_the_call_eagerly():
    def f(x):
        y = x * 2
        retrograd._dynamo.graph_break()
        return y + 1

    np.testing.assert_array_equal(retrograd.compile(f)(_ones(2)).numpy(), [3.0, 3.0])
    with pytest.raises(RuntimeError, match="graph_break"):
        retrograd.compile(f, fullgraph=True)(_ones(2))
    retrograd._dynamo.graph_break()  # eagerly: nothing happens


def test_markers_hand_back_the_function():
    def f(x):
        return x

    for marker in (retrograd.compiler.allow_in_graph, retrograd.compiler.assume_constant_result,
                   retrograd.compiler.nested_compile_region):
        assert marker(f) is f
    assert retrograd.compiler.nested_compile_region()(f) is f
    assert retrograd.compiler.cudagraph_mark_step_begin() is None
    t = _ones(2)
    retrograd._dynamo.mark_static_address(t)
    np.testing.assert_array_equal(retrograd.compile(lambda a: a * 2)(t).numpy(), [2.0, 2.0])


def _count_program(lib, stance, shapes):
    """(results, compiles) of calling a compiled x * 2 on `shapes` under `stance`."""
    if lib is retrograd:
        before = counters["compiles"]
        fn = retrograd.compile(lambda x: x * 2, dynamic=False)
    else:
        from torch._dynamo.testing import CompileCounter

        cnt = CompileCounter()
        fn = lib.compile(lambda x: x * 2, backend=cnt, dynamic=False)
    out = []
    with lib.compiler.set_stance(stance):
        for shape in shapes:
            out.append(error_of(lambda s=shape: fn(lib.ones(*s)).sum().item()))
    compiles = counters["compiles"] - before if lib is retrograd else cnt.frame_count
    return [o if o[0] == "ok" else o[:2] for o in out], compiles


@pytest.mark.parametrize("stance, shapes", [
    ("force_eager", [(2,), (3,)]),
    ("eager_on_recompile", [(2,), (2,)]),
    ("eager_then_compile", [(2,), (2,), (3,)]),
    ("fail_on_recompile", [(2,)]),
    ("default", [(2,), (3,)]),
])
def test_stances_compile_as_torchs(torch_compiler, stance, shapes):
    assert _count_program(retrograd, stance, shapes) == \
        _count_program(torch_compiler, stance, shapes)


def test_eager_on_recompile_reuses_what_was_compiled():
    fn = retrograd.compile(lambda x: x * 2, dynamic=False)
    fn(_ones(2))
    assert counters["compiles"] == 1
    with retrograd.compiler.set_stance("eager_on_recompile"):
        assert fn(_ones(2)).sum().item() == 4.0  # the variant compiled before
        assert fn(_ones(3)).sum().item() == 6.0  # would need a new one: eagerly
    assert counters["compiles"] == 1
    assert len(fn.variants) == 1


def test_fail_on_recompile_names_the_function_and_the_guard(torch_compiler):
    def program(lib):
        def double(x):
            return x * 2

        fn = lib.compile(double, dynamic=False, **({} if lib is retrograd else
                                                  {"backend": "eager"}))
        fn(lib.ones(2))
        with lib.compiler.set_stance("fail_on_recompile"):
            fn(lib.ones(2))
            return error_of(fn, lib.ones(3, 3))

    ours, theirs = program(retrograd), program(torch_compiler)
    assert ours[:2] == theirs[:2] == ("raised", "RuntimeError")
    assert ours[2].splitlines()[0] == theirs[2].splitlines()[0]
    assert "triggered by the following guard failure(s):" in ours[2]


def test_set_stance_as_decorator_and_its_errors(torch_compiler):
    def program(lib):
        seen = []
        compiled = lib.compile(lambda x: x + 1, dynamic=False,
                               **({} if lib is retrograd else {"backend": "eager"}))

        @lib.compiler.set_stance("force_eager")
        def run(x):
            return compiled(x)

        seen.append(run(lib.ones(1)).item())
        bogus = lib.compiler.set_stance("bogus")
        try:
            seen.append(error_of(compiled, lib.ones(1))[:3])
        finally:
            lib.compiler.set_stance("default")
        seen.append(error_of(lib.compiler.set_stance, "force_eager", force_backend="eager"))
        seen.append(type(bogus).__name__)
        return seen

    ours, theirs = program(retrograd), program(torch_compiler)
    assert ours == theirs
    assert ours[1][2].startswith("invalid torch.compile stance 'DynamoStance(stance='bogus'")


def test_set_stance_inside_a_compiled_function_is_not_captured():
    def f(x):
        retrograd.compiler.set_stance("default")
        return x + 1

    with pytest.raises(RuntimeError, match="set_stance called in a compiled function"):
        retrograd.compile(f, fullgraph=True)(_ones(1))


def test_backends_as_torchs(torch_compiler):
    assert error_of(retrograd.compile, lambda x: x, backend="nope")[:3] == \
        error_of(torch_compiler.compile, lambda x: x, backend="nope")[:3]
    with pytest.raises(retrograd._dynamo.exc.InvalidBackend):
        retrograd.compile(lambda x: x, backend="nope")
    for name in ("inductor", "eager", "aot_eager", "numpy", None):
        fn = retrograd.compile(lambda x: x * 2, backend=name)
        assert fn(_ones(1)).item() == 2.0
    assert retrograd.compiler.list_backends() == ["numpy"]
    assert retrograd._dynamo.list_backends(exclude_tags=()) == ["numpy"]
    assert retrograd.compiler.get_default_backend() == "numpy"
    retrograd.compiler.set_default_backend("inductor")
    try:
        assert retrograd.compiler.get_default_backend() == "inductor"
    finally:
        retrograd.compiler.set_default_backend(None)
    assert retrograd.compiler.get_default_backend() == "numpy"
    with pytest.raises(retrograd._dynamo.exc.InvalidBackend):
        retrograd.compiler.set_default_backend("nope")


def test_dynamo_config_knobs(torch_compiler):
    dyn = retrograd._dynamo.config
    limit = config.recompile_limit
    try:
        dyn.cache_size_limit = 3
        assert config.recompile_limit == 3 == dyn.recompile_limit == dyn.cache_size_limit
        dyn.recompile_limit = 5
        assert config.recompile_limit == 5
    finally:
        config.recompile_limit = limit
    defaults = torch_compiler._dynamo.config._config  # (torch.compile(dynamic=...) patches)
    for name in ("suppress_errors", "verbose", "capture_scalar_outputs", "optimize_ddp",
                 "automatic_dynamic_shapes", "accumulated_recompile_limit"):
        assert getattr(dyn, name) == defaults[name].default, name
    assert dyn.accumulated_cache_size_limit == dyn.accumulated_recompile_limit
    ours = error_of(setattr, dyn, "no_such_knob", 1)
    theirs = error_of(setattr, torch_compiler._dynamo.config, "no_such_knob", 1)
    assert ours[:2] == theirs[:2]
    assert ours[2] == theirs[2].replace("torch.", "retrograd.")
    assert error_of(getattr, dyn, "no_such_knob")[2] == ours[2]


def test_automatic_dynamic_shapes_off_keeps_sizes_static():
    dyn = retrograd._dynamo.config
    fn = retrograd.compile(lambda x: x * 2)
    dyn.automatic_dynamic_shapes = False
    try:
        for n in (2, 3, 4):
            assert fn(_ones(n)).sum().item() == 2.0 * n
    finally:
        dyn.automatic_dynamic_shapes = True
    assert counters["compiles"] == 3 and not fn.dynamic_variants
    fn2 = retrograd.compile(lambda x: x * 2)
    for n in (2, 3, 4):
        fn2(_ones(n))
    assert counters["compiles"] == 5  # (the default: static, then one dynamic variant)


def test_optimized_module_is_never_made(torch_compiler):
    model = retrograd.nn.Linear(2, 2)
    compiled = retrograd.compile(model)
    assert not isinstance(compiled, retrograd._dynamo.eval_frame.OptimizedModule)
    assert retrograd._dynamo.OptimizedModule is retrograd._dynamo.eval_frame.OptimizedModule
    with pytest.raises(RuntimeError, match="returns the module itself"):
        retrograd._dynamo.eval_frame.OptimizedModule(model)


def test_inductor_config_knobs_have_torchs_names_and_defaults(torch_compiler):
    import importlib

    ours = importlib.import_module("retrograd._inductor.config")
    theirs = importlib.import_module("torch._inductor.config")
    assert retrograd._inductor.config is ours
    names = [n for n in vars(ours) if not n.startswith("_") and n not in (
        "annotations", "Any", "sys", "types", "triton", "cpp", "trace")]
    assert len(names) > 30
    for name in names:
        assert getattr(ours, name) == getattr(theirs, name), name
    for section in ("triton", "cpp", "trace"):
        for name in getattr(ours, section)._names:
            assert getattr(getattr(ours, section), name) == getattr(
                getattr(theirs, section), name), (section, name)
    old = ours.coordinate_descent_tuning
    try:  # what gpt-fast-style programs set before compiling
        ours.coordinate_descent_tuning = True
        ours.triton.unique_kernel_names = True
        ours.fx_graph_cache = True
        assert ours.coordinate_descent_tuning is True
    finally:
        ours.coordinate_descent_tuning = old
    for target, where in ((ours, theirs), (ours.triton, theirs.triton)):
        mine = error_of(setattr, target, "no_such_knob", 1)
        torch_s = error_of(setattr, where, "no_such_knob", 1)
        assert mine[:2] == torch_s[:2]
        assert mine[2] == torch_s[2].replace("torch.", "retrograd.")
        assert error_of(getattr, target, "no_such_knob")[2] == mine[2]
