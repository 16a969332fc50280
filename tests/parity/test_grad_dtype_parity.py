"""Seed 000, torch 2.13's grad_dtype (NOTE [grad_dtype]): the dtype a leaf's .grad must have,
compared with torch: defaults, casting of gradients from the graph (seen by hooks, .grad and
autograd.grad), assignment checks, None for any dtype, and its errors."""

from __future__ import annotations

from tests.parity.harness import both, error_of


def test_default_is_the_tensors_dtype():
    def prog(lib):
        return [lib.ones(2, dtype=d, requires_grad=True).grad_dtype
                for d in (lib.float32, lib.bfloat16, lib.float64)] + [lib.ones(2).grad_dtype]

    both(prog)


def test_gradients_from_the_graph_are_cast_and_accumulate():
    def prog(lib):
        p = lib.ones(3, dtype=lib.bfloat16, requires_grad=True)
        p.grad_dtype = lib.float32
        (p * 2).sum().backward()
        first = p.grad.clone()
        (p * 2).sum().backward()
        return p.grad_dtype, first, p.grad

    both(prog)


def test_hooks_and_autograd_grad_see_the_cast_gradient():
    def prog(lib):
        v = lib.ones(2, requires_grad=True)
        v.grad_dtype = lib.float64
        seen = []
        v.register_hook(lambda g: seen.append(str(g.dtype)))
        v.register_post_accumulate_grad_hook(lambda t: seen.append(("post", str(t.grad.dtype))))
        (v * 3).sum().backward()
        return seen, v.grad, lib.autograd.grad((v * 3).sum(), v)[0]

    both(prog)


def test_setting_it_after_the_graph_is_built_still_applies():
    def prog(lib):
        p = lib.ones(2, requires_grad=True)
        y = (p * 2).sum()
        p.grad_dtype = lib.float64
        y.backward()
        return p.grad

    both(prog)


def test_a_narrow_grad_dtype_overflows_as_torch():
    def prog(lib):
        w = lib.ones(2, requires_grad=True)
        w.grad_dtype = lib.float16
        (w * 1e5).sum().backward()
        return w.grad

    both(prog)


def test_assignment_follows_grad_dtype():
    def prog(lib):
        q = lib.ones(3, requires_grad=True)
        default = error_of(setattr, q, "grad", lib.ones(3, dtype=lib.float64))
        q.grad_dtype = None
        q.grad = lib.ones(3, dtype=lib.float64)  # any dtype now
        (q * 2).sum().backward()  # the graph's gradient (float32) is added into it
        kept = q.grad
        q.grad_dtype = lib.float64
        narrow = error_of(setattr, q, "grad", lib.ones(3))
        return default, kept, narrow

    both(prog)


def test_grad_dtype_none_keeps_the_leafs_dtype_for_graph_gradients():
    def prog(lib):
        s = lib.ones(2, dtype=lib.bfloat16, requires_grad=True)
        s.grad_dtype = None
        (s.float() * 2).sum().backward()  # ToCopyBackward0 returns bfloat16
        through_graph = str(s.grad.dtype)
        r = lib.ones(2, dtype=lib.bfloat16, requires_grad=True)
        r.grad_dtype = None
        r.backward(lib.ones(2))  # nothing casts at the leaf: float32 stays
        return s.grad_dtype, through_graph, str(r.grad.dtype), r.grad

    both(prog)


def test_errors_are_torchs():
    def prog(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        return (error_of(getattr, y, "grad_dtype"), error_of(setattr, y, "grad_dtype", lib.float64),
                error_of(setattr, x, "grad_dtype", "float"), x.grad_dtype)

    both(prog)


def test_a_cast_gradient_is_stolen_as_torch_steals_it():
    def prog(lib):
        p = lib.ones(3, dtype=lib.bfloat16, requires_grad=True)
        p.grad_dtype = lib.float32
        seen = []
        p.register_hook(lambda g: seen.append(g.data_ptr()))
        (p * 2).sum().backward()
        return p.grad.data_ptr() == seen[0], str(p.grad.dtype)

    both(prog)
