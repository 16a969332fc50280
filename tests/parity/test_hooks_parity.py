"""Hooks against torch: what a hook may return, the errors when it returns something else, how
often and in which order hooks run, and post-accumulate-grad hooks."""

from __future__ import annotations

import pytest

from tests.parity.harness import both, error_of

# --- a hook's result must match the gradient it was given --------------------------------------


def _leaf(lib):
    return lib.ones(2, requires_grad=True)


def _on_leaf(lib, hook):
    a = _leaf(lib)
    a.register_hook(hook)
    return a, a.exp().sum()


def _on_nonleaf(lib, hook):
    a = _leaf(lib)
    b = a.exp()
    b.register_hook(hook)
    return a, b.sum()


def _on_retained(lib, hook):
    a = _leaf(lib)
    b = a.exp()
    b.retain_grad()
    b.register_hook(hook)
    return a, b.sum()


def _node_pre(lib, hook):
    a = _leaf(lib)
    b = a.exp()
    b.grad_fn.register_prehook(hook)
    return a, b.sum()


def _node_post(lib, hook):
    a = _leaf(lib)
    b = a.exp()
    b.grad_fn.register_hook(lambda gi, go: hook(gi))
    return a, b.sum()


def _acc_pre(lib, hook):
    a = _leaf(lib)
    b = a.exp()
    b.grad_fn.next_functions[0][0].register_prehook(hook)
    return a, b.sum()


def _ones(lib, *shape):
    return lib.ones(*shape)


def bigger(g):
    return g.expand(3, 2)


def smaller(g):
    return g[:1]


def wider(g):
    return g.double()


def as_list(g):
    return [g]


def as_float(g):
    return 1.0


def as_str(g):
    return "grad"


class CallableHook:
    def __call__(self, g):
        return g.expand(3, 2)


TENSOR_HOOK_RESULTS = {
    "bigger": bigger, "smaller": smaller, "wider": wider, "list": as_list, "float": as_float,
    "str": as_str, "nameless": CallableHook(),
}


@pytest.mark.parametrize("where", ["leaf", "nonleaf", "retained"])
@pytest.mark.parametrize("result", sorted(TENSOR_HOOK_RESULTS))
def test_tensor_hook_result_is_checked_and_nothing_is_written(where, result):
    setup = {"leaf": _on_leaf, "nonleaf": _on_nonleaf, "retained": _on_retained}[where]

    def prog(lib):
        a, loss = setup(lib, TENSOR_HOOK_RESULTS[result])
        return error_of(loss.backward), a.grad

    both(prog)


def test_tensor_hook_result_is_checked_under_grad():
    def prog(lib):
        a = _leaf(lib)
        b = a.exp()
        b.register_hook(bigger)
        a.register_hook(smaller)
        return (error_of(lib.autograd.grad, b.sum(), b, retain_graph=True),
                error_of(lib.autograd.grad, a.exp().sum(), a))

    both(prog)


def test_the_hook_that_changed_the_value_is_named():
    def prog(lib):
        def first(g):
            return g * 2

        def second(g):
            return lib.ones(3)

        a, loss = _on_nonleaf(lib, first)
        a.exp().register_hook(second)
        b = a.exp()
        b.register_hook(first)
        b.register_hook(second)
        return error_of(b.sum().backward), a.grad

    both(prog)


def test_tensor_hook_on_a_slot_without_gradient_cannot_fill_it():
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        x, y = (a * 1).split(1)
        seen = []

        def hook(g):
            seen.append(g is None)
            return lib.ones(1)

        y.register_hook(hook)
        return error_of(x.sum().backward), seen, a.grad

    both(prog)


def pre_bigger(gs):
    return (gs[0].expand(3, 2),)


def pre_wider(gs):
    return (gs[0].double(),)


def pre_two(gs):
    return (gs[0], gs[0])


def pre_list(gs):
    return [gs[0]]


def pre_tensor(gs):
    return gs[0]


def pre_float_in_tuple(gs):
    return (1.0,)


def pre_scaled(gs):
    return (gs[0] * 3,)


NODE_HOOK_RESULTS = {
    "bigger": pre_bigger, "wider": pre_wider, "two": pre_two, "list": pre_list,
    "tensor": pre_tensor, "float_in_tuple": pre_float_in_tuple, "scaled": pre_scaled,
}


@pytest.mark.parametrize("where", ["pre", "post", "acc_pre"])
@pytest.mark.parametrize("result", sorted(NODE_HOOK_RESULTS))
def test_node_hook_result_is_checked(where, result):
    setup = {"pre": _node_pre, "post": _node_post, "acc_pre": _acc_pre}[where]

    def prog(lib):
        a, loss = setup(lib, NODE_HOOK_RESULTS[result])
        return error_of(loss.backward), a.grad

    both(prog)


def test_post_hook_cannot_fill_a_slot_without_gradient():
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        c = lib.ones(2)
        seen = []

        def post(gi, go):
            seen.append([g is None for g in gi])
            return (gi[0], lib.ones(2))

        b = a * c
        b.grad_fn.register_hook(post)
        return error_of(b.sum().backward), seen, a.grad

    both(prog)


def test_accumulate_grad_post_hook_must_return_nothing():
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        b = a.exp()
        b.grad_fn.next_functions[0][0].register_hook(lambda gi, go: (lib.ones(2),))
        return error_of(b.sum().backward), a.grad

    both(prog)


# --- post-accumulate-grad hooks ------------------------------------------------------------------

POST_ACC_RESULTS = {
    "grad": lambda lib, t: t.grad,
    "itself": lambda lib, t: t,
    "detached": lambda lib, t: t.detach(),
    "other_shape": lambda lib, t: lib.ones(3),
    "other_dtype": lambda lib, t: t.double(),
    "str": lambda lib, t: "x",
    "int": lambda lib, t: 1,
}


@pytest.mark.parametrize("result", sorted(POST_ACC_RESULTS))
def test_post_accumulate_grad_hook_must_return_none(result):
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        a.register_post_accumulate_grad_hook(lambda t: POST_ACC_RESULTS[result](lib, t))
        return error_of(a.sum().backward), a.grad

    both(prog)


def test_accumulate_grad_post_hook_sees_the_gradient():
    def prog(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []

        def post(gi, go):
            seen.append((len(gi), [g.clone() for g in go]))

        b = a.clone()
        acc = b.grad_fn.next_functions[0][0]
        acc.register_hook(post)
        a.register_hook(lambda g: g * 2)
        b.sum().backward()
        return seen, a.grad

    both(prog)


def test_hook_order_around_accumulate_grad():
    def prog(lib):
        t = lib.ones(3, requires_grad=True)
        acc = t.view_as(t).grad_fn.next_functions[0][0]
        t.register_hook(lambda g: g.sub(2.0))
        acc.register_prehook(lambda go: (go[0].div(5.0),))

        def post_acc(x):
            x.grad.add_(0.5)

        t.register_post_accumulate_grad_hook(post_acc)

        def post(gi, go):
            t.grad = go[0].mul(10)

        acc.register_hook(post)
        t.sum().backward()
        return t.grad

    both(prog)


# --- how often hooks run -------------------------------------------------------------------------


@pytest.mark.parametrize("call", ["grad_b", "grad_ab", "backward"])
def test_hook_counts_when_an_input_is_also_on_the_path(call):
    def prog(lib):
        a = lib.tensor(1.0, requires_grad=True)
        b = a * 2
        c = b * 2
        log = []
        a.register_hook(lambda g: log.append("a"))
        b.register_hook(lambda g: log.append("b") or g * 10)
        acc = b.grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go: log.append("acc post"))
        acc.register_prehook(lambda go: log.append("acc pre"))
        b.grad_fn.register_hook(lambda gi, go: log.append("b post"))
        b.grad_fn.register_prehook(lambda go: log.append("b pre"))
        b.retain_grad()
        if call == "grad_b":
            out = lib.autograd.grad(c, inputs=(b,), retain_graph=True)
        elif call == "grad_ab":
            out = lib.autograd.grad(c, inputs=(a, b), retain_graph=True)
        else:
            out = c.backward(retain_graph=True)
        return out, log, b.grad, a.grad

    both(prog)


def test_post_accumulate_hooks_of_leaves_fed_by_one_cat_run_in_a_fixed_order():
    def prog(lib):
        leaves = [lib.ones(2, requires_grad=True) for _ in range(3)]
        order = []
        for i, leaf in enumerate(leaves):
            leaf.register_post_accumulate_grad_hook(lambda t, i=i: order.append(i))
        for _ in range(5):
            lib.cat(leaves).sum().backward()
        return order

    both(prog)


# --- saved-tensor hooks ------------------------------------------------------------------------


def test_hooks_entered_during_backward_do_not_outlive_it():
    def prog(lib):
        import gc
        import weakref

        def scope():
            def unpack(x):
                weak_ctx().__enter__()
                return x

            ctx = lib.autograd.graph.saved_tensors_hooks(lambda x: x, unpack)
            weak_ctx = weakref.ref(ctx)
            x = lib.randn(3, 3, requires_grad=True)
            with ctx:
                x.sin().sum().backward()
            return weakref.ref(unpack)

        gc.disable()
        try:
            ref = scope()
            leaked = ref() is not None
        finally:
            gc.enable()
        # the stack is empty again: a saved tensor can take hooks of its own
        y = lib.tensor(1.0, requires_grad=True).exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda x: x, lambda x: x)
        return leaked

    both(prog)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (1,)])
@pytest.mark.parametrize("fn", ["exp", "mul"])
def test_unpack_hook_returning_another_shape(shape, fn):
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: lib.ones(*shape)):
            b = a.exp() if fn == "exp" else a * a
        return error_of(b.sum().backward), a.grad

    both(prog)


@pytest.mark.parametrize("op", ["mul_", "exp_", "view_mul_"])
def test_inplace_op_whose_pack_hook_raises_leaves_the_tensor_alone(op):
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        c = lib.full((2,), 3.0, requires_grad=True)
        b = a * 1

        def pack(x):
            raise ValueError("no")

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
            if op == "mul_":
                err = error_of(b.mul_, c)
            elif op == "exp_":
                err = error_of(b.exp_)
            else:
                err = error_of(b[:1].mul_, c[:1])
        state = (b.detach().clone(), b.grad_fn.name(), b._version)
        b.sum().backward()
        return err, state, a.grad, c.grad

    ours = prog(__import__("retrograd"))
    assert ours[0] == ("raised", "ValueError", "no")
    assert ours[1][1:] == ("MulBackward0", 0)
    assert ours[1][0].tolist() == [1.0, 1.0]
    assert ours[2].tolist() == [1.0, 1.0] and ours[3] is None
    if op == "mul_":  # torch packs `other` before writing here, so it agrees
        both(prog)


@pytest.mark.parametrize("how", ["backward", "retain", "grad"])
def test_saved_tensor_detached_in_place(how):
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        b = a * 2
        d = b * b if how == "retain" else b.sin()
        if how == "retain":
            d.sum().backward(retain_graph=True)
        b.detach_()
        if how == "grad":
            return error_of(lib.autograd.grad, d.sum(), a)
        return error_of(d.sum().backward), a.grad

    both(prog)


# --- threads -------------------------------------------------------------------------------------


def _hooks_meet_across_threads(lib, shared_leaf: bool):
    """Two threads run backward; each leaf's post-accumulate hook waits for the other thread's
    hook. Returns the errors the threads saw (a timeout means a lock was held around a hook)."""
    import threading

    barrier = threading.Barrier(2, timeout=10)
    leaves = [lib.ones(2, requires_grad=True)]
    leaves.append(leaves[0] if shared_leaf else lib.ones(2, requires_grad=True))
    met = []

    def hook(t):
        barrier.wait()
        met.append(True)

    for leaf in set(leaves):
        leaf.register_post_accumulate_grad_hook(hook)
    errors = []

    def work(leaf):
        try:
            (leaf * 3).sum().backward()
        except Exception as e:  # noqa: BLE001 - reported to the test
            errors.append(type(e).__name__)

    threads = [threading.Thread(target=work, args=(leaf,)) for leaf in leaves]
    for th in threads:
        th.start()
    for th in threads:
        th.join(30)
    return errors, len(met), [leaf.grad for leaf in leaves]


def test_post_accumulate_hooks_of_two_threads_can_wait_for_each_other():
    both(_hooks_meet_across_threads, False)


def test_post_accumulate_hooks_on_one_leaf_can_wait_for_each_other():
    """retrograd holds no lock while a hook runs, so two threads accumulating into one leaf can
    meet inside its hook (PyTorch runs this hook under the leaf's lock)."""
    import retrograd

    errors, met, grads = _hooks_meet_across_threads(retrograd, True)
    assert errors == [] and met == 2
    assert grads[0].tolist() == [6.0, 6.0]


def test_tensor_hooks_follow_an_output_written_in_place():
    def prog(lib):
        b = lib.arange(9.0).reshape(3, 3).requires_grad_()
        out1, out2 = lib.var_mean(b, dim=0)
        log = []
        out1.register_hook(lambda g: log.append(("out1 old", g.clone())))
        out2.register_hook(lambda g: log.append(("out2", g.clone())))
        out1.mul_(2)
        out1.register_hook(lambda g: log.append(("out1 new", g.clone())))
        (out1 + out2 * 3).sum().backward()
        return log, b.grad

    both(prog)


# --- what a hook can ask about the running backward --------------------------------------------


def test_graph_task_id_and_current_node():
    def prog(lib):
        seen = []

        def hook(g):
            seen.append((lib._C._current_graph_task_id(),
                         lib._C._current_autograd_node().name()))

        t = lib.tensor(1.0, requires_grad=True).clone()
        t.register_hook(hook)
        for _ in range(3):
            t.backward(retain_graph=True)
        base = seen[0][0]
        return ([(i - base, name) for i, name in seen], lib._C._current_graph_task_id(),
                lib._C._current_autograd_node())

    both(prog)


def test_will_engine_execute_node_errors():
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        acc = a.clone().grad_fn.next_functions[0][0]
        b = a * 2
        seen = []

        def hook(g):
            seen.append(error_of(lib._C._will_engine_execute_node, acc))
            seen.append(error_of(lib._C._will_engine_execute_node, b))
            seen.append(error_of(lib._C._will_engine_execute_node, b.grad_fn))

        b.register_hook(hook)
        lib.autograd.grad(b.sum(), a, retain_graph=True)
        b.sum().backward()
        return seen, error_of(lib._C._will_engine_execute_node, b.grad_fn)

    both(prog)


def test_post_hook_registered_while_its_node_runs():
    def prog(lib):
        a = lib.arange(9.0).reshape(3, 3).requires_grad_()
        seen = []

        def unpack(x):
            def post(gi, go):
                seen.append(len(go))
                return tuple(g / 2.0 for g in gi)

            lib._C._current_autograd_node().register_hook(post)
            return x

        with lib.autograd.graph.saved_tensors_hooks(lambda x: x, unpack):
            a.exp().sum().backward()
        return seen, a.grad

    both(prog)


def test_saved_tensor_hooks_cannot_be_disabled_while_active():
    def prog(lib):
        graph = lib.autograd.graph
        with graph.saved_tensors_hooks(lambda x: x, lambda x: x):
            err = error_of(graph.disable_saved_tensors_hooks("no hooks here").__enter__)
        with graph.disable_saved_tensors_hooks("outer"):
            inside = lib._C._autograd._saved_tensors_hooks_is_enabled()
        return err, inside, lib._C._autograd._saved_tensors_hooks_is_enabled()

    both(prog)


def test_custom_function_may_read_an_input_detached_in_place():
    def prog(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x

        a = lib.ones(2, requires_grad=True)
        b = a * 3
        c = Scale.apply(b)
        d = b.sin()
        b.detach_()
        return error_of(c.sum().backward), a.grad, error_of(d.sum().backward)

    both(prog)
