"""grad_fn._saved_<name> / _raw_saved_<name> under torch's names and with torch's Python types
(int, float, bool, str, None, tuples, tensors, SavedTensors), compared with torch."""

from __future__ import annotations

from tests.parity.harness import both, error_of


def _typed(value):
    """A value and its Python type's name, elementwise for tuples."""
    if isinstance(value, tuple):
        return "tuple", [_typed(v) for v in value]
    name = type(value).__name__
    if name in ("Tensor", "Parameter"):
        return "Tensor", value
    if name in ("SavedTensor", "SavedVariable"):
        return "SavedTensor"
    return name, value


def test_scalar_and_list_arguments():
    def prog(lib):
        a = lib.ones(1, requires_grad=True)
        b = lib.zeros(1, requires_grad=True)
        x = lib.zeros(5, requires_grad=True)
        t = lib.tensor([1.0], requires_grad=True)
        return [_typed(v) for v in (
            lib.stack([a, b], dim=0).grad_fn._saved_dim,
            (a * 2).grad_fn._saved_other,
            lib.threshold(x, threshold=1.0, value=1.0).grad_fn._saved_threshold,
            lib.threshold(x, threshold=1, value=1).grad_fn._saved_threshold,
            lib.threshold(x, threshold=False, value=False).grad_fn._saved_threshold,
            lib.div(t, 2.0, rounding_mode="trunc").grad_fn._saved_rounding_mode,
            lib.div(t, 2.0, rounding_mode=None).grad_fn._saved_rounding_mode,
            lib.ones(2, 3, requires_grad=True).sum().grad_fn._saved_self_sym_sizes,
            lib.ones(2, 2, requires_grad=True).mean().grad_fn._saved_self_sym_sizes,
        )]

    both(prog)


def test_index_saves_its_optional_tensors_as_saved_tensors():
    def prog(lib):
        a = lib.ones(2, 2, requires_grad=True)
        indices = lib.tensor([0, 1])
        out = a[:, indices]
        raw = out.grad_fn._raw_saved_indices
        ok = error_of(raw[1].register_hooks, lambda x: x, lambda x: x)
        forbidden = error_of(raw[0].register_hooks, lambda x: x, lambda x: x)
        out.sum().backward()
        return ([type(r).__name__ in ("SavedTensor", "SavedVariable") for r in raw], ok,
                forbidden, a.grad, _typed(out.grad_fn._saved_self_sym_sizes))

    both(prog)


def test_index_saved_indices_before_backward():
    def prog(lib):
        a = lib.ones(2, 2, requires_grad=True)
        indices = lib.tensor([0, 1])
        node = a[:, indices].grad_fn
        return _typed(node._saved_indices), node._saved_indices[1] is indices

    both(prog)


def test_upsample_sizes_and_scales():
    def prog(lib):
        f = lib.nn.functional
        line = lib.ones(1, 1, 2, requires_grad=True)
        square = lib.ones(1, 1, 2, 2, requires_grad=True)
        cube = lib.ones(1, 1, 2, 2, 2, requires_grad=True)
        nodes = [f.interpolate(line, 4, mode="linear").grad_fn,
                 f.interpolate(line, scale_factor=0.5, mode="linear").grad_fn,
                 f.interpolate(square, scale_factor=(2, 3), mode="bilinear").grad_fn,
                 f.interpolate(square, size=(3, 3), mode="nearest").grad_fn,
                 f.interpolate(cube, scale_factor=2, mode="trilinear").grad_fn]
        out = []
        for node in nodes:
            names = ("output_size", "align_corners", "scales", "scales_d", "scales_h",
                     "scales_w", "self_sym_sizes", "scale_factors")
            out.append({n: _typed(getattr(node, "_saved_" + n)) for n in names
                        if hasattr(node, "_saved_" + n)})
        return out

    both(prog)


def test_sizes_of_one_dimension():
    def prog(lib):
        a = lib.ones(1, 3, 3, requires_grad=True)
        mm = lib.addbmm(a.squeeze(0), a, a).grad_fn
        b = lib.ones(1, 1, 3, 3, requires_grad=True)
        unfold = lib.nn.functional.unfold(b, 3).grad_fn
        return [_typed(v) for v in (mm._saved_batch1_sym_argsize_0,
                                    mm._saved_batch1_sym_argsize_1,
                                    unfold._saved_self_sym_argsize_minus_2,
                                    unfold._saved_self_sym_argsize_minus_1)]

    both(prog)


def test_optional_tensors_results_and_freed_values():
    def prog(lib):
        a = lib.ones(2, requires_grad=True)
        out = lib.tanh(a)
        result = out.grad_fn._saved_result
        x = lib.randn(3, 5, requires_grad=True)
        target = lib.tensor([1, 0, 4])
        unweighted = lib.nn.NLLLoss()(x, target)
        weighted = lib.nn.NLLLoss(weight=lib.ones(5))(x, target)
        before = _typed(weighted.grad_fn._saved_weight)
        weighted.backward()
        return (_typed(result), result.equal(out), _typed(unweighted.grad_fn._saved_weight),
                before, error_of(lambda: weighted.grad_fn._saved_weight)[:2])

    both(prog)


def test_convolution_keeps_the_bias_shape():
    def prog(lib):
        a = lib.ones(1, 1, 3, 3, requires_grad=True)
        lib.manual_seed(0)
        with_bias = lib.nn.Conv2d(1, 2, 3)(a).grad_fn
        no_bias = lib.nn.Conv2d(1, 1, 3, bias=False)(a).grad_fn
        x = lib.ones(1, 2, 4, requires_grad=True)
        w = lib.ones(3, 2, 2)
        bias = lib.ones(3)
        input_only = lib.nn.functional.conv1d(x, w, bias).grad_fn
        padded = lib.nn.functional.conv1d(x, w, bias, padding="same").grad_fn
        return [_typed(n._saved_bias_sym_sizes_opt)
                for n in (with_bias, no_bias, input_only, padded)]

    both(prog)


def test_as_strided_keeps_the_given_storage_offset():
    def prog(lib):
        x = lib.arange(8.0, requires_grad=True)
        nodes = [x.as_strided((2,), (1,), 1).grad_fn, x[1:].as_strided((2,), (2,)).grad_fn,
                 x[2:].as_strided((2, 2), (1, 2), 3).grad_fn,
                 lib.as_strided(x[1:], (3,), (1,), 0).grad_fn]
        return [[_typed(getattr(n, "_saved_" + k)) for k in ("size", "stride", "storage_offset")]
                for n in nodes]

    both(prog)


def test_pdist_logit_and_qr_arguments():
    def prog(lib):
        a = lib.ones(2, 2, requires_grad=True)
        b = lib.ones(1, 1, 2, requires_grad=True)
        m = lib.ones(1, 1, requires_grad=True)
        q, r = lib.linalg.qr(lib.eye(3, 2, requires_grad=True), mode="reduced")
        qr_node = q.grad_fn
        return [_typed(v) for v in (
            lib.pdist(a, p=1).grad_fn._saved_p,
            lib.pdist(a, 1).grad_fn._saved_p,
            lib.pdist(a).grad_fn._saved_p,
            lib.pdist(a, 3).grad_fn._saved_self,
            lib.logit(b, 1.0).grad_fn._saved_eps,
            lib.logit(b, 1).grad_fn._saved_eps,
            lib.logit(b).grad_fn._saved_eps,
            lib.logit(b, eps=0.25).grad_fn._saved_self,
            lib.linalg.qr(m, mode="reduced")[0].grad_fn._saved_mode,
            lib.linalg.qr(m, mode="r")[1].grad_fn._saved_mode,
            qr_node._saved_Q, qr_node._saved_R, r.grad_fn is qr_node,
        )]

    both(prog)


def test_pdist_errors():
    def prog(lib):
        return [error_of(lib.pdist, lib.ones(3)),
                error_of(lib.pdist, lib.ones(2, 2, dtype=lib.long)),
                error_of(lib.pdist, lib.ones(1, 2, 3)),
                error_of(lib.pdist, lib.ones(3, 2), -1.0),
                error_of(lib.pdist, lib.ones(3, 2, dtype=lib.float16)),
                lib.nn.functional.pdist(lib.ones(3, 2), 2)]

    both(prog)


def test_foreach_maximum_saves_its_scalars():
    def prog(lib):
        xs = [lib.ones(2, 2, requires_grad=True) for _ in range(3)]
        scalars = [0.0, 1, 2.5]
        listed = lib._foreach_maximum(xs, scalars)
        one = lib._foreach_maximum(xs, 0.5)
        pairs = lib._foreach_maximum(xs, [lib.zeros(2, 2) for _ in range(3)])
        return ([_typed(t.grad_fn._saved_scalars) for t in listed],
                _typed(one[0].grad_fn._saved_scalar), _typed(one[1].grad_fn._saved_self),
                [t.grad_fn.name() for t in (listed[0], one[0], pairs[0])],
                listed[0].grad_fn is listed[2].grad_fn, type(listed).__name__)

    both(prog)
