"""Views made with grad mode off (no_grad, inference mode): what they report and which in-place
writes are refused, compared with torch (NOTE [View creation meta])."""

from tests.parity.harness import both, error_of


def test_no_grad_view_of_a_tensor_that_requires_grad():
    def prog(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.no_grad():
            v = x[:2]
        y = v * 2
        names = [None if f is None else type(f).__name__ for f, _ in y.grad_fn.next_functions]
        y.sum().backward()
        return v.requires_grad, v.grad_fn is None, v.is_leaf, y.requires_grad, names, x.grad

    both(prog)


def test_no_grad_view_refuses_grad_fn_after_base_written():
    def prog(lib):
        out = []
        for write_without_grad in (False, True):
            x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
            with lib.no_grad():
                v = x[:2]
            if write_without_grad:
                with lib.no_grad():
                    x.mul_(2)
            else:
                x.mul_(2)
            out.append(error_of(lambda v=v: v.grad_fn))
        return out

    both(prog)


def test_in_place_on_no_grad_views_refused():
    def prog(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
        with lib.no_grad():
            v = x[:2]
        view_of_view = v[:1]
        plain = lib.tensor([1.0, 2.0, 3.0])
        with lib.no_grad():
            pv = plain[:2]
        w = lib.ones(2, requires_grad=True)
        return (error_of(lambda: v.mul_(2)), error_of(lambda: view_of_view.mul_(2)),
                error_of(lambda: pv.mul_(w)), type(view_of_view.grad_fn).__name__)

    both(prog)


def test_in_place_on_inference_mode_views_refused():
    def prog(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True).clone()
        with lib.inference_mode():
            v = x[:2]
            inner = v[:1]
        plain = lib.tensor([1.0, 2.0, 3.0])
        with lib.inference_mode():
            pv = plain[:2]
        pv.mul_(2)  # a view of a tensor that requires nothing may be written
        return (v.requires_grad, error_of(lambda: v.mul_(2)), error_of(lambda: inner.mul_(2)),
                plain)

    both(prog)


def test_no_grad_view_written_inside_no_grad_is_allowed():
    def prog(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.no_grad():
            v = x[:2]
            v.mul_(2)
        return x.detach(), x._version

    both(prog)
