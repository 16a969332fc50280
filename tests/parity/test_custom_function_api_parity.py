"""Custom Functions against torch: undefined gradients, non-Tensor outputs, setup_context with
defaults, legacy use, once_differentiable's graph, mark_dirty on views, calling grad_fns."""

from __future__ import annotations

import warnings

from tests.parity.harness import both, error_of


def graph_desc(fn) -> str:
    if fn is None:
        return "None"
    return type(fn).__name__ + "(" + ", ".join(graph_desc(nf) for nf, _ in fn.next_functions) \
        + ")"


def test_backward_returning_none_leaves_grad_none():
    def prog(lib):
        class Drop(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return None

        x = lib.ones(2, requires_grad=True)
        out = []
        Drop.apply(x).sum().backward()
        out.append(x.grad)
        Drop.apply(x ** 2).sum().backward()
        out.append(x.grad)
        Drop.apply((x.exp() * 3).sin()).sum().backward()
        out.append(x.grad)
        out.append(lib.autograd.grad(Drop.apply(x ** 2).sum(), x, allow_unused=True))
        # an op node with some gradients defined still materializes the others
        a, b = (x * 1).unbind(0)
        (Drop.apply(a) + b).backward()
        out.append(x.grad)
        return out

    both(prog)


def test_non_tensor_outputs_receive_none():
    def prog(lib):
        seen = []

        class Mixed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t, scale):
                return scale, t * scale, None, "tag", t.clone()

            @staticmethod
            def backward(ctx, *grads):
                seen.extend(g if g is None else ("tensor", g) for g in grads)
                return grads[1] * 2 + grads[4], None

        t = lib.ones(3, requires_grad=True)
        res = Mixed.apply(t, 3)
        res[1].sum().backward()
        return res[0], res[2], res[3], seen, t.grad, res[1].grad_fn.name()

    both(prog)


def test_materialize_non_diff_grads_flag():
    def prog(lib):
        seen = []

        class Func(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, flag):
                out0, out1 = x.clone(), x.clone()
                ctx.mark_non_differentiable(out1)
                ctx._materialize_non_diff_grads = flag
                return out0, out1

            @staticmethod
            def backward(ctx, g0, g1):
                seen.append(g1)
                return g0, None

        for flag in (True, False):
            a = lib.tensor(1.0, requires_grad=True)
            Func.apply(a, flag)[0].backward()
        return seen

    both(prog)


def test_setup_context_with_defaulted_forward_arguments():
    def prog(lib):
        seen = []

        class Pow(lib.autograd.Function):
            @staticmethod
            def forward(x, y=3):
                return lib.pow(x, y)

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, y = inputs
                seen.append(len(inputs))
                ctx.save_for_backward(x)
                ctx.y = y

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * ctx.y * lib.pow(x, ctx.y - 1), None

        class PowCls(lib.autograd.Function):
            @classmethod
            def forward(cls, x, y=2):
                return lib.pow(x, y)

            @classmethod
            def setup_context(cls, ctx, inputs, output):
                ctx.y = inputs[1]
                ctx.save_for_backward(inputs[0])

            @classmethod
            def backward(cls, ctx, g):
                (x,) = ctx.saved_tensors
                return g * ctx.y * lib.pow(x, ctx.y - 1), None

        x = lib.tensor(2.0, requires_grad=True)
        out = [Pow.apply(x), lib.autograd.grad(Pow.apply(x), x), Pow.apply(x, y=2),
               lib.autograd.grad(PowCls.apply(x), x), error_of(Pow.apply, x, 1, 2)]
        return out, seen

    both(prog)


def test_legacy_function_and_backward_vjp_rules():
    def prog(lib):
        class Legacy(lib.autograd.Function):
            def forward(self, x):
                return x

        class Both(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vjp(ctx, g):
                return g

        class OnlyVjp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def vjp(ctx, g):
                return g * 3

        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            legacy = error_of(lambda: Legacy()(x))
        both_err = error_of(lambda: Both.apply(x).sum().backward())
        OnlyVjp.apply(x).sum().backward()
        return (legacy, both_err, x.grad, OnlyVjp.generate_vmap_rule,
                error_of(OnlyVjp.vmap, None, None))

    both(prog)


def test_inplace_function():
    def prog(lib):
        from importlib import import_module

        InplaceFunction = import_module(lib.__name__ + ".autograd.function").InplaceFunction

        class Inplace(InplaceFunction):
            @staticmethod
            def forward(ctx, a, b):
                ctx.mark_dirty(a)
                return a.add_(b), b + 2

            @staticmethod
            def backward(ctx, grad_a, grad_b):
                return grad_a, grad_a + grad_b

        x = lib.zeros(2, 2)
        y = lib.ones(2, 2, requires_grad=True)
        q, p = Inplace.apply(x, y)
        q.sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inst = Inplace(True)
        return q is x, q.grad_fn.name(), q.requires_grad, y.grad, inst.inplace

    both(prog)


def test_once_differentiable_graph_matches_torch():
    def prog(lib):
        class MyFunction(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t1, k, t2):
                ctx.k = k
                ctx.save_for_backward(t1, t2)
                return t1 + k * t2 + t1 * t2

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                t1, t2 = ctx.saved_tensors
                return g + g * t2, None, g * ctx.k + g * t1

        x = lib.ones(2, 2, requires_grad=True)
        y = lib.ones(2, 2, requires_grad=True) * 1
        go = lib.ones((), requires_grad=True)
        r = MyFunction.apply(x, 2, y)
        gx, gy = lib.autograd.grad(r.sum(), (x, y), go, create_graph=True)
        again = error_of(lambda: lib.autograd.grad(gx.sum(), go))
        again2 = error_of(lambda: gx.sum().backward())
        return graph_desc(gx.grad_fn), graph_desc(gy.grad_fn), gx, again, again2

    both(prog)


def test_mark_dirty_on_views_goes_through_copy_slices():
    def prog(lib):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        out = []
        a = lib.ones(4, requires_grad=True)
        b = a.clone()
        o1 = Double.apply(b.narrow(0, 0, 3))
        o2 = Double.apply(b.narrow(0, 1, 3))
        out += [o1.grad_fn.name(), o2.grad_fn.name(), b.grad_fn.name(), b]
        b.sum().backward()
        out.append(a.grad)
        a.grad = None
        c = Double.apply(a.clone()[:])
        c.sum().backward()
        out += [c, a.grad]
        a.grad = None
        base = a.clone()
        v = base[1:3]
        Double.apply(v)
        v.mul_(3)
        out.append([None if f is None else f.name() for f, _ in base.grad_fn.next_functions])
        base.sum().backward()
        out.append(a.grad)
        return out

    both(prog)


def test_mark_dirty_errors_and_warning():
    def prog(lib):
        class NotReturned(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                a.add_(b)
                ctx.mark_dirty(a)
                return a.clone(), a + b

            @staticmethod
            def backward(ctx, ga, gab):
                return ga, gab

        class ViewTwoOutputs(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                a.add_(b)
                ctx.mark_dirty(a)
                return a, a + b

            @staticmethod
            def backward(ctx, ga, gab):
                return ga, gab

        class NotInput(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                c = 3 * a
                ctx.mark_dirty(c)
                return c

            @staticmethod
            def backward(ctx, g):
                return 3 * g

        a = lib.ones(2, requires_grad=True)
        errs = [error_of(NotReturned.apply, a.clone(), a),
                error_of(ViewTwoOutputs.apply, a.clone().view_as(a), a)]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            NotInput.apply(a.clone())
        # torch appends where in its C++ source the warning was raised
        msgs = [str(x.message).split(" (Triggered internally")[0] for x in w]
        return errs, msgs

    both(prog)


def test_views_made_in_forward_refuse_inplace():
    def prog(lib):
        class One(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.narrow(0, 0, 2)

            @staticmethod
            def backward(ctx, g):
                return g

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                v = a.narrow(0, 0, 2)
                return v, v + b

            @staticmethod
            def backward(ctx, g1, g2):
                return g1 + g2, g2

        a = lib.ones(2, requires_grad=True).clone()
        b = lib.ones(2, requires_grad=True)
        t = One.apply(a)
        t1, _ = Two.apply(a, b)
        e1 = error_of(lambda: t.add_(1))
        e2 = error_of(lambda: t1.add_(1))
        return t._base is a, t.grad_fn.name(), e1, e2

    both(prog)


def test_calling_grad_fns_directly():
    def prog(lib):
        x = lib.ones(1, requires_grad=True)
        y = x ** 2

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g

        f = F.apply(x)
        return (error_of(y.grad_fn, x.detach(), x.detach()), error_of(y.grad_fn),
                y.grad_fn(x.detach()), y.grad_fn(None), error_of(f.grad_fn, lib.ones(1)))

    both(prog)


def test_backward_result_checks_and_saved_variables_warning():
    def prog(lib):
        class BadType(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return 3

        class Saved(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * 2

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_variables
                return g * a

        a = lib.ones(2, requires_grad=True)
        err = error_of(lambda: BadType.apply(a).sum().backward())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            Saved.apply(a).sum().backward()
        return err, [(type(x.message).__name__, str(x.message)) for x in w], a.grad

    both(prog)
