"""Module backward hooks (full and pre) against torch: call order, arguments, replacements."""

from __future__ import annotations

import warnings

import pytest

from tests.parity.harness import both, error_of

pytest.importorskip("torch")


def _linear(lib, n_in=2, n_out=2):
    m = lib.nn.Linear(n_in, n_out)
    w = lib.arange(n_in * n_out, dtype=lib.float32).reshape(n_out, n_in) / 4 - 0.5
    m.load_state_dict({"weight": w, "bias": lib.linspace(-1, 1, n_out)})
    return m


def _grads(grads):
    return [None if g is None else g.clone() for g in grads]


def test_full_backward_hook_arguments_and_node_names():
    def prog(lib):
        log = []
        m = _linear(lib)

        def hook(mod, gin, gout):
            log.append((type(mod).__name__, _grads(gin), _grads(gout)))

        m.register_full_backward_hook(hook)
        x = lib.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        y = m(x)
        names = (y.grad_fn.name(), type(y.grad_fn).__name__,
                 y.grad_fn.next_functions[0][0].name())
        (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        return log, names, x.grad, m.weight.grad

    both(prog)


def test_hook_order_across_nested_modules():
    def prog(lib):
        log = []
        nn = lib.nn
        inner = nn.Sequential(_linear(lib), nn.Tanh())
        outer = nn.Sequential(_linear(lib), inner, _linear(lib))
        for name, mod in outer.named_modules():
            label = name or "root"
            mod.register_full_backward_pre_hook(
                lambda m, go, label=label: log.append(("pre", label)))
            mod.register_full_backward_hook(
                lambda m, gi, go, label=label: log.append(("hook", label)))
            mod.register_forward_pre_hook(lambda m, a, label=label: log.append(("fpre", label)))
            mod.register_forward_hook(lambda m, a, o, label=label: log.append(("fwd", label)))
        x = lib.tensor([[1.0, 2.0]], requires_grad=True)
        outer(x).sum().backward()
        return log, x.grad

    both(prog)


def test_hooks_prepend_and_remove():
    def prog(lib):
        log = []
        m = _linear(lib)
        m.register_full_backward_hook(lambda *a: log.append("b"))
        h = m.register_full_backward_hook(lambda *a: log.append("c"))
        m.register_full_backward_hook(lambda *a: log.append("a"), prepend=True)
        m.register_full_backward_pre_hook(lambda *a: log.append("pre2"))
        m.register_full_backward_pre_hook(lambda *a: log.append("pre1"), prepend=True)
        x = lib.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        h.remove()
        log.append("|")
        m(x).sum().backward()
        return log

    both(prog)


def test_input_not_requiring_grad():
    def prog(lib):
        log = []
        m = _linear(lib)
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, _grads(go))))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(lib.ones(1, 2)).sum().backward()
        msgs = [str(w.message) for w in caught]
        return log, msgs, m.weight.grad

    both(prog)


def test_hook_that_returns_values_without_input_grads_raises():
    def prog(lib):
        m = _linear(lib)
        m.register_full_backward_hook(lambda mod, gi, go: (lib.ones(1, 2),))
        y = m(lib.ones(1, 2)).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return error_of(y.backward)

    both(prog)


def test_multiple_inputs_with_non_tensors_and_partial_grad():
    def prog(lib):
        log = []

        class Mix(lib.nn.Module):
            def forward(self, a, scale, b):
                return a * scale + b * b, a.sum()

        m = Mix()
        m.register_full_backward_hook(lambda mod, gi, go: log.append((_grads(gi), _grads(go))))
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", _grads(go))))
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0])
        out, total = m(a, 3.0, b)
        (out * lib.tensor([1.0, -1.0])).sum().backward()
        return log, a.grad, type(out).__name__, total.grad_fn.name()

    both(prog)


def test_replacing_grad_input_and_grad_output():
    def prog(lib):
        m = _linear(lib)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
        x = lib.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        return x.grad, m.weight.grad, m.bias.grad

    both(prog)


def test_wrong_number_of_returned_grads():
    def prog(lib):
        m = _linear(lib)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        x = lib.ones(1, 2, requires_grad=True)
        r1 = error_of(m(x).sum().backward)
        m2 = _linear(lib)
        m2.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        r2 = error_of(m2(x).sum().backward)
        return r1, r2

    both(prog)


def test_module_used_twice_fires_twice():
    def prog(lib):
        log = []
        m = _linear(lib)
        m.register_full_backward_hook(lambda mod, gi, go: log.append((_grads(gi), _grads(go))))
        x = lib.tensor([[1.0, 2.0]], requires_grad=True)
        m(m(x)).sum().backward()
        return log, x.grad

    both(prog)


def test_no_fire_when_output_needs_no_grad_and_under_no_grad():
    def prog(lib):
        log = []
        m = _linear(lib).requires_grad_(False)
        m.register_full_backward_hook(lambda *a: log.append("fired"))
        x = lib.ones(1, 2)
        y = m(x)
        with lib.no_grad():
            z = _linear(lib)(lib.ones(1, 2, requires_grad=True))
        return log, y.requires_grad, z.requires_grad, y.grad_fn is None

    both(prog)


def test_mixing_full_and_legacy_hooks_raises():
    def prog(lib):
        m = _linear(lib)
        m.register_full_backward_hook(lambda *a: None)
        m2 = _linear(lib)
        m2.register_backward_hook(lambda *a: None)
        return (error_of(m.register_backward_hook, lambda *a: None),
                error_of(m2.register_full_backward_hook, lambda *a: None))

    both(prog)


def test_legacy_backward_hook_sees_last_node_and_warns():
    def prog(lib):
        log = []
        nn = lib.nn
        m = _linear(lib)
        m.register_backward_hook(lambda mod, gi, go: log.append((len(gi), _grads(go))))
        x = lib.ones(1, 2, requires_grad=True)

        class Pair(nn.Module):
            def forward(self, a, b):
                return a * b, a + b

        class Nested(nn.Module):
            def forward(self, a):
                return [a * 2]

        class Last(nn.Module):
            def forward(self, a):
                return a * 2

        caught_all = []
        cases = [(m, (x,)), (m, (x * 1,)), (Pair(), (x * 1, x * 1)), (Nested(), (x,)),
                 (Last(), (x * 1,)), (Last(), (x,))]
        for mod, args in cases:
            mod.register_backward_hook(lambda *a: None)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                mod(*args)
            caught_all.append([(w.category.__name__, str(w.message)) for w in caught])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            m(x).sum().backward()
        return log, x.grad, caught_all

    both(prog)


def test_output_view_modified_in_place_is_an_error():
    def prog(lib):
        m = _linear(lib)
        m.register_full_backward_hook(lambda *a: None)
        y = m(lib.ones(1, 2, requires_grad=True))
        return error_of(y.mul_, 2)[0:2]

    both(prog)


def test_hooks_with_double_backward():
    def prog(lib):
        log = []
        m = lib.nn.Sequential(_linear(lib), lib.nn.Tanh()).double()
        m.register_full_backward_hook(
            lambda mod, gi, go: log.append([g.detach().clone() for g in gi if g is not None]))
        x = lib.tensor([[0.1, -0.2]], requires_grad=True, dtype=lib.float64)
        (g,) = lib.autograd.grad(m(x).sum(), x, create_graph=True)
        g.sum().backward()
        return log, g, x.grad, m[0].weight.grad

    both(prog)
