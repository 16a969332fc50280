"""set_ on a leaf under no_grad: the leaf's next backward gets a new AccumulateGrad (in its new
shape); graphs built before keep the old node."""

from __future__ import annotations

from tests.parity.harness import both, error_of


def test_set_gives_leaf_a_new_accumulator():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        edge = lib.autograd.graph.get_gradient_edge(x)
        out = x * 3
        with lib.no_grad():
            x.set_(lib.tensor([5.0, 6.0]))
        new_edge = lib.autograd.graph.get_gradient_edge(x)
        err = error_of(lib.autograd.grad, out.sum(), x, retain_graph=True)
        (through_old,) = lib.autograd.grad(out.sum(), edge)
        return new_edge.node is edge.node, err, through_old

    same, err, grad = both(prog)
    assert same is False and err[0] == "raised" and grad.tolist() == [3.0, 3.0]


def test_set_storage_and_empty_also_reset():
    def prog(lib):
        results = []
        for how in ("storage", "empty"):
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            edge = lib.autograd.graph.get_gradient_edge(x)
            with lib.no_grad():
                if how == "storage":
                    x.set_(lib.tensor([3.0, 4.0]).untyped_storage(), 0, (2,))
                else:
                    x.set_()
            results.append(lib.autograd.graph.get_gradient_edge(x).node is edge.node)
        return results

    assert both(prog) == [False, False]


def test_shape_preserving_metadata_ops_keep_accumulator():
    def prog(lib):
        x = lib.rand(2, 2, requires_grad=True)
        edge = lib.autograd.graph.get_gradient_edge(x)
        with lib.no_grad():
            x.t_()
        return lib.autograd.graph.get_gradient_edge(x).node is edge.node

    assert both(prog) is True


def test_parameter_shrunk_by_set_trains():
    def prog(lib):
        p = lib.nn.Parameter(lib.arange(16.0, dtype=lib.float64))
        grads = []
        for _ in range(3):
            with lib.no_grad():
                p.set_(p[1:])
                p.grad = None
            (lib.cat((p, p)) * lib.arange(2.0 * p.numel(), dtype=lib.float64)).sum().backward()
            grads.append(p.grad)
        return grads, p

    both(prog)
