"""torch.autograd._functions.Resize, the legacy reshaping Function."""

from __future__ import annotations

from tests.parity.harness import both, error_of


def test_resize_values_grads_and_node():
    def prog(lib):
        import importlib

        functions = importlib.import_module(lib.__name__ + ".autograd._functions")
        x = lib.arange(6.0, requires_grad=True)
        y = x.clone()
        r = functions.Resize.apply(y, (3, 2))
        (r * lib.arange(6.0).view(3, 2)).sum().backward()
        shares = r.data_ptr() == y.data_ptr()
        t = x.detach().view(2, 3).t()
        r2 = functions.Resize.apply(t, [6])
        return (r, x.grad, type(r.grad_fn).__name__, shares, r2, r2.is_contiguous(),
                r2.data_ptr() == t.data_ptr())

    both(prog)


def test_resize_wrong_numel_raises():
    def prog(lib):
        import importlib

        functions = importlib.import_module(lib.__name__ + ".autograd._functions")
        return error_of(functions.Resize.apply, lib.zeros(2, 3), (4, 2))

    assert both(prog)[0] == "raised"


def test_grad_to_edge_of_resize_output():
    def prog(lib):
        import importlib

        functions = importlib.import_module(lib.__name__ + ".autograd._functions")
        x = functions.Resize.apply(lib.rand(2, requires_grad=True).clone(), (2,))
        out = x.clone() * 2
        edge = lib.autograd.graph.get_gradient_edge(x)
        return lib.autograd.grad(out.sum(), edge, retain_graph=True), lib.autograd.grad(
            out.sum(), x)

    both(prog)
