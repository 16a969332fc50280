"""Saved-tensor hooks inlined into compiled graphs, after PyTorch's tests of the same feature:
GraphModule hook pairs are captured and inlined, plain callables run eagerly."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import retrograd
from retrograd import fx
from retrograd.autograd.graph import saved_tensors_hooks
from retrograd.compiler import config, counters
from retrograd.fx.experimental.proxy_tensor import make_fx


def _gm(fn, *example):
    return make_fx(fn)(*example)


def _pair(pack, unpack, example=None):
    x = retrograd.randn(3, 4) if example is None else example
    return _gm(pack, x), _gm(unpack, pack(x))


def fn(x, w):
    y = (x * w).sin()
    return (y * y).sum()


def _inputs():
    rng = np.random.default_rng(0)
    x = retrograd.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    w = retrograd.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    return x, w


def _run(f, pair, *inputs):
    with saved_tensors_hooks(*pair):
        out = f(*inputs)
    out.backward()
    return out, [t.grad for t in inputs]


def _compare(pack, unpack, rtol=1e-6, atol=1e-7, mode="all"):
    """Compiled with the GraphModule pair vs eager with the plain functions (mode "all" packs
    what eager packs: every floating saved tensor)."""
    config.saved_tensors_hooks_filtering_mode = mode
    try:
        x, w = _inputs()
        cf = retrograd.compile(fn)
        out, grads = _run(cf, _pair(pack, unpack), x, w)
        x2, w2 = _inputs()
        out2, grads2 = _run(fn, (pack, unpack), x2, w2)
    finally:
        config.saved_tensors_hooks_filtering_mode = "donated"
    (variant,) = cf.variants.values()
    assert variant.eager_reason is None and variant.inline_hooks
    np.testing.assert_allclose(out.item(), out2.item(), rtol=rtol, atol=atol)
    for a, b in zip(grads, grads2):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)
    return variant


def test_cpu_offload():
    v = _compare(lambda x: x.to("cpu"), lambda x: x.to("cpu"))
    assert v.saved_names == ["sin", "mul", "primals_2", "primals_1"]


def test_x2_pack_half_unpack():
    v = _compare(lambda x: x * 2, lambda x: x / 2)
    assert v.saved_names == ["sin_hook_0", "mul_hook_0", "primals_2_hook_0", "primals_1_hook_0"]
    assert "_mul(sin, 2" in v.forward.source


def test_bf16_storage_restores_dtype():
    def pack(x):
        return (x.dtype, x.to(retrograd.bfloat16))

    def unpack(packed):
        dtype, t = packed
        return t.to(dtype)

    v = _compare(pack, unpack, rtol=2e-2, atol=2e-2)
    # the dtype packed alongside is a constant of the backward, not a saved value
    assert v.saved_names == ["sin_hook_0", "mul_hook_0", "primals_2_hook_0", "primals_1_hook_0"]
    assert "aten__to_copy" in v.forward.source and "aten__to_copy" in v.backward.source


def test_tuple_with_a_size():
    def pack(x):
        return (x.size(), x.reshape(-1))

    def unpack(packed):
        size, flat = packed
        return flat.reshape(size)

    _compare(pack, unpack)


def test_float8_e5m2_keeps_dtype():
    def pack(x):
        return (x.dtype, x.to(retrograd.float8_e5m2))

    def unpack(packed):
        dtype, t = packed
        return t.to(dtype)

    _compare(pack, unpack, rtol=0.3, atol=0.3)


def _scaled_fp8(x):
    """float8 with an amax scale for float32 tensors; others stored as they are (branching on
    the dtype, which is why it is wrapped)."""
    if x.dtype == retrograd.float32:
        amax = x.abs().max().clamp(min=1e-12)
        scale = 448.0 / amax
        return (x.dtype, scale, (x * scale).to(retrograd.float8_e4m3fn))
    return (x.dtype, None, x)


def _unscale_fp8(packed):
    dtype, scale, t = packed
    if scale is None:
        return t
    return t.to(dtype) / scale


fx.wrap("_scaled_fp8")
fx.wrap("_unscale_fp8")


def _wrapped_pair(hash_value=None):
    def pack(x):
        return _scaled_fp8(x)

    def unpack(packed):
        return _unscale_fp8(packed)

    pack_gm, unpack_gm = fx.symbolic_trace(pack), fx.symbolic_trace(unpack)
    if hash_value is not None:
        for gm in (pack_gm, unpack_gm):
            for node in gm.graph.nodes:
                if node.meta.get("is_wrapped"):
                    node.meta["user_cache_hash"] = hash_value
    return pack_gm, unpack_gm


def test_float8_amax_scale_in_wrapped_function():
    x, w = _inputs()
    cf = retrograd.compile(fn)
    out, grads = _run(cf, _wrapped_pair("fp8-v1"), x, w)
    x2, w2 = _inputs()
    out2, grads2 = _run(fn, (lambda t: t, lambda t: t), x2, w2)
    (variant,) = cf.variants.values()
    assert variant.eager_reason is None
    assert "aten__to_copy" in variant.forward.source
    np.testing.assert_allclose(out.item(), out2.item(), rtol=1e-6)
    for a, b in zip(grads, grads2):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0.15, atol=0.15)


def test_int64_saved_tensor_is_not_packed():
    def f(x, idx):
        return (x[idx] * x[idx]).sum()

    x = retrograd.randn(5, 3, requires_grad=True)
    idx = retrograd.tensor([0, 2, 4])
    cf = retrograd.compile(f)
    config.saved_tensors_hooks_filtering_mode = "all"
    try:
        with saved_tensors_hooks(*_pair(lambda t: t * 2, lambda t: t / 2)):
            cf(x, idx).backward()
    finally:
        config.saved_tensors_hooks_filtering_mode = "donated"
    (variant,) = cf.variants.values()
    assert "primals_2" in variant.saved_names  # the int64 index: saved as it is
    assert any(n.endswith("_hook_0") for n in variant.saved_names)


@pytest.mark.parametrize("mode, packed", [
    ("donated", {"relu"}),                 # intermediates only
    ("no_static", {"relu", "primals_3"}),  # and the input
    ("all", {"relu", "primals_3", "t"}),   # and the weight (t: the weight seen transposed)
])
def test_filtering_modes(mode, packed):
    model = retrograd.nn.Sequential(retrograd.nn.Linear(4, 4), retrograd.nn.ReLU())
    model.compile()
    x = retrograd.randn(2, 4, requires_grad=True)
    config.saved_tensors_hooks_filtering_mode = mode
    try:
        with saved_tensors_hooks(*_pair(lambda t: t * 2, lambda t: t / 2)):
            model(x).sum().backward()
    finally:
        config.saved_tensors_hooks_filtering_mode = "donated"
    (variant,) = model._compiled_call_impl.variants.values()
    hooked = {n[:-len("_hook_0")] for n in variant.saved_names if n.endswith("_hook_0")}
    assert hooked == packed


def _three_calls(inlineable: bool):
    cf = retrograd.compile(fn)
    x, w = _inputs()
    cf(x, w).backward()

    def pack_a(t):
        return t * 2

    def unpack_a(t):
        return t / 2

    def pack_b(t):
        return t * 2

    def unpack_b(t):
        return t / 2

    for pair in ((pack_a, unpack_a), (pack_b, unpack_b)):
        hooks = _pair(*pair) if inlineable else pair
        with saved_tensors_hooks(*hooks):
            cf(x, w).backward()
    return dict(counters)


def test_recompiles_on_new_inlineable_pair_only():
    assert _three_calls(False)["compiles"] == 1
    retrograd.compiler.reset()
    assert _three_calls(True)["compiles"] == 3


def test_cache_hit_for_a_pair_tracing_to_the_same_graph():
    c = _three_calls(True)
    # no hooks: miss; pair A: miss; pair B (other functions, same graphs): hit
    assert (c["cache_miss"], c["cache_hit"], c["cache_bypass"]) == (2, 1, 0)
    cf = retrograd.compile(fn)
    x, w = _inputs()
    with saved_tensors_hooks(*_pair(lambda t: t * 3, lambda t: t / 3)):
        cf(x, w).backward()
    assert counters["cache_miss"] == 3  # another graph


def test_wrapped_call_cached_by_user_hash_else_bypassed():
    x, w = _inputs()
    for _ in range(2):
        cf = retrograd.compile(fn)
        _run(cf, _wrapped_pair("fp8-v1"), x, w)
    assert (counters["cache_miss"], counters["cache_hit"]) == (1, 1)
    cf = retrograd.compile(fn)
    _run(cf, _wrapped_pair(None), x, w)
    assert counters["cache_bypass"] == 1


def test_plain_hooks_run_eagerly_on_saved_tensors():
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    x, w = _inputs()
    cf = retrograd.compile(fn)
    _run(cf, (pack, lambda t: t), x, w)
    (variant,) = cf.variants.values()
    assert not variant.inline_hooks
    assert len(packed) == len(variant.saved_names) == 4


def test_hooks_logged_as_python(caplog):
    x, w = _inputs()
    with caplog.at_level(logging.INFO, logger="retrograd.graph_code"):
        _run(retrograd.compile(fn), _pair(lambda t: t * 2, lambda t: t / 2), x, w)
    text = caplog.text
    for title in ("Forward graph pre saved_tensors_hooks inlining", "saved_tensors_pack_hook sin",
                  "saved_tensors_unpack_hook sin", "===== Forward graph =====",
                  "===== Backward graph ====="):
        assert title in text
    assert 'sin_hook_0: "f32[3, 4]" = aten.mul.Tensor(sin, 2)' in text


def test_placement_last_use_and_epilogue():
    x, w = _inputs()
    cf = retrograd.compile(fn)
    _run(cf, _pair(lambda t: t * 2, lambda t: t / 2), x, w)
    src = next(iter(cf.variants.values())).forward.source.splitlines()
    # mul's pack right after its last forward use (sin), before mul_1
    order = [line.split("=")[0].strip() for line in src[1:]]
    assert order.index("mul_hook_0") == order.index("sin") + 1
    config.saved_tensors_hooks_placement = "epilogue"
    try:
        cf = retrograd.compile(fn)
        _run(cf, _pair(lambda t: t * 2, lambda t: t / 2), x, w)
    finally:
        config.saved_tensors_hooks_placement = "last_use"
    src = next(iter(cf.variants.values())).forward.source.splitlines()
    order = [line.split("=")[0].strip() for line in src[1:]]
    assert order.index("mul_hook_0") > order.index("sum")


def test_hook_mutating_its_input_is_refused():
    def pack(t):
        return t.mul_(2)

    x, w = _inputs()
    pair = (_gm(pack, retrograd.randn(3, 4)), _gm(lambda t: t, retrograd.randn(3, 4)))
    with pytest.raises(RuntimeError, match="modifies its input in place"):
        _run(retrograd.compile(fn), pair, x, w)


def test_unpack_returning_another_shape_is_refused():
    x, w = _inputs()
    pair = _pair(lambda t: t * 2, lambda t: t.reshape(-1))
    with pytest.raises(RuntimeError, match="unpack hook returned a tensor of shape"):
        _run(retrograd.compile(fn), pair, x, w)
