"""Inference tensors: their views are inference tensors (not views, never requiring grad),
inference mode skips autograd's resize check, and out= refuses to write one outside the mode."""

from tests.parity.harness import both, error_of


def test_views_of_inference_tensors():
    def prog(lib):
        out = []
        for requires_grad in (True, False):
            with lib.inference_mode():
                c = lib.ones(1, 2, 3, requires_grad=requires_grad)
                inside = c.view(-1)
            outside = c.view(-1)
            for v in (inside, outside):
                out.append((lib.is_inference(v), v.requires_grad, v._is_view(), v.is_leaf))
        return out

    both(prog)


def test_resize_in_inference_mode_and_under_no_grad():
    def prog(lib):
        with lib.inference_mode():
            c = lib.ones(1, 2, 3, requires_grad=True)
            c.resize_(1, 2)
            shape = tuple(c.shape)
        with lib.no_grad():
            x = lib.ones(2, requires_grad=True)
            refused = error_of(lambda: x.resize_(3))
        return shape, lib.is_inference(c), c.requires_grad, refused

    both(prog)


def test_out_refuses_an_inference_tensor_outside_the_mode():
    def prog(lib):
        with lib.inference_mode():
            c = lib.ones(1, 2, 3)
        s = lib.ones(1, 2, 3)
        r = lib.ones(1, 2, 3, requires_grad=True)
        return error_of(lambda: lib.mul(s, s, out=c)), error_of(lambda: lib.mul(r, r, out=c))

    both(prog)
