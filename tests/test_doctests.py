"""The examples in the docstrings of the autograd API run (python -m pytest --doctest-modules on
these modules, as part of the normal test run)."""

import doctest
import importlib

import pytest

MODULES = [
    "retrograd.autograd",
    "retrograd.autograd.function",
    "retrograd.autograd.graph",
    "retrograd.autograd.grad_mode",
    "retrograd.autograd.gradcheck",
    "retrograd.ops", "retrograd.fx.graph", "retrograd.fx.graph_module", "retrograd.fx.interpreter",
    "retrograd.fx._symbolic_trace", "retrograd.fx.experimental.proxy_tensor", "retrograd.export",
    "retrograd.autograd.functional",
]

# the public functions whose docstrings must carry an example
DOCUMENTED = [
    "retrograd.autograd.backward", "retrograd.autograd.grad", "retrograd.autograd.Function",
    "retrograd.autograd.graph.saved_tensors_hooks", "retrograd.autograd.graph.save_on_cpu",
    "retrograd.autograd.graph.register_multi_grad_hook",
    "retrograd.autograd.graph.allow_mutation_on_saved_tensors",
    "retrograd.autograd.graph.increment_version", "retrograd.autograd.gradcheck",
    "retrograd.autograd.gradgradcheck", "retrograd.no_grad", "retrograd.enable_grad",
    "retrograd.inference_mode", "retrograd.set_grad_enabled",
    "retrograd.fx.Graph", "retrograd.fx.GraphModule", "retrograd.fx.symbolic_trace",
    "retrograd.fx.Interpreter", "retrograd.fx.wrap",
    "retrograd.fx.experimental.proxy_tensor.make_fx",
    "retrograd.autograd.functional.vjp", "retrograd.autograd.functional.jvp",
    "retrograd.autograd.functional.jacobian", "retrograd.autograd.functional.hessian",
    "retrograd.autograd.functional.vhp", "retrograd.autograd.functional.hvp",
]


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name):
    import retrograd

    module = importlib.import_module(name)
    prev = retrograd.is_grad_enabled()
    try:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    finally:
        retrograd.set_grad_enabled(prev)
    assert result.attempted > 0
    assert result.failed == 0


@pytest.mark.parametrize("name", DOCUMENTED)
def test_public_function_has_an_example(name):
    module, _, attr = name.rpartition(".")
    obj = getattr(importlib.import_module(module), attr)
    assert ">>> " in (obj.__doc__ or ""), f"{name} has no runnable example"
