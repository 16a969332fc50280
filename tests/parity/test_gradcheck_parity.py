"""gradcheck / gradgradcheck against torch: outcomes, error types and message heads, options."""

from __future__ import annotations

import warnings

import pytest

from tests.parity.harness import both


def outcome(fn, *args, **kwargs):
    """("ok", result) or (error type, first line of the message): torch's messages go on with
    its repr of the Jacobians, compared elsewhere."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", fn(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - the point is to compare any error
        return (type(e).__name__, str(e).split("\n")[0])


def is_gradcheck_error(lib, fn, *args, **kwargs):
    from importlib import import_module

    error = import_module(lib.__name__ + ".autograd.gradcheck").GradcheckError
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)
    except error:
        return True
    except Exception as e:  # noqa: BLE001 - other errors are compared by type
        return type(e).__name__
    return False


def make_cases(lib):
    def hooked(x):
        y = x.clone()
        y.register_hook(lambda g: g + 1e-2)
        return y

    def undefined_unsafe(x):
        def hook(g):
            if g is None:
                raise RuntimeError("x is undefined")

        y = x.clone()
        y.register_hook(hook)
        return y

    def shape_changes(x):
        return lib.cat([x, x]) if bool(lib.all(x >= 1)) else x

    def dtype_changes(x):
        return x.to(lib.float32) if bool(lib.all(x >= 1)) else x

    class NonDet(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, jitter=0.0):
            ctx.jitter = jitter
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g * (1 + lib.rand_like(g) * ctx.jitter), None

    class NotScaled(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 + 1

    return {
        "hooked": hooked, "undefined_unsafe": undefined_unsafe, "shape": shape_changes,
        "dtype": dtype_changes, "nondet": lambda x: NonDet.apply(x, 1e-6),
        "nondet_ok": lambda x: NonDet.apply(x, 0.0), "not_scaled": NotScaled.apply,
        "no_diff_outputs": lambda x: lib.tensor([float(x)]), "no_outputs": lambda x: (),
        "exp": lambda x: x.exp(),
        # outputs sharing memory with the perturbed input
        "alias": lambda x: (x.view(-1), x[1:]),
    }


CASES = ["hooked", "undefined_unsafe", "shape", "dtype", "nondet", "nondet_ok", "not_scaled",
         "no_diff_outputs", "no_outputs", "exp", "alias"]


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("case", CASES)
def test_gradcheck_outcomes(case, fast_mode):
    def prog(lib):
        fn = make_cases(lib)[case]
        x = lib.ones(1 if case == "no_diff_outputs" else 3, dtype=lib.float64,
                     requires_grad=True)
        lib.manual_seed(0)
        return (outcome(lib.autograd.gradcheck, fn, (x,), fast_mode=fast_mode),
                outcome(lib.autograd.gradcheck, fn, (x,), raise_exception=False,
                        fast_mode=fast_mode),
                is_gradcheck_error(lib, lib.autograd.gradcheck, fn, (x,), fast_mode=fast_mode))

    both(prog)


def test_gradcheck_options():
    def prog(lib):
        cases = make_cases(lib)
        x = lib.ones(3, dtype=lib.float64, requires_grad=True)
        gc = lib.autograd.gradcheck
        return [
            outcome(gc, cases["nondet"], (x,), nondet_tol=1e-5),
            outcome(gc, cases["undefined_unsafe"], (x,), check_undefined_grad=False),
            outcome(gc, cases["exp"], (x,), check_batched_grad=True),
            outcome(gc, cases["exp"], (x,), check_backward_ad=False, check_forward_ad=False),
            outcome(gc, cases["exp"], (x,), check_batched_grad=True, check_backward_ad=False,
                    check_forward_ad=True),
            outcome(gc, cases["hooked"], (x,), atol=0.1, rtol=0.0),
            outcome(gc, cases["exp"], (x,), check_grad_dtypes=True, masked=True),
            outcome(gc, cases["exp"], (lib.ones(3, dtype=lib.float64),)),
            outcome(lib.autograd.gradgradcheck, lambda t: t.exp() * t, (x,)),
            outcome(lib.autograd.gradgradcheck, cases["nondet_ok"], (x,),
                    check_batched_grad=True),
            outcome(lib.autograd.gradgradcheck, cases["exp"], (x,), check_rev_over_rev=False),
        ]

    both(prog)


def test_undefined_grad_warning():
    def prog(lib):
        fn = make_cases(lib)["undefined_unsafe"]
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ok = lib.autograd.gradcheck(fn, (x,), raise_exception=False)
        return ok, [(type(m.message).__name__, str(m.message)) for m in w]

    both(prog)


def test_forward_ad_check():
    import torch

    import retrograd

    for lib in (torch, retrograd):
        fw = lib.autograd.forward_ad

        def bad(x, y, fw=fw):
            if fw._current_level >= 0:  # a tangent 10% off, seen only by forward mode
                p, t = fw.unpack_dual(y)
                y = fw.make_dual(p, t * 1.1)
            return x + y, y

        x = lib.rand(2, dtype=lib.float64, requires_grad=True)
        y = lib.rand(2, dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradcheck(lambda a, b: (a * b, b.exp()), (x, y),
                                      check_forward_ad=True)
        with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch "
                                               "for output 0 with respect to input 1"):
            lib.autograd.gradcheck(bad, (x, y), check_forward_ad=True)


def test_deprecated_jacobian_helpers():
    def prog(lib):
        from importlib import import_module

        mod = import_module(lib.__name__ + ".autograd.gradcheck")
        a = lib.arange(4.0, dtype=lib.float64).reshape(2, 2).requires_grad_()
        b = (lib.arange(4.0, dtype=lib.float64) + 1).reshape(2, 2).requires_grad_()

        def packed(ins):
            return 2 * ins[0] * ins[1] + ins[1], ins[0] + 2 * ins[1]

        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            num = mod.get_numerical_jacobian(packed, (a, b), eps=1e-6)
            num_a = mod.get_numerical_jacobian(packed, (a, b), target=a, eps=1e-6)
            ana = mod.get_analytical_jacobian((a, b), packed((a, b))[0])
        return (num, num_a, ana, [(type(m.message).__name__, str(m.message)) for m in w],
                outcome(mod.get_numerical_jacobian, packed, (a, b), grad_out=2.0),
                outcome(mod.get_analytical_jacobian, (a,), a * 2, grad_out=2.0))

    both(prog, rtol=1e-4, atol=1e-6)
