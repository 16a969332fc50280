"""Views and the autograd state they share with their base, compared with torch: views of a
tensor that starts to require grad, retain_grad across in-place ops on views, in-place writes of
outputs, custom Functions writing views in place (NOTE [In-place on a view])."""

from __future__ import annotations

from tests.parity.harness import both, error_of


def _fn_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def test_views_of_a_plain_tensor_follow_it_into_the_graph():
    def prog(lib):
        r = lib.tensor([2.0], requires_grad=True)
        x = lib.ones(3, 4)
        v = x.select(0, 1)
        w = x[1:, 2:]
        ww = w.t()
        before = (v.requires_grad, _fn_name(v), w.requires_grad)
        x.add_(r)
        after = (v.requires_grad, _fn_name(v), w.requires_grad, ww.requires_grad, _fn_name(ww))
        y = (v * 3).sum() + (ww * ww).sum()
        y.backward()
        return before, after, _fn_name(y), r.grad

    both(prog)


def test_views_follow_when_a_view_of_them_is_written():
    def prog(lib):
        r = lib.tensor([2.0, 3.0], requires_grad=True)
        x = lib.zeros(2, 2)
        row0, row1 = x[0], x[1]
        row1.mul_(0).add_(r)  # written through another view
        out = (row0 + row1 * row1).sum()
        out.backward()
        return row0.requires_grad, _fn_name(row0), x.requires_grad, _fn_name(x), r.grad

    both(prog)


def test_var_mean_outputs_written_in_place():
    def prog(lib):
        b = lib.arange(9.0).reshape(3, 3).requires_grad_(True)
        var, mean = lib.var_mean(b, dim=0)
        var.retain_grad()
        mean.retain_grad()
        var.mul_(2)
        (var + mean).sum().backward()
        return b.grad, var.grad, mean.grad, _fn_name(var)

    both(prog)


def test_retain_grad_over_in_place_on_view():
    def prog(lib):
        base = lib.tensor([1.0, 2.0], requires_grad=True).clone()
        view = base[:]
        view2 = base[:]
        view.retain_grad()
        view2.retain_grad()
        view.mul_(2)
        (view + view2 * 3).sum().backward()
        return view.grad, view2.grad, _fn_name(view), _fn_name(view2)

    both(prog)


def _py_add(lib):
    class PyAdd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            x.add_(y)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad, grad * 2

    return PyAdd


def test_custom_function_writes_a_view_in_place():
    def prog(lib):
        a = lib.arange(16.0).reshape(4, 4).requires_grad_(True)
        b = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        x = a.clone()
        add = _py_add(lib)
        out = add.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
        add.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
        (x * x).sum().backward()
        return x, _fn_name(x), _fn_name(out), a.grad, b.grad

    both(prog)


def test_custom_function_writes_a_view_undefined_other_grad():
    def prog(lib):
        class InplaceFunc(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, other):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, None

        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor(1.0, requires_grad=True)
        out = InplaceFunc.apply(a.clone()[:], b)
        out.backward()
        return b.grad, a.grad

    both(prog)


def test_custom_function_view_output_refuses_in_place():
    def prog(lib):
        class MyFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, inp):
                return inp.view_as(inp)

            @staticmethod
            def backward(ctx, grad):
                return grad

        a = lib.ones(1, 2)
        b = lib.ones(1, requires_grad=True)
        view_a = MyFn.apply(a)

        def write():
            view_a.add_(b)

        return error_of(write)

    both(prog)


def test_inference_view_of_view_written_in_normal_mode():
    def prog(lib):
        out = []
        for mode in (lib.no_grad, lib.inference_mode):
            x = lib.zeros(2)
            with mode():
                y = x.view(2)
            y.requires_grad_(True)
            z = y.view(2)

            def write(z=z):
                z.div_(2)

            out.append(error_of(write))
        return out

    both(prog)


def test_double_backward_through_in_place_on_a_view():
    def prog(lib):
        x = lib.tensor([[[[1.0, 3.0], [2.0, -1.0]]]], requires_grad=True)
        net = lib.nn.Sequential(lib.nn.InstanceNorm2d(1), lib.nn.ReLU(True))
        (g,) = lib.autograd.grad(net(x).pow(3), [x], grad_outputs=lib.ones_like(x),
                                 create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), [x])
        a = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        b = a * 1
        b[1:].exp_()
        (ga,) = lib.autograd.grad((b ** 2).sum(), [a], create_graph=True)
        (gga,) = lib.autograd.grad(ga.sum(), [a])
        return g, gg, ga, gga

    both(prog, atol=1e-5)


def test_threshold_in_place_double_backward_node_names():
    def prog(lib):
        inputs = lib.tensor([[-2.0, 0.5], [1.5, -0.5]], requires_grad=True)
        tmp = lib.nn.functional.threshold((inputs + 1).view_as(inputs), 0.0, 0.0, True)
        out = lib.sigmoid(tmp)
        (grads,) = lib.autograd.grad(out, inputs, grad_outputs=lib.ones(2, 2), create_graph=True)
        penalty = grads.sum()
        penalty.backward()
        fn = penalty.grad_fn.next_functions[0][0].next_functions[1][0]
        return fn.name(), _fn_name(tmp), grads, inputs.grad

    both(prog)


def test_in_place_view_ops():
    def prog(lib):
        s = lib.arange(2.0).reshape(1, 2, 1).requires_grad_(True)
        out = []
        for f in (lambda a: a.squeeze_(), lambda a: a.squeeze_(0), lambda a: a.squeeze_((0, 2)),
                  lambda a: a.unsqueeze_(1), lambda a: a.swapdims_(0, 1),
                  lambda a: a.swapaxes_(0, 1), lambda a: a.transpose_(2, 0),
                  lambda a: a.squeeze_().t_()):
            a = s.clone()
            r = f(a)
            (a * lib.arange(1.0, 3.0).reshape(a.shape)).sum().backward()
            out.append((r is a, _fn_name(a), tuple(a.shape), a.stride(), a._version, s.grad))
            s.grad = None
        x = lib.ones(2, 3)
        x.t_()
        out.append((tuple(x.shape), x._version, error_of(x.transpose_, 0, 5)))
        b = s.clone()
        w = b[0]
        w.t_()
        (w * lib.tensor([[1.0, 2.0]])).sum().backward()
        out.append((_fn_name(w), w._version, w._base is b, tuple(w.shape), s.grad))
        a = s.clone()
        v = a[0]
        a.transpose_(0, 1)
        out.append((_fn_name(a), _fn_name(v), error_of(s.t_)))
        return out

    both(prog)


def test_inference_views_and_in_place_view_ops():
    def prog(lib):
        out = []
        for requires_grad in (True, False):
            a = lib.ones(1, 2, 3, requires_grad=requires_grad).clone()
            with lib.inference_mode():
                direct = a.view_as(a)
                indirect = a.view(-1)
            out.append(error_of(direct.transpose_, 0, 1))
            a.transpose_(0, 1)
            out.append(error_of(_fn_name, indirect))
        return out

    both(prog)


def test_versions_and_strides_of_composite_results():
    def prog(lib):
        a = lib.arange(3.0)
        b = lib.arange(12.0).reshape(3, 4)
        mv = lib.matmul(a, b)
        ag = a.clone().requires_grad_(True)
        mg = lib.matmul(ag, b)
        mg.sum().backward()
        clones = [lib.empty(2, 1, 3).transpose(0, 1).clone().stride(),
                  lib.empty(1, 3).t().clone().stride(),
                  lib.empty(3, 1).expand(3, 2).clone().stride(),
                  lib.empty(3, 4)[:, ::2].clone().stride(),
                  lib.empty(4, 1, 2).permute(2, 1, 0).clone().stride()]
        return mv, mv._version, mg._version, _fn_name(mg), ag.grad, clones

    both(prog)


def test_force_original_view_tracking():
    def prog(lib):
        def f(x):
            out = x.clone().view(-1)
            out.add_(1)
            return _fn_name(out)

        x = lib.ones(2, 2, requires_grad=True)
        seen = []
        with lib.autograd._force_original_view_tracking(True):
            seen.append((f(x), lib.autograd.is_view_replay_enabled()))
        seen.append((f(x), lib.autograd.is_view_replay_enabled()))
        with lib.autograd._force_original_view_tracking(False):
            lib.autograd._force_original_view_tracking(True)
            seen.append((f(x), lib.autograd.is_view_replay_enabled()))
        seen.append(lib.autograd.is_view_replay_enabled())
        lib.autograd._force_original_view_tracking(True)
        seen.append((f(x), lib.autograd.is_view_replay_enabled()))
        lib.autograd._force_original_view_tracking(False)
        seen.append((f(x), lib.autograd.is_view_replay_enabled()))
        return seen

    both(prog)


def test_custom_function_view_made_under_no_grad_refuses_in_place():
    def prog(lib):
        class Alias(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:]

            @staticmethod
            def backward(ctx, gx):
                return gx

        inp = lib.rand(2, requires_grad=True)
        with lib.no_grad():
            output = Alias.apply(inp)
            expected = inp[:]
        leaf_view = inp[:]
        return (output.requires_grad, expected.requires_grad, error_of(output.zero_),
                error_of(leaf_view.zero_))

    both(prog)
