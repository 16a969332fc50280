"""Tensor._backward_hooks compared with torch: the dict itself, what assigning one does (it
replaces a leaf's hooks, and the hooks in it run, including ones added later), None clears."""

from __future__ import annotations

from collections import OrderedDict

from tests.parity.harness import both, error_of


def test_assigned_dict_replaces_a_leafs_hooks_and_runs():
    def prog(lib):
        log = []
        a = lib.ones(2, requires_grad=True)
        a.register_hook(lambda g: log.append("registered"))
        first = type(a._backward_hooks).__name__, len(a._backward_hooks)
        d = OrderedDict()
        d["k"] = lambda g: (log.append("assigned"), g * 3)[1]
        a._backward_hooks = d
        same = a._backward_hooks is d
        (a * 2).sum().backward()
        run1, grad1 = list(log), a.grad.clone()
        a.register_hook(lambda g: log.append("added"))  # goes into the assigned dict
        a._backward_hooks["m"] = lambda g: log.append("by key")
        log.clear()
        a.grad = None
        (a * 2).sum().backward()
        run2, grad2 = list(log), a.grad.clone()
        a._backward_hooks = None
        log.clear()
        a.grad = None
        (a * 2).sum().backward()
        return first, same, run1, grad1, run2, grad2, log, a.grad, a._backward_hooks

    both(prog)


def test_hooks_on_tensors_that_do_not_require_grad_never_run():
    def prog(lib):
        x, y = lib.randn(3), lib.randn(3)
        z = lib.randn(3, requires_grad=True)
        a = x + y
        b = a + z

        def error(grad):
            raise RuntimeError("must not run")

        for t in (a, x, y):
            t._backward_hooks = OrderedDict()
            t._backward_hooks["test"] = error
        b.backward(lib.ones(3))
        return z.grad, a._backward_hooks is not None, list(x._backward_hooks)

    both(prog)


def test_removed_hooks_leave_an_empty_dict_and_deleting_is_refused():
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        before = a._backward_hooks
        h = a.register_hook(lambda g: g)
        h.remove()

        def delete():
            del a._backward_hooks

        return before, dict(a._backward_hooks), error_of(delete)

    both(prog)
