"""Array formulas (NOTE [Array formulas]): the NumPy-level forms of the derivatives that
backward runs when it builds no graph -- generated from the Tensor formulas (NOTE [Generated
array formulas]) or, for a few hot ops, written by hand -- must agree with the Tensor
formulas."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd._ops.registry import OPS
from retrograd.utils._python_dispatch import TorchDispatchMode
from tests.test_ops_generated import GRAD, _func

ARRAY_OPS = sorted(name for name, op in OPS.items() if op.array_formulas is not None)


def _grads(sample, create_graph: bool):
    f, leaves = _func(sample)
    outs = [o for o in f(*leaves) if o.requires_grad]
    if not outs:
        return None
    rng = np.random.default_rng(3)
    vs = [retrograd.tensor(rng.standard_normal(o.shape), dtype=o.dtype) for o in outs]
    return retrograd.autograd.grad(outs, leaves, vs, allow_unused=True,
                                   create_graph=create_graph)


@pytest.mark.parametrize("sample", GRAD, ids=lambda s: s.id)
def test_array_and_tensor_formulas_agree(sample):
    # create_graph=False runs the array formulas where an op has them, create_graph=True the
    # Tensor formulas; both are gradients of the same function
    fast = _grads(sample, create_graph=False)
    if fast is None:
        pytest.skip("no differentiable outputs")
    ref = _grads(sample, create_graph=True)
    for a, b in zip(fast, ref):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12,
                                       atol=1e-12, equal_nan=True)


def test_hot_ops_have_array_formulas():
    # the ops a training step spends its backward in (bench/overhead.py)
    for name in ("mul.Tensor", "add.Tensor", "sub.Tensor", "div.Tensor", "tanh", "relu",
                 "gelu", "mm", "addmm", "bmm", "t", "view", "expand", "select.int",
                 "slice.Tensor", "sum", "mean", "_softmax", "_log_softmax", "nll_loss_forward",
                 "native_dropout", "embedding", "native_layer_norm", "split.Tensor",
                 "convolution", "max_pool2d_with_indices"):
        assert name in ARRAY_OPS, name


def test_array_formulas_are_declared_like_the_tensor_ones():
    from retrograd._ops.registry import op

    with pytest.raises(ValueError, match="must have the keys of grads"):
        op("_array_keys_test(Tensor self) -> Tensor", np.negative,
           grads={"self": lambda grad: -grad}, array_grads={"other": lambda grad: grad},
           function=False, method=False)
    with pytest.raises(ValueError, match="reads \\['self'\\]"):
        op("_array_reads_test(Tensor self) -> Tensor", np.negative,
           grads={"self": lambda grad: -grad},
           array_grads={"self": lambda grad, self: np.negative(grad)},
           function=False, method=False)


def test_a_dispatch_mode_sees_the_tensor_formulas():
    # under a dispatch mode backward runs Tensor formulas, so the mode sees backward's ops
    seen = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.name())
            return func(*args, **(kwargs or {}))

    x = retrograd.ones(3, requires_grad=True)
    y = (x * x).tanh().sum()
    with Recorder():
        y.backward()
    assert "tanh_backward" in seen and seen.count("mul.Tensor") == 2
    expected = 2 * (1 - np.tanh(1.0) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), [expected] * 3, rtol=1e-6)


def test_a_passed_through_gradient_is_not_stolen_twice():
    # add's array formula hands the incoming gradient to both inputs: the leaves must not end
    # up sharing one array (a later in-place accumulation into one would change the other)
    a = retrograd.zeros(3, requires_grad=True)
    b = retrograd.zeros(3, requires_grad=True)
    (a + b).exp().sum().backward()
    assert a.grad.data_ptr() != b.grad.data_ptr()
    np.testing.assert_array_equal(a.grad.numpy(), np.ones(3))
    (a * 2).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full(3, 3.0))
    np.testing.assert_array_equal(b.grad.numpy(), np.ones(3))


def test_array_formula_results_keep_the_gradient_contract():
    # a weight's gradient from an array formula is still stolen without a copy when unshared
    w = retrograd.ones(4, requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(g.data_ptr()))
    (w * 3.0).sum().backward()
    assert w.grad.data_ptr() == seen[0]
    np.testing.assert_array_equal(w.grad.numpy(), np.full(4, 3.0))


def test_masked_gradients_zero_non_finite_values_outside_the_mask():
    # where's and clamp's array formulas multiply by the mask; inf * 0 would be nan there,
    # where torch (and the Tensor formula) give 0
    def prog(lib):
        x = lib.tensor([1.0, 5.0, -3.0], requires_grad=True)
        y = lib.tensor([2.0, 2.0, 2.0], requires_grad=True)
        out = lib.where(x > 0, x, y).clamp(-1.0, 3.0)
        out.backward(lib.tensor([float("inf"), float("nan"), 1.0]))
        return x.grad, y.grad

    from tests.parity.harness import both

    both(prog)


# --- generated array formulas (NOTE [Generated array formulas]) ------------------------------

def _generated_op(monkeypatch, schema: str, forward, grads: dict):
    """An op declared outside OPS whose array formulas are generated."""
    from retrograd._ops import array_formulas
    from retrograd._ops.registry import OpDef
    from retrograd._ops.schema import parse_schema

    s = parse_schema(schema)
    monkeypatch.setattr(array_formulas, "GENERATED", array_formulas.GENERATED | {s.full_name})
    return OpDef(s, forward, grads, None, None, None)


def _first_grads(opdef, *args):
    from retrograd._ops.registry import run

    x = args[0]
    run(opdef, args).sum().backward()
    return x.grad.numpy()


def test_generated_ops_are_not_written_twice():
    from retrograd._ops.array_formulas import GENERATED

    for name in GENERATED:
        op = OPS[name]
        assert all(hasattr(f.fn, "__retrograd_source__") for f in op.array_formulas), name


def test_generated_code_calls_the_kernels_and_is_shown():
    from retrograd.codegen import render

    x = retrograd.tensor([0.5, 1.0, 2.0], requires_grad=True)
    x.sin().backward(retrograd.ones(3))
    np.testing.assert_array_equal(x.grad.numpy(), np.cos(x.detach().numpy()))
    text = render(OPS["sin"])
    assert "array formula for one key" in text
    assert "k_cos(self)" in text and "np.multiply(grad, v0)" in text


def _entry(opdef, k: int = 0):
    return opdef.array_formulas[k].fn


def test_a_formula_that_reads_no_sizes_is_specialized_by_dtype_only(monkeypatch):
    # exp2's formula makes the same code for any size and layout: one trace serves them all,
    # checked inline by dtype (a fresh declaration of it: the public op's specializations
    # depend on what ran before, a 0-d one for 0-d inputs)
    from retrograd._ops.pointwise import LN2
    from retrograd._ops.registry import run

    opdef = _generated_op(monkeypatch, "_gen_exp2_test(Tensor self) -> Tensor", np.exp2,
                          {"self": lambda grad, result: grad * (result * LN2)})
    entry = _entry(opdef)
    for shape in ((3, 4), (5,), (2, 3, 4)):
        x = retrograd.randn(*shape, dtype=retrograd.float64, requires_grad=True)
        g = retrograd.randn(*reversed(shape), dtype=retrograd.float64)
        run(opdef, (x,)).backward(g.permute(*reversed(range(len(shape)))))
        np.testing.assert_allclose(x.grad.numpy(), g.numpy().transpose()
                                   * np.exp2(x.detach().numpy()) * np.log(2), rtol=1e-12)
    source = entry.__retrograd_source__
    guards = [line for line in source.splitlines() if line.startswith("    if ")]
    assert guards and not any(".shape" in g or ".ndim" in g for g in guards)
    assert "grad float64, result float64: any shape, layout and ndim" in source
    assert sum(k[0][0] == np.float64 for k in entry.__globals__["_cache"]) <= 1


def test_a_layout_dependent_formula_is_specialized_by_shape_and_strides(monkeypatch):
    # reshape views or copies by layout: the code for a transposed gradient is another trace
    opdef = _generated_op(monkeypatch, "_gen_reshape_test(Tensor self) -> Tensor",
                          lambda a: a.reshape(-1),
                          {"self": lambda grad, self_shape: grad.reshape(self_shape)})
    from retrograd._ops.registry import run

    x = retrograd.randn(3, 4, dtype=retrograd.float64, requires_grad=True)
    g = retrograd.randn(12, dtype=retrograd.float64)
    run(opdef, (x,)).backward(g)
    np.testing.assert_array_equal(x.grad.numpy(), g.numpy().reshape(3, 4))
    x.grad = None
    wide = retrograd.randn(24, dtype=retrograd.float64)
    run(opdef, (x,)).backward(wide[::2])
    np.testing.assert_array_equal(x.grad.numpy(), wide.numpy()[::2].reshape(3, 4))
    entry = _entry(opdef)
    assert len(entry.__globals__["_cache"]) == 2
    assert "grad.strides == (8,)" in entry.__retrograd_source__


def test_dtypes_get_their_own_code_and_promotion_matches_torch():
    # a float64 0-d tensor times a float32 vector is float32 in torch; the float32-only code
    # must not serve it
    from tests.parity.harness import both

    def prog(lib):
        out = []
        for b_dtype in (lib.float32, lib.float64):
            a = lib.tensor([0.5, 1.5, -2.0], requires_grad=True)
            b = lib.tensor(3.0, dtype=b_dtype, requires_grad=True)
            (a * b).sin().backward(lib.ones(3))
            out += [a.grad, b.grad]
        return out

    both(prog)


def test_a_zero_dim_argument_through_code_made_for_vectors():
    x = retrograd.tensor([0.3, 0.7], dtype=retrograd.float64, requires_grad=True)
    x.sin().sum().backward()
    s = retrograd.tensor(0.3, dtype=retrograd.float64, requires_grad=True)
    s.sin().backward()
    assert s.grad.shape == () and s.grad.dtype == retrograd.float64
    np.testing.assert_allclose(s.grad.numpy(), np.cos(0.3), rtol=1e-15)


def test_more_keys_than_inline_specializations(monkeypatch):
    from retrograd._ops import array_formulas

    opdef = _generated_op(monkeypatch, "_gen_many_test(Tensor self, float k) -> Tensor",
                          lambda a, k: a * k, {"self": lambda grad, k: grad * k})
    for k in range(array_formulas.MAX_INLINE + 3):
        x = retrograd.ones(2, dtype=retrograd.float64, requires_grad=True)
        np.testing.assert_array_equal(_first_grads(opdef, x, float(k)), np.full(2, float(k)))
    entry = _entry(opdef)
    assert entry.__retrograd_source__.count("    if ") == array_formulas.MAX_INLINE
    assert len(entry.__globals__["_cache"]) == array_formulas.MAX_INLINE + 3


def test_a_list_argument_falls_back_to_the_tensor_formula(monkeypatch):
    opdef = _generated_op(
        monkeypatch, "_gen_list_test(Tensor self, int[] size) -> Tensor",
        lambda a, size: a * 2, {"self": lambda grad, size: grad * float(len(size))})
    x = retrograd.ones(3, requires_grad=True)
    np.testing.assert_array_equal(_first_grads(opdef, x, [1, 2]), np.full(3, 2.0))
    entry = opdef.array_formulas[0].fn
    assert entry.__globals__["_cache"] == {}  # no key: nothing generated


def test_a_constant_built_outside_the_dispatcher_is_not_baked_in(monkeypatch):
    # the formula reads self's values behind the dispatcher's back: the trace has a constant,
    # so the key uses the Tensor formula, and later calls see their own values
    from retrograd._tensor import _wrap

    opdef = _generated_op(
        monkeypatch, "_gen_const_test(Tensor self) -> Tensor", lambda a: a * a,
        {"self": lambda grad, self: grad * _wrap(self._data * 2)})
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    np.testing.assert_array_equal(_first_grads(opdef, x), [2.0, 4.0])
    x = retrograd.tensor([3.0, 5.0], requires_grad=True)
    np.testing.assert_array_equal(_first_grads(opdef, x), [6.0, 10.0])
    from retrograd._ops.array_formulas import SHOWN

    assert opdef not in SHOWN


def test_the_incoming_gradient_is_passed_on(monkeypatch):
    opdef = _generated_op(monkeypatch, "_gen_pass_test(Tensor self) -> Tensor",
                          lambda a: a.copy(), {"self": lambda grad: grad})
    from retrograd._ops.registry import run

    x = retrograd.ones(3, requires_grad=True)
    run(opdef, (x,)).backward(retrograd.full((3,), 2.0))
    (fn,) = opdef.array_formulas[0].fn.__globals__["_cache"].values()
    assert fn.__retrograd_source__.strip().endswith("return grad")
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0))


def test_a_scalar_key_includes_its_type():
    # 1 and 1.0 are equal dict keys; lerp's weight as int or float is two traces
    for weight in (1, 1.0, 0):
        x = retrograd.ones(2, dtype=retrograd.float64, requires_grad=True)
        e = retrograd.ones(2, dtype=retrograd.float64, requires_grad=True)
        retrograd.lerp(x, e, weight).sum().backward()
        np.testing.assert_array_equal(e.grad.numpy(), np.full(2, float(weight)))
    entry = OPS["lerp.Scalar"].array_formulas[1].fn
    weights = {k[-1] for k in entry.__globals__["_cache"]}
    assert (int, 1) in weights and (float, 1.0) in weights


def test_a_numpy_scalar_argument_is_pinned_inline():
    # att * (1 / np.sqrt(d)) multiplies by a NumPy float64: its code is checked inline too,
    # and the gradient is float32 as torch's
    from tests.parity.harness import both

    def prog(lib):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        for _ in range(3):
            (x * np.float64(0.25)).sum().backward()
        return x.grad

    both(prog)
    entry = _entry(OPS["mul.Tensor"])
    assert "np.float64(0.25)" not in entry.__retrograd_source__  # a named constant
    assert any(k[1] == (np.float64, 0.25) for k in entry.__globals__["_cache"])


def test_a_column_gradient_is_retraced_in_another_layout(monkeypatch):
    # a (12, 1) gradient: its size-1 dim hides no layout; the retrace must still try a
    # strided one, or reshape's view made for the contiguous case would serve a strided one
    opdef = _generated_op(monkeypatch, "_gen_column_test(Tensor self) -> Tensor",
                          lambda a: a.reshape(-1, 1),
                          {"self": lambda grad, self_shape: grad.reshape(self_shape)})
    from retrograd._ops.registry import run

    x = retrograd.randn(3, 4, dtype=retrograd.float64, requires_grad=True)
    g = retrograd.randn(12, 1, dtype=retrograd.float64)
    run(opdef, (x,)).backward(g)
    np.testing.assert_array_equal(x.grad.numpy(), g.numpy().reshape(3, 4))
    x.grad = None
    tall = retrograd.randn(24, 1, dtype=retrograd.float64)
    run(opdef, (x,)).backward(tall[::2])
    np.testing.assert_array_equal(x.grad.numpy(), tall.numpy()[::2].reshape(3, 4))
    assert ".strides ==" in _entry(opdef).__retrograd_source__
