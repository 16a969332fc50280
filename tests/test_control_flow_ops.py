"""torch.cond and torch.while_loop on torch and on retrograd: values, gradients (to operands,
closed-over tensors, unused operands), node names, output structures, torch's refusals
(aliasing, mutation, mismatched loop bodies, bad predicates and arguments), and how
retrograd.compile treats them."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal(4)
W = np.random.default_rng(1).standard_normal(4)


def _leaves(lib):
    return (lib.tensor(X, requires_grad=True), lib.tensor(W, requires_grad=True))


@pytest.mark.parametrize("pred", [True, False])
def test_cond_values_gradients_and_node_as_torch(pred):
    def prog(lib):
        x, w = _leaves(lib)
        unused = lib.tensor(X * 2, requires_grad=True)
        y = lib.cond(lib.tensor(pred), lambda x, u: (x * w).sin(), lambda x, u: x.cos() + 1,
                     (x, unused))
        name = type(y.grad_fn).__name__
        y.sum().backward()
        # w is used by the true branch only: torch gives it zeros when the false one runs
        return [y, name, x.grad, w.grad if pred else None, unused.grad]

    ours = both(prog, rtol=1e-12, atol=1e-12)
    assert ours[1] == "CondAutogradOpBackward" and ours[4] is None


def test_cond_gives_no_gradient_to_what_only_the_other_branch_uses():
    """Deliberate: the branch not taken is not run, so what only it uses is not in the graph
    (torch, which traced it, gives zeros)."""
    x = retrograd.tensor(X, requires_grad=True)
    w = retrograd.tensor(W, requires_grad=True)
    y = retrograd.cond(retrograd.tensor(False), lambda x: x * w, lambda x: x.cos(), (x,))
    y.sum().backward()
    assert w.grad is None
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(X), rtol=1e-12)


def test_cond_with_a_python_predicate_just_calls_the_branch_as_torch():
    def prog(lib):
        x, _ = _leaves(lib)
        y = lib.cond(True, lambda x: x.sin(), lambda x: x.cos(), (x,))
        z = lib.cond(0, lambda x: x.sin(), lambda x: x.cos(), (x,))
        return [y, type(y.grad_fn).__name__, z, type(z.grad_fn).__name__]

    assert both(prog)[1] == "SinBackward0"


def test_cond_structures_and_int_outputs_as_torch():
    def prog(lib):
        x, _ = _leaves(lib)
        p = lib.tensor(1.0)  # any one-element tensor
        pair = lib.cond(p, lambda d: (d["a"].sin(), 3), lambda d: (d["a"].cos(), 3),
                        ({"a": x},))
        mapping = lib.cond(p, lambda x: {"s": x.exp()}, lambda x: {"s": x.log()}, [x])
        ints = lib.cond(p, lambda x: (x * 2).long(), lambda x: x.long(), (x,))
        return [pair, mapping["s"], ints, ints.requires_grad]

    both(prog)


def test_cond_outputs_under_no_grad_as_torch():
    def prog(lib):
        x, _ = _leaves(lib)
        with lib.no_grad():
            y = lib.cond(lib.tensor(True), lambda x: x.sin(), lambda x: x.cos(), (x,))
        return [y, y.grad_fn is None, y.requires_grad]

    both(prog)


def test_cond_double_backward_is_allowed():
    """Deliberate: torch's CondAutogradOp's gradient has no graph (its double backward raises
    "element 0 of tensors does not require grad"); here it differentiates again."""
    x = retrograd.tensor(X, requires_grad=True)
    y = retrograd.cond(retrograd.tensor(True), lambda x: x.sin(), lambda x: x.cos(), (x,))
    (g,) = retrograd.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = retrograd.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), -np.sin(X), rtol=1e-12)


COND_REFUSALS = {
    "aliasing": lambda lib, x: lib.cond(lib.tensor(True), lambda x: x, lambda x: x * 1, (x,)),
    "view_alias": lambda lib, x: lib.cond(lib.tensor(True), lambda x: x[:2], lambda x: x[1:],
                                          (x,)),
    "mutation": lambda lib, x: lib.cond(lib.tensor(True), lambda x: x.add_(1), lambda x: x * 1,
                                        (x.detach().clone(),)),
    "none_output": lambda lib, x: lib.cond(lib.tensor(True), lambda x: None, lambda x: None,
                                           (x,)),
}


@pytest.mark.parametrize("case", list(COND_REFUSALS))
def test_cond_refusals_as_torch(case):
    first_lines = []
    for lib in (torch, retrograd):
        x = lib.tensor(X)
        with pytest.raises(RuntimeError) as e:
            COND_REFUSALS[case](lib, x)
        assert type(e.value).__name__ == "UncapturedHigherOrderOpError"
        text = str(e.value)
        key = {"aliasing": "Encountered aliasing", "view_alias": "Encountered aliasing",
               "mutation": "Encountered input mutation",
               "none_output": "unsupported branch return type (constant non-int)"}[case]
        assert key in text
        first_lines.append(text)
    assert X.tolist() == retrograd.tensor(X).tolist()


COND_ERRORS = {
    "pred_many": lambda lib, x: lib.cond(lib.tensor([True, False]), lambda x: x.sin(),
                                         lambda x: x.cos(), (x,)),
    "pred_none": lambda lib, x: lib.cond(None, lambda x: x.sin(), lambda x: x.cos(), (x,)),
    "not_callable": lambda lib, x: lib.cond(lib.tensor(True), 1, lambda x: x, (x,)),
    "int_operand": lambda lib, x: lib.cond(lib.tensor(True), lambda x, n: x * n,
                                           lambda x, n: x + n, (x, 3)),
}


@pytest.mark.parametrize("case", list(COND_ERRORS))
def test_cond_argument_errors_as_torch(case):
    def prog(lib):
        return error_of(COND_ERRORS[case], lib, lib.tensor([1.0, 2.0]))

    assert both(prog)[0] == "raised"


def test_while_loop_values_and_gradients_as_torch():
    def prog(lib):
        x, w = _leaves(lib)
        i, v = lib.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, (v * w).tanh()),
                              (lib.tensor(0), x))
        name = type(v.grad_fn).__name__
        v.sum().backward()
        return [i, v, name, x.grad, w.grad]

    assert both(prog, rtol=1e-12, atol=1e-12)[2] == "WhileLoopAutogradOpBackward"


def test_while_loop_structures_as_torch():
    def prog(lib):
        x, _ = _leaves(lib)
        as_list = lib.while_loop(lambda i, v: i < 2, lambda i, v: [i + 1, v * 2],
                                 (lib.tensor(0), x))
        as_dict = lib.while_loop(lambda d: d["i"] < 3, lambda d: {"i": d["i"] + 1},
                                 ({"i": lib.tensor(0)},))
        never = lib.while_loop(lambda i, v: i > 3, lambda i, v: (i + 1, v * 2),
                               (lib.tensor(0), x))
        return [as_list, type(as_list).__name__, as_dict["i"], never,
                type(never[1].grad_fn).__name__]

    both(prog)


def test_while_loop_that_never_runs_copies_its_inputs():
    x = retrograd.tensor([1.0, 2.0])
    with retrograd.no_grad():
        _, v = retrograd.while_loop(lambda i, v: i > 3, lambda i, v: (i + 1, v), (0, x))
    v[0] = 9.0
    assert x.tolist() == [1.0, 2.0]


WHILE_REFUSALS = {
    "count": (lambda i, v: i < 3, lambda i, v: (i + 1,),
              "Expected body_fn_output and carried_inputs to have same number of outputs"),
    "dtype": (lambda i, v: i < 3, lambda i, v: (i + 1, v.double()),
              "Expected body_fn_output and carried_inputs to have same metadata but found:\n"
              "pair[1] differ in 'dtype: "),
    "shape": (lambda i, v: i < 3, lambda i, v: (i + 1, v[:2] * 2),
              "pair[1] differ in 'shape: "),
    "float_condition": (lambda i, v: (i < 3).float(), lambda i, v: (i + 1, v * 2),
                        "Expected cond_fn to return a scalar tensor or a bool but got "),
    "vector_condition": (lambda i, v: i < v, lambda i, v: (i + 1, v * 2),
                         "Expected cond_fn to return a scalar tensor or a bool but got "),
    "constant_true": (lambda i, v: True, lambda i, v: (i + 1, v * 2), "infinite loop detected"),
    "aliasing": (lambda i, v: i < 3, lambda i, v: (i + 1, v), "Encountered aliasing"),
    "mutation": (lambda i, v: i < 3, lambda i, v: (i.add_(1), v * 2),
                 "Encountered input mutation"),
}


@pytest.mark.parametrize("case", list(WHILE_REFUSALS))
def test_while_loop_refusals_as_torch(case):
    cond_fn, body_fn, key = WHILE_REFUSALS[case]
    for lib in (torch, retrograd):
        with pytest.raises(RuntimeError) as e:
            lib.while_loop(cond_fn, body_fn, (lib.tensor(0), lib.ones(3)))
        assert type(e.value).__name__ == "UncapturedHigherOrderOpError"
        assert key in str(e.value).replace("torch.", "").replace("retrograd.", ""), lib


def test_while_loop_argument_errors_as_torch():
    def prog(lib):
        x = lib.ones(2)
        return [error_of(lambda: lib.while_loop(1, lambda i: (i,), (x,))),
                error_of(lambda: lib.while_loop(lambda i, v: i < 3,
                                                lambda i, v: (i + 1, v), (1.5, x)))[:2]]

    both(prog)


def test_compile_runs_a_cond_on_a_tensor_predicate_eagerly():
    """retrograd.compile cannot capture a tensor predicate: it runs the function eagerly, with
    the same values and gradients, and fullgraph=True refuses it naming the user's line."""

    def f(x):
        return retrograd.cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))

    for data in (X, -np.abs(X)):
        x_eager = retrograd.tensor(data, requires_grad=True)
        x_comp = retrograd.tensor(data, requires_grad=True)
        f(x_eager).sum().backward()
        retrograd.compile(f)(x_comp).sum().backward()
        np.testing.assert_array_equal(x_comp.grad.numpy(), x_eager.grad.numpy())
    with pytest.raises(RuntimeError, match="data-dependent"):
        retrograd.compile(f, fullgraph=True)(retrograd.tensor(X))
