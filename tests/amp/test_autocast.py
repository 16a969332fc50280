"""CPU autocast against torch.autocast('cpu'): output and gradient dtypes, values, graph
nodes, the op lists, nesting, the decorator and the state functions."""

import threading
import warnings

import numpy as np
import pytest

import retrograd
from retrograd._ops import dispatch

torch = pytest.importorskip("torch")

RS = np.random.RandomState(0)
X = RS.randn(8, 6).astype(np.float32)
W1, B1 = RS.randn(16, 6).astype(np.float32) * 0.4, RS.randn(16).astype(np.float32) * 0.1
W2, B2 = RS.randn(3, 16).astype(np.float32) * 0.3, RS.randn(3).astype(np.float32) * 0.1
Y = RS.randint(0, 3, size=8)


def _np(t):
    return np.array(t.detach().float().numpy())


def _names(root):
    """The graph's node names, breadth first (AccumulateGrad included)."""
    seen, order, queue = set(), [], [root]
    while queue:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        order.append(type(node).__name__)
        queue.extend(fn for fn, _ in node.next_functions)
    return order


def _mlp_step(lib, dtype_name):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    with lib.no_grad():
        for p, v in zip(model.parameters(), (W1, B1, W2, B2)):
            p.copy_(lib.tensor(v))
    x = lib.tensor(X, requires_grad=True)
    with lib.autocast("cpu", dtype=getattr(lib, dtype_name)):
        hidden = model[1](model[0](x))
        out = model[2](hidden)
        loss = nn.functional.cross_entropy(out, lib.tensor(Y))
    loss.backward()
    return {"hidden": hidden, "out": out, "loss": loss, "x.grad": x.grad,
            **{f"{n}.grad": p.grad for n, p in model.named_parameters()}}


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
def test_mlp_cross_entropy_matches_torch(dtype_name):
    ours, ref = _mlp_step(retrograd, dtype_name), _mlp_step(torch, dtype_name)
    for key in ours:
        assert ours[key].dtype.name == str(ref[key].dtype).replace("torch.", ""), key
    assert ours["out"].dtype.name == dtype_name and ours["loss"].dtype is retrograd.float32
    assert all(ours[k].dtype is retrograd.float32 for k in ours if k.endswith(".grad"))
    # both compute each op in float32 and round to the narrow dtype; the roundings of
    # accumulated sums may land on neighbouring narrow values
    tol = 2e-2 if dtype_name == "bfloat16" else 2e-3
    for key in ours:
        np.testing.assert_allclose(_np(ours[key]), _np(ref[key]), rtol=tol, atol=tol, err_msg=key)
    assert _names(ours["loss"].grad_fn) == _names(ref["loss"].grad_fn)
    assert "ToCopyBackward0" in _names(ours["loss"].grad_fn)


def test_no_mode_left_behind():
    assert not dispatch.mode_stack and dispatch.autocast is None
    with retrograd.autocast("cpu"):
        assert dispatch.autocast is not None and len(dispatch.mode_stack) == 1
        with retrograd.autocast("cpu", enabled=False):
            assert not dispatch.mode_stack  # off inside: nothing on the op path
        assert len(dispatch.mode_stack) == 1
    assert not dispatch.mode_stack and dispatch.autocast is None


def _run_op(lib, fn, dtype_name, autocast_dtype="bfloat16"):
    def t(a):
        return lib.tensor(a).to(getattr(lib, dtype_name))
    with lib.autocast("cpu", dtype=getattr(lib, autocast_dtype)):
        return fn(lib, t)


RS2 = np.random.RandomState(1)
A = RS2.randn(4, 5).astype(np.float32)
B = RS2.randn(5, 3).astype(np.float32)
C3 = RS2.randn(2, 4, 5).astype(np.float32)
D3 = RS2.randn(2, 5, 3).astype(np.float32)
V = RS2.randn(5).astype(np.float32)
IMG = RS2.randn(1, 2, 6, 6).astype(np.float32)
K = RS2.randn(3, 2, 3, 3).astype(np.float32)
LOGITS = RS2.randn(4, 3).astype(np.float32)
TARGET = np.array([0, 2, 1, 2])
PROB = (RS2.rand(4, 3) * 0.8 + 0.1).astype(np.float32)

OPS = {
    "mm": lambda lib, t: lib.mm(t(A), t(B)),
    "bmm": lambda lib, t: lib.bmm(t(C3), t(D3)),
    "addmm": lambda lib, t: lib.addmm(t(B[0]), t(A), t(B)),
    "baddbmm": lambda lib, t: lib.baddbmm(t(C3[:, :, :3] @ D3[:, :3, :]), t(C3), t(D3)),
    "addbmm": lambda lib, t: lib.addbmm(t(A @ B), t(C3), t(D3)),
    "matmul-2d": lambda lib, t: lib.matmul(t(A), t(B)),
    "matmul-1d": lambda lib, t: lib.matmul(t(V), t(V)),
    "matmul-mv": lambda lib, t: t(A) @ t(V),
    "matmul-3d": lambda lib, t: t(C3) @ t(B),
    "linear-nobias": lambda lib, t: lib.nn.functional.linear(t(A), t(B.T)),
    "linear-3d": lambda lib, t: lib.nn.functional.linear(t(C3), t(B.T), t(B[0])),
    "conv2d": lambda lib, t: lib.nn.functional.conv2d(t(IMG), t(K), padding=1),
    "conv1d": lambda lib, t: lib.nn.functional.conv1d(t(IMG[:, :, 0]), t(K[:, :, 0])),
    "conv_transpose2d": lambda lib, t: lib.nn.functional.conv_transpose2d(t(IMG), t(K[:2])),
    "sdpa": lambda lib, t: lib.nn.functional.scaled_dot_product_attention(t(C3), t(C3), t(C3)),
    "cross_entropy": lambda lib, t: lib.nn.functional.cross_entropy(t(LOGITS),
                                                                    lib.tensor(TARGET)),
    "cross_entropy-smooth": lambda lib, t: lib.nn.functional.cross_entropy(
        t(LOGITS), lib.tensor(TARGET), label_smoothing=0.1),
    "nll_loss": lambda lib, t: lib.nn.functional.nll_loss(t(LOGITS), lib.tensor(TARGET)),
    "mse_loss": lambda lib, t: lib.nn.functional.mse_loss(t(A), t(A * 0.5)),
    "l1_loss": lambda lib, t: lib.nn.functional.l1_loss(t(A), t(A * 0.5)),
    "smooth_l1_loss": lambda lib, t: lib.nn.functional.smooth_l1_loss(t(A), t(A * 0.5)),
    "huber_loss": lambda lib, t: lib.nn.functional.huber_loss(t(A), t(A * 0.5)),
    "binary_cross_entropy": lambda lib, t: lib.nn.functional.binary_cross_entropy(
        t(PROB), t(PROB[::-1].copy())),
    "bce_with_logits": lambda lib, t: lib.nn.functional.binary_cross_entropy_with_logits(
        t(LOGITS), t(PROB)),
    "kl_div": lambda lib, t: lib.nn.functional.kl_div(t(LOGITS), t(PROB),
                                                      reduction="batchmean"),
    "soft_margin_loss": lambda lib, t: lib.nn.functional.soft_margin_loss(t(A), t(np.sign(A))),
    "margin_ranking_loss": lambda lib, t: lib.nn.functional.margin_ranking_loss(
        t(V), t(V[::-1].copy()), t(np.sign(V))),
    "hinge_embedding_loss": lambda lib, t: lib.nn.functional.hinge_embedding_loss(
        t(A), t(np.sign(A))),
    "cosine_embedding_loss": lambda lib, t: lib.nn.functional.cosine_embedding_loss(
        t(A), t(A[::-1].copy()), t(np.array([1.0, -1.0, 1.0, -1.0], np.float32))),
    "poisson_nll_loss": lambda lib, t: lib.nn.functional.poisson_nll_loss(t(A), t(PROB[:, :1])),
    "multilabel_soft_margin_loss": lambda lib, t: lib.nn.functional.multilabel_soft_margin_loss(
        t(LOGITS), t((PROB > 0.5).astype(np.float32))),
    "prod": lambda lib, t: lib.prod(t(PROB)),
    "prod-dim": lambda lib, t: lib.prod(t(PROB), 1),
    "reflection_pad1d": lambda lib, t: lib.nn.functional.pad(t(C3), (1, 1), mode="reflect"),
    "replication_pad2d": lambda lib, t: lib.nn.functional.pad(t(IMG), (1, 1, 2, 0),
                                                              mode="replicate"),
    # not listed: they keep their input's dtype
    "softmax": lambda lib, t: lib.softmax(t(LOGITS), -1),
    "log_softmax": lambda lib, t: lib.log_softmax(t(LOGITS), -1),
    "layer_norm": lambda lib, t: lib.nn.functional.layer_norm(t(A), (5,)),
    "relu": lambda lib, t: lib.relu(t(A)),
    "exp-sum": lambda lib, t: t(A).exp().sum(),
    "dot": lambda lib, t: lib.dot(t(V), t(V)),
    "mv": lambda lib, t: lib.mv(t(A), t(V)),
    "add-mixed": lambda lib, t: t(A) + lib.tensor(A),
    "cat-mixed": lambda lib, t: lib.cat([t(A), lib.tensor(A)]),
    "max_pool2d": lambda lib, t: lib.nn.functional.max_pool2d(t(IMG), 2),
}


@pytest.mark.parametrize("input_dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("name", list(OPS))
def test_op_output_dtype_and_value_match_torch(name, input_dtype):
    fn = OPS[name]
    ours = _run_op(retrograd, fn, input_dtype)
    ref = _run_op(torch, fn, input_dtype)
    assert ours.dtype.name == str(ref.dtype).replace("torch.", "")
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_allclose(_np(ours), _np(ref), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name", ["mm", "linear-3d", "conv2d", "cross_entropy", "mse_loss",
                                  "l1_loss", "kl_div", "prod-dim"])
def test_float16_autocast_dtype(name):
    ours = _run_op(retrograd, OPS[name], "float32", "float16")
    ref = _run_op(torch, OPS[name], "float32", "float16")
    assert ours.dtype.name == str(ref.dtype).replace("torch.", "")


@pytest.mark.parametrize("name", ["mm", "matmul-3d", "linear-3d", "conv2d", "cross_entropy",
                                  "l1_loss", "kl_div", "bce_with_logits"])
def test_gradients_flow_back_through_the_casts(name):
    grads = []
    for lib in (retrograd, torch):
        leaves = []

        def t(a, lib=lib, leaves=leaves):
            leaf = lib.tensor(a, requires_grad=True)
            leaves.append(leaf)
            return leaf

        with lib.autocast("cpu"):
            out = OPS[name](lib, t)
        out.float().sum().backward()
        grads.append([(leaf.grad.dtype, _np(leaf.grad)) for leaf in leaves])
        assert all(leaf.grad.dtype == lib.float32 for leaf in leaves)
    for (_, ours), (_, ref) in zip(*grads):
        np.testing.assert_allclose(ours, ref, rtol=3e-2, atol=3e-2)


def test_cast_node_is_tocopy_and_weight_cast_is_cached_like_torch():
    for lib in (retrograd, torch):
        lin = lib.nn.Linear(4, 4)
        x = lib.randn(2, 4)
        with lib.autocast("cpu"):
            a, b = lin(x), lin(x)
        # addmm(bias, input, weight.t()): the weight's cast is shared between the two calls
        wa = a.grad_fn.next_functions[2][0].next_functions[0][0]
        wb = b.grad_fn.next_functions[2][0].next_functions[0][0]
        assert type(wa).__name__ == "ToCopyBackward0"
        assert wa is wb
        assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]  # the bias
        assert a.grad_fn.next_functions[1][0] is None  # x needs no grad: cast, no node
        with lib.autocast("cpu", cache_enabled=False):
            c, d = lin(x), lin(x)
        assert (c.grad_fn.next_functions[2][0].next_functions[0][0]
                is not d.grad_fn.next_functions[2][0].next_functions[0][0])
        with lib.autocast("cpu"):
            e = lin(x)
        # the cache lives for one outermost region
        assert e.grad_fn.next_functions[2][0].next_functions[0][0] is not wa


def test_nesting_and_state_functions():
    for lib in (retrograd, torch):
        assert not lib.is_autocast_enabled("cpu")
        assert lib.get_autocast_dtype("cpu") == lib.bfloat16
        assert lib.get_autocast_dtype("cuda") == lib.float16
        a = lib.randn(3, 3)
        with lib.autocast("cpu"):
            assert lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled()
            assert (a @ a).dtype == lib.bfloat16
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
                assert (a @ a).dtype == lib.float32
                with lib.autocast("cpu", dtype=lib.float16):
                    assert lib.get_autocast_dtype("cpu") == lib.float16
                    assert (a @ a).dtype == lib.float16
                assert lib.get_autocast_dtype("cpu") == lib.bfloat16
            assert (a @ a).dtype == lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")
        assert (a @ a).dtype == lib.float32


def test_state_is_restored_after_an_exception():
    with pytest.raises(ValueError), retrograd.autocast("cpu"):
        raise ValueError
    assert not retrograd.is_autocast_enabled("cpu") and not dispatch.mode_stack


def test_decorator_and_amp_alias():
    assert retrograd.amp.autocast is retrograd.autocast
    for lib in (retrograd, torch):
        @lib.amp.autocast(device_type="cpu")
        def f(a, lib=lib):
            return a @ a, lib.is_autocast_enabled("cpu")

        def recurse(n, a):
            out = f(a)[0]
            return out if n == 0 else recurse(n - 1, a)

        out, on = f(lib.randn(2, 2))
        assert on and out.dtype == lib.bfloat16
        assert recurse(2, lib.randn(2, 2)).dtype == lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")


def test_set_autocast_enabled_directly():
    for lib in (retrograd, torch):
        a = lib.randn(2, 2)
        lib.set_autocast_enabled("cpu", True)
        try:
            assert (a @ a).dtype == lib.bfloat16
        finally:
            lib.set_autocast_enabled("cpu", False)
        assert (a @ a).dtype == lib.float32
    assert not dispatch.mode_stack


def test_deprecated_cpu_state_functions_warn():
    for lib in (retrograd, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autocast("cpu", dtype=lib.float16):
                assert lib.is_autocast_cpu_enabled()
                assert lib.get_autocast_cpu_dtype() == lib.float16
        assert [x.category for x in w] == [DeprecationWarning] * 2
        assert "is_autocast_enabled('cpu')" in str(w[0].message)


def test_other_threads_are_not_affected():
    seen = []
    a = retrograd.randn(2, 2)
    with retrograd.autocast("cpu"):
        th = threading.Thread(target=lambda: seen.append((a @ a).dtype))
        th.start()
        th.join()
        assert (a @ a).dtype is retrograd.bfloat16
    assert seen == [retrograd.float32]


def test_errors_and_warnings_match_torch():
    for lib in (retrograd, torch):
        with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
            lib.autocast("foo")
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`, got: "
                                             "`<class 'int'>`"):
            lib.autocast(3)
        with pytest.raises(TypeError, match=r"autocast\(\)\(func\) requires a callable, but "
                                            r"got int"):
            lib.autocast("cpu")(3)
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not "
                                             "supported. Disabling autocast."):
            region = lib.autocast("cpu", dtype=lib.float64)
        with region:
            assert not lib.is_autocast_enabled("cpu")
        with pytest.warns(UserWarning, match="CUDA is not available"):
            region = lib.autocast("cuda")
        with region:
            assert not lib.is_autocast_enabled("cuda")
        assert lib.amp.is_autocast_available("cpu")


def test_backward_inside_the_region_gives_float32_leaf_grads():
    for lib in (retrograd, torch):
        w = lib.randn(3, 3, requires_grad=True)
        with lib.autocast("cpu"):
            out = (w @ w).relu().sum()
            out.backward()
        assert out.dtype == lib.bfloat16
        assert w.grad.dtype == lib.float32


def test_custom_fwd_casts_inputs_and_bwd_follows_forward_state():
    seen = {}

    class Square(retrograd.autograd.Function):
        @staticmethod
        @retrograd.amp.custom_fwd(device_type="cpu", cast_inputs=retrograd.float32)
        def forward(ctx, a):
            seen["fwd"] = (a.dtype, retrograd.is_autocast_enabled("cpu"))
            ctx.save_for_backward(a)
            return a @ a

        @staticmethod
        @retrograd.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            seen["bwd"] = retrograd.is_autocast_enabled("cpu")
            (a,) = ctx.saved_tensors
            return grad @ a.t() + a.t() @ grad

    x = retrograd.randn(3, 3, requires_grad=True)
    with retrograd.autocast("cpu"):
        out = Square.apply(x.to(retrograd.bfloat16))
    assert seen["fwd"] == (retrograd.float32, False)
    assert out.dtype is retrograd.float32
    out.sum().backward()
    assert seen["bwd"] is False
    assert x.grad.dtype is retrograd.float32


def test_recursive_decorated_function_restores_the_state():
    # differs from torch deliberately: torch's decorator re-enters one autocast object, so a
    # recursive call overwrites the saved state and autocast stays on after the outer call
    # returns; retrograd enters a fresh region per call
    @retrograd.autocast("cpu")
    def f(n):
        if n:
            f(n - 1)
        return retrograd.is_autocast_enabled("cpu")

    assert f(2)
    assert not retrograd.is_autocast_enabled("cpu") and not dispatch.mode_stack

    @torch.autocast("cpu")
    def g(n):
        if n:
            g(n - 1)
        return torch.is_autocast_enabled("cpu")

    try:
        assert g(2) and torch.is_autocast_enabled("cpu")  # torch leaves it on
    finally:
        torch.set_autocast_enabled("cpu", False)
