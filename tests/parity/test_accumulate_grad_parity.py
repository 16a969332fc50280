"""Seed 000: every branch of AccumulateGrad, compared with torch."""

from __future__ import annotations

import warnings

from tests.parity.harness import both, error_of


def test_fresh_gradient_is_stolen():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(g.data_ptr()))
        (x * 2).sum().backward()
        return x.grad.data_ptr() == seen[0], x.grad

    both(prog)


def test_user_gradient_is_copied():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        g = lib.ones(3)
        x.backward(g)
        g.add_(5)  # must not change x.grad
        return x.grad.data_ptr() == g.data_ptr(), x.grad

    both(prog)


def test_gradient_a_hook_kept_is_not_stolen():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        kept = []
        x.register_hook(lambda g: kept.append(g))
        (x * 2).sum().backward()
        return x.grad.data_ptr() == kept[0].data_ptr()

    both(prog)


def test_layout_contract_dense_param_gets_param_strides():
    def prog(lib):
        x = lib.ones(4, 3).t().detach().requires_grad_()
        (x * 2).sum().backward()
        y = lib.ones(2, 3, 4).permute(2, 0, 1).detach().requires_grad_()
        (y * y).sum().backward()
        return x.stride(), x.grad.stride(), y.stride(), y.grad.stride(), x.grad

    both(prog)


def test_layout_contract_non_dense_param_gets_row_major():
    def prog(lib):
        x = lib.ones(4, 6)[:, ::2].detach().requires_grad_()
        (x * 2).sum().backward()
        return x.stride(), x.grad.stride()

    both(prog)


def test_second_backward_accumulates_in_place():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        (x * 2).sum().backward()
        g1 = x.grad
        ptr, v = g1.data_ptr(), g1._version
        (x * 3).sum().backward()
        return x.grad is g1, x.grad.data_ptr() == ptr, v, x.grad._version, x.grad

    both(prog)


def test_create_graph_accumulates_out_of_place():
    def prog(lib):
        import warnings

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (x * x).sum().backward(create_graph=True)
            first = type(x.grad.grad_fn).__name__
            g1 = x.grad
            (x * x * x).sum().backward(create_graph=True)
        return first, type(x.grad.grad_fn).__name__, x.grad is g1, x.grad

    both(prog)


def test_layout_warning_text():
    def prog(lib):
        x = lib.ones(3, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x.grad = lib.zeros(6)[::2]
            (x * 2).sum().backward()
        msgs = [str(m.message).split(" (Triggered internally")[0] for m in w
                if "layout contract" in str(m.message)]
        return msgs

    both(prog)


def test_hooks_read_lazily_and_post_accumulate_hook():
    def prog(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2  # the AccumulateGrad node exists before the hooks are registered
        h1 = x.register_hook(lambda g: log.append(("pre", g.tolist())) or g * 10)
        x.register_post_accumulate_grad_hook(lambda p: log.append(("post", p.grad.tolist())))
        y.sum().backward()
        h1.remove()
        (x * 2).sum().backward()
        return log, x.grad

    both(prog)


def test_post_accumulate_hook_on_non_leaf_errors():
    def prog(lib):
        x = lib.tensor([1.0], requires_grad=True)
        return error_of(lambda: (x * 2).register_post_accumulate_grad_hook(lambda p: None))

    both(prog)


def test_accumulate_grad_node_is_reused_while_alive():
    def prog(lib):
        x = lib.tensor([1.0], requires_grad=True)
        a = (x * 2).grad_fn.next_functions[0][0]
        b = (x * 3).grad_fn.next_functions[0][0]
        return a is b, a.name(), a.variable is x, type(a).__name__

    both(prog)


def test_weight_gradient_of_linear_is_kept_without_copy():
    # F.linear's weight gradient arrives as the transpose of a transposed product: retrograd
    # keeps that memory (nothing else references it) and it has the weight's layout
    import retrograd

    seen = []
    w = retrograd.randn(16, 8, requires_grad=True)
    w.register_hook(lambda g: seen.append(g.data_ptr()))
    retrograd.nn.functional.linear(retrograd.randn(4, 8), w).sum().backward()
    assert w.grad.data_ptr() == seen[0]
    assert w.grad.stride() == (8, 1)


def test_gradient_that_views_a_live_tensor_is_copied():
    import numpy as np

    import retrograd

    big = retrograd.randn(6)

    class SliceGrad(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return big[:3]

    p = retrograd.randn(3, requires_grad=True)
    SliceGrad.apply(p).sum().backward()
    assert not np.shares_memory(p.grad.numpy(), big.numpy())
    big.add_(1)
    assert not np.allclose(p.grad.numpy(), big.numpy()[:3])
