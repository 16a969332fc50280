"""autograd.functional's errors against torch's: exception types and messages."""

from __future__ import annotations

import pytest

from tests.parity.harness import both, error_of

NAMES = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]
TAKES_V = ["vjp", "jvp", "vhp", "hvp"]


def _x(lib):
    return lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)


def _y(lib):
    return lib.tensor([[1.5, -0.5], [0.25, 1.0]], dtype=lib.float64)


@pytest.mark.parametrize("name", NAMES)
def test_inputs_and_outputs_must_be_tensors(name):
    def prog(lib):
        fn = getattr(lib.autograd.functional, name)
        x = _x(lib)
        scalar = (lambda a, *r: (a ** 3).sum())
        return (
            error_of(fn, scalar, (x, 2)),
            error_of(fn, scalar, [x]),
            error_of(fn, scalar, 3.0),
            error_of(fn, lambda a: "out", x),
            error_of(fn, lambda a: ((a ** 3).sum(), "bar"), x),
            error_of(fn, lambda a: [a.sum()], x),
        )

    both(prog)


@pytest.mark.parametrize("name", TAKES_V)
def test_v_is_checked(name):
    def prog(lib):
        fn = getattr(lib.autograd.functional, name)
        x, y = _x(lib), _y(lib)
        scalar = (lambda a: (a ** 3).sum()) if name in ("vhp", "hvp") else (lambda a: a ** 3)
        pair = lambda a, b: (a ** 3).sum() + (b ** 2).sum()  # noqa: E731
        return (
            error_of(fn, scalar, x),                      # v needed
            error_of(fn, scalar, x, (x, x)),              # one tensor wanted
            error_of(fn, scalar, x, x[:2]),               # wrong size
            error_of(fn, scalar, x, [x]),                 # not a tensor or tuple
            error_of(fn, scalar, x, 2.0),
            error_of(fn, pair, (x, y), (x,)),             # tuple of the wrong length
            error_of(fn, pair, (x, y), (x, x)),           # entry of the wrong size
            error_of(fn, pair, (x, y), (x, "y")),
            error_of(fn, lambda a: (a * 2).sum() if name != "jvp" else a * 2,
                     lib.tensor([2.0])),                  # v may be None: single element
        )

    both(prog)


def test_vjp_v_none_needs_a_single_element_output():
    def prog(lib):
        F = lib.autograd.functional
        x = _x(lib)
        return (error_of(F.vjp, lambda a: a * 2, x),
                error_of(F.vjp, lambda a: (a.sum(), a.sum()), x),
                error_of(F.vjp, lambda a: a.sum(), x, (x.sum(), x.sum())),
                error_of(F.vjp, lambda a: (a.sum(), a * 2), x, (x.sum(), x[:2])))

    both(prog)


@pytest.mark.parametrize("name", ["hessian", "vhp", "hvp"])
def test_scalar_function_required(name):
    def prog(lib):
        fn = getattr(lib.autograd.functional, name)
        x = _x(lib)
        v = () if name == "hessian" else (x,)
        return (error_of(fn, lambda a: (a.sum(), a.sum()), x, *v),
                error_of(fn, lambda a: a * 2, x, *v),
                error_of(fn, lambda a: (a.sum(),), x, *v))

    both(prog)


# functions that defeat strict mode in one way or another
def _strict_cases(lib):
    w = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)  # not an input
    return {
        "external": lambda a, b: (a * w).sum() + (b * b).sum(),
        "external_output": lambda a, b: (a * 2, w * 3),
        "no_grad_output": lambda a, b: lib.ones_like(a),
        "detached": lambda a, b: (a * b.sum()).detach(),
        "unused_input": lambda a, b: (a ** 3).sum(),
        "linear": lambda a, b: a.sum() * 2 + b.sum(),
        "quadratic": lambda a, b: (a ** 2).sum() + (b * b).sum(),
        "cubic": lambda a, b: (a ** 3).sum() * b.sum(),
        "linear_vec": lambda a, b: a * 2 + b.sum(),
        "mixed_outputs": lambda a, b: ((a ** 2).sum(), b * 3),
    }


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("case", sorted(_strict_cases(__import__("retrograd"))))
def test_strict_mode(name, create_graph, case):
    def prog(lib):
        fn = getattr(lib.autograd.functional, name)
        f = _strict_cases(lib)[case]
        x, y = _x(lib), _y(lib)
        args = [f, (x, y)]
        if name == "vjp":
            out = f(x, y)
            args.append(tuple(lib.ones_like(o) for o in out) if isinstance(out, tuple)
                        else lib.ones_like(out))
        elif name != "jacobian" and name != "hessian":
            args.append((lib.ones_like(x), lib.ones_like(y)))
        return error_of(fn, *args, create_graph=create_graph, strict=True)

    both(prog)


def test_jacobian_flag_combinations():
    def prog(lib):
        F = lib.autograd.functional
        x = _x(lib)
        f = lambda a: a ** 2  # noqa: E731
        return (
            error_of(F.jacobian, f, x, strict=True, vectorize=True),
            error_of(F.jacobian, f, x, strategy="forward-mode", create_graph=True),
            error_of(F.jacobian, f, x, strategy="forward-mode", strict=True),
            error_of(F.jacobian, f, x, strategy="forward-mode", vectorize=False),
            error_of(F.jacobian, f, x, strategy="sideways"),
            error_of(F.hessian, lambda a: f(a).sum(), x, outer_jacobian_strategy="sideways"),
            error_of(F.hessian, lambda a: f(a).sum(), x, strict=True, vectorize=True),
            error_of(F.hessian, lambda a: f(a).sum(), x, outer_jacobian_strategy="forward-mode"),
        )

    both(prog)


def test_private_helpers_check_their_arguments():
    def prog(lib):
        F = lib.autograd.functional
        x = _x(lib)
        return (
            error_of(F._construct_standard_basis_for, (x,), (3, 2)),
            error_of(F._construct_standard_basis_for, (), ()),
            error_of(F._fill_in_zeros, (None,), (x,), False, False, "sideways"),
            error_of(F._check_requires_grad, (x,), "sideways", True),
            error_of(F._check_requires_grad, (x,), "sideways", False),
            error_of(F._tuple_postprocess, ((x,),), (True, False, True)),
        )

    both(prog)


def test_jvp_strict_output_unreached_through_the_double_backward():
    def prog(lib):
        F = lib.autograd.functional
        w = lib.ones(2, dtype=lib.float64, requires_grad=True)
        x = _x(lib)
        return (error_of(F.jvp, lambda a: (a * 2, w * 3), x, lib.ones_like(x), strict=True),
                error_of(F.jvp, lambda a: (a * 2, w * 3), x, lib.ones_like(x)))

    both(prog)
