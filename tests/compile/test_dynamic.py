"""retrograd.compile(dynamic=True): one variant serves every size of the arguments' dimensions
(NOTE [Dynamic shapes]); what it cannot express compiles per shape, never wrong."""

from __future__ import annotations

import copy
import functools
import json
import logging
import os
import subprocess
import sys

import numpy as np
import pytest

import retrograd
from retrograd import nn
from retrograd._compiler import config
from retrograd.compiler import counters
from retrograd.nn import functional as F
from tests.compile.torch_dynamic_programs import PROGRAMS, inputs, shifted


def _variant(compiled):
    impl = getattr(compiled, "_compiled_call_impl", compiled)
    variants = [v for v in impl.dynamic_variants.values() if v is not None]
    assert len(variants) == 1
    return variants[0]


def _grads(fn, shapes, seed=0):
    """(outputs, input gradients) of fn on fresh float64 inputs of the given shapes."""
    rng = np.random.default_rng(seed)
    xs = [retrograd.tensor(rng.standard_normal(s), requires_grad=True) for s in shapes]
    out = fn(*xs)
    out.backward(retrograd.ones_like(out))
    return out.detach().numpy(), [x.grad.numpy() for x in xs]


def _same_as_eager(fn, compiled, shapes, seed=0):
    out, grads = _grads(compiled, shapes, seed)
    eout, egrads = _grads(fn, shapes, seed)
    np.testing.assert_allclose(out, eout, rtol=1e-12, atol=1e-12)
    for g, e in zip(grads, egrads):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_one_variant_serves_every_batch_size_of_a_module():
    retrograd.manual_seed(0)
    eager = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    compiled = copy.deepcopy(eager)
    compiled.compile(dynamic=True)
    for step, batch in enumerate((8, 5, 13, 2, 8)):
        rng = np.random.default_rng(step)
        x = retrograd.tensor(rng.standard_normal((batch, 6)).astype(np.float32))
        y = retrograd.tensor(rng.integers(0, 3, size=batch))
        got = []
        for model in (eager, compiled):
            model.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            got.append((loss.item(), [p.grad.numpy().copy() for p in model.parameters()]))
        assert got[0][0] == got[1][0]
        for a, b in zip(got[0][1], got[1][1]):
            np.testing.assert_array_equal(a, b)
    assert counters["compiles"] == 1
    variant = _variant(compiled)
    assert variant.sym_sources == [[4, 0]]  # the input (after 4 parameters), dimension 0
    assert "s0 = primals_5.shape[0]" in variant.forward.source


def test_graph_listing_prints_symbols(caplog):
    def f(x):
        return (x[1:] - x[:-1]).pow(2).sum()

    retrograd._logging.set_logs(graph_code=True)
    try:
        with caplog.at_level(logging.INFO, logger="retrograd.graph_code"):
            compiled = retrograd.compile(f, dynamic=True)
            compiled(retrograd.randn(5, 3, dtype=retrograd.float64, requires_grad=True)).backward()
    finally:
        retrograd._logging.set_logs(graph_code=False)
    text = caplog.text
    assert 'primals_1: "f64[s0, s1]"' in text
    assert 's0: "Sym(s0)" = primals_1.shape[0]' in text
    # the shifted sequence's length, and the backward's symbols as arguments
    assert 'slice: "f64[(s0 - 1), s1]"' in text
    assert 'aten.expand.default(tangents_1, ((s0 - 1), s1), False)' in text
    assert 's0: "Sym(s0)", s1: "Sym(s1)"):' in text
    for n in (5, 9, 12):
        _same_as_eager(f, compiled, [(n, 3)], seed=n)
    assert counters["compiles"] == 1


def _attention(x, w):
    b, t, c = x.shape
    qkv = x @ w
    q, k, v = qkv.split(c, dim=2)
    q = q.view(b, t, 2, c // 2).transpose(1, 2)
    k = k.view(b, t, 2, c // 2).transpose(1, 2)
    v = v.view(b, t, 2, c // 2).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)) * (c // 2) ** -0.5
    mask = retrograd.ones(t, t).tril()
    att = att.masked_fill(mask == 0, float("-inf")).softmax(-1)
    y = (att @ v).transpose(1, 2).reshape(b, t, c)
    return y[:, -1, :] + y.mean(1)


def test_attention_with_sizes_read_in_python():
    w = retrograd.randn(8, 24, dtype=retrograd.float64) * 0.3

    def f(x):
        return _attention(x, w)

    compiled = retrograd.compile(f, dynamic=True)
    for b, t in ((4, 5), (3, 7), (2, 11), (6, 2)):
        _same_as_eager(f, compiled, [(b, t, 8)], seed=b * t)
    assert counters["compiles"] == 1
    # batch and sequence are symbols; the feature size meets the weight and stays fixed
    assert [k for k in _variant(compiled).forward.source.split("\n") if "shape[" in k] == [
        "    s0 = primals_1.shape[0]", "    s1 = primals_1.shape[1]"]


def test_transformer_block_trains_with_varying_batch_and_length():
    retrograd.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                       batch_first=True)
    compiled = copy.deepcopy(layer)
    compiled.compile(dynamic=True)
    for step, (b, t) in enumerate(((4, 5), (3, 7), (6, 5), (2, 3))):
        x = retrograd.tensor(np.random.default_rng(step).standard_normal((b, t, 16)),
                             dtype=retrograd.float32)
        outs = []
        for model in (layer, compiled):
            model.zero_grad()
            out = model(x)
            out.pow(2).sum().backward()
            outs.append((out.detach().numpy(), [p.grad.numpy() for p in model.parameters()]))
        np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-5, atol=1e-6)
        for a, b_ in zip(outs[1][1], outs[0][1]):
            np.testing.assert_allclose(a, b_, rtol=1e-4, atol=1e-5)
    assert counters["compiles"] == 1


def test_duck_sizing_and_sizes_one_get_their_own_variants():
    def f(x, y):
        return (x * y).sum(0)

    compiled = retrograd.compile(f, dynamic=True)
    _same_as_eager(f, compiled, [(4, 3), (4, 3)])
    _same_as_eager(f, compiled, [(6, 5), (6, 5)])
    assert counters["compiles"] == 1
    # equal sizes were one symbol: sizes that differ (broadcasting) need a variant of their own
    _same_as_eager(f, compiled, [(6, 5), (1, 5)])
    assert counters["compiles"] == 2
    _same_as_eager(f, compiled, [(7, 2), (1, 2)])
    assert counters["compiles"] == 2


def test_floor_divisions_of_sizes():
    """Sizes floor-divided by a small number: a half of a sequence and its complement, and a
    stride-2 pooling's output length. Odd and even sizes share the variant."""

    def halves(x):
        n = x.shape[0] // 2
        return x[:n].sum(0) * 2 - x[n:].sum(0)

    def pooled(x):
        return F.max_pool1d(x, 3, 2, 1).sum(-1)

    compiled = retrograd.compile(halves, dynamic=True)
    for n in (6, 7, 10, 13):
        _same_as_eager(halves, compiled, [(n, 3)], seed=n)
    assert counters["compiles"] == 1
    source = _variant(compiled).forward.source
    assert "(s0 // 2)" in source
    compiled = retrograd.compile(pooled, dynamic=True)
    for n in (9, 12, 15):
        _same_as_eager(pooled, compiled, [(2, 3, n)], seed=n)
    assert counters["compiles"] == 2


def _concatenated(x, y):
    return retrograd.cat([x, y], 0).reshape(-1).cumsum(0)


def test_a_size_it_cannot_read_compiles_per_shape(caplog):
    """s0 + s1 (two arguments' lengths added) is no form the compiler reads."""
    compiled = retrograd.compile(_concatenated, dynamic=True)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        for a, b in ((4, 6), (5, 7), (5, 7), (6, 9)):
            _same_as_eager(_concatenated, compiled, [(a, 3), (b, 3)], seed=a)
    assert "in a form the compiler does not read" in caplog.text
    # at most one per shape, as without dynamic (a form that fits both probes by chance is
    # caught by the check against eager at the first shape it does not serve)
    assert counters["compiles"] <= 3


def test_each_new_shape_is_checked_against_eager(monkeypatch):
    """A branch on a size's value that both probe sizes take the same way: the check against
    eager sends the shape that takes the other branch to a variant of its own."""

    def f(x):
        return x.exp() if x.shape[0] > 10 else x.sin()

    compiled = retrograd.compile(f, dynamic=True)
    _same_as_eager(f, compiled, [(12, 2)])  # probes (and the call) take exp
    assert counters["compiles"] == 1
    _same_as_eager(f, compiled, [(14, 2)])
    assert counters["compiles"] == 1
    _same_as_eager(f, compiled, [(4, 2)])  # sin: the dynamic variant fails its check
    assert counters["compiles"] == 2


def test_refused_when_a_tensor_made_outside_ops_has_a_dynamic_size(caplog):
    def f(x):
        y = x * 2
        y[:, 0] += 1  # CopySlices' backward makes buffers outside the recorded ops
        return y.exp().sum(1)

    compiled = retrograd.compile(f, dynamic=True)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        for n in (5, 8):
            _same_as_eager(f, compiled, [(n, 3)], seed=n)
    assert "a tensor made outside the captured ops is sized by a dynamic dimension" in \
        caplog.text
    assert counters["compiles"] == 2


def test_recompile_limit_still_holds(monkeypatch):
    monkeypatch.setattr(config, "recompile_limit", 2)

    compiled = retrograd.compile(_concatenated, dynamic=True)
    with pytest.warns(UserWarning, match="recompile_limit"):
        for n in (4, 6, 8, 10):
            out = compiled(retrograd.ones(n, 2), retrograd.ones(n + 3, 2))
            assert out[-1].item() == 4 * n + 6
    assert counters["compiles"] == 2


def test_inlined_saved_tensor_hooks_with_dynamic_sizes():
    """Seed 001's inlined hooks in a variant with symbolic sizes: bfloat16 storage that restores
    the dtype, the same values as the hooks run eagerly."""
    from retrograd.fx import symbolic_trace

    def pack(x):
        return x.to(retrograd.bfloat16)

    def unpack(x):
        return x.to(retrograd.float32)

    pack_gm, unpack_gm = symbolic_trace(pack), symbolic_trace(unpack)
    w = retrograd.randn(6, 6) * 0.5

    def f(x):
        return (x @ w).tanh().sin().sum(1)

    compiled = retrograd.compile(f, dynamic=True)
    for n in (4, 9, 5):
        x = retrograd.randn(n, 6)
        results = []
        for fn, hooks in ((compiled, (pack_gm, unpack_gm)), (f, (pack, unpack))):
            leaf = x.detach().requires_grad_()
            with retrograd.autograd.graph.saved_tensors_hooks(*hooks):
                out = fn(leaf)
            out.sum().backward()
            results.append((out.detach().numpy(), leaf.grad.numpy()))
        np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
        np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-2, atol=1e-2)
    assert counters["compiles"] == 1
    assert _variant(compiled).inline_hooks


def _shifted(lib):
    return shifted(lib)


def test_default_marks_sizes_that_change_dynamic(caplog):
    """dynamic=None, torch's automatic dynamic shapes: the first graph specializes; after a
    size changes, that dimension is a symbol and later sizes reuse the graph."""
    f = _shifted(retrograd)
    compiled = retrograd.compile(f)
    with caplog.at_level(logging.INFO, logger="retrograd.compiler"):
        for n in (3, 5, 7, 9, 5):
            _same_as_eager(f, compiled, [(n, 4), (4, 2)], seed=n)
    assert counters["compiles"] == 2
    assert "dimensions [(0, 0)] of its tensor arguments are dynamic from now on" in caplog.text
    assert "recompiling f: arguments[0] changed" in caplog.text
    # the feature dimension never changed: fixed in the dynamic variant
    assert _variant(compiled).sym_sources == [[0, 0]]
    _same_as_eager(f, compiled, [(6, 3), (3, 2)])  # a new size there: marked too
    assert counters["compiles"] == 3
    assert sorted(compiled.auto_dims) == [(0, 0), (0, 1), (1, 0)]


def test_dynamic_false_specializes_every_shape():
    f = _shifted(retrograd)
    compiled = retrograd.compile(f, dynamic=False)
    for n in (3, 5, 7, 9, 5):
        _same_as_eager(f, compiled, [(n, 4), (4, 2)], seed=n)
    assert counters["compiles"] == 4


# every comparison's torch side, run at once in a fresh interpreter (torch_dynamic_programs)
TORCH_CASES = [("shifted", d, "none", 1, [6, 5, 7, 9, 5]) for d in (None, True, False)] + [
    ("shifted_softmax", True, "none", 1, [6, 5, 7, 9, 5])] + [
    ("shifted", d, m, 2, [6, 5, 7]) for d in (None, True, False)
    for m in ("mark_dynamic", "maybe_mark_dynamic", "mark_static")]


@functools.lru_cache(maxsize=1)
def _torch_results() -> dict:
    pytest.importorskip("torch")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cases = [[p, str(d), m, seed, sizes] for p, d, m, seed, sizes in TORCH_CASES]
    done = subprocess.run(
        [sys.executable, "-m", "tests.compile.torch_dynamic_programs", json.dumps(cases)],
        cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    return {case[:3]: result for case, result in zip(TORCH_CASES, results)}


def _torch_run(program: str, dynamic, seed: int, sizes: list, mark: str = "none") -> dict:
    case = next(c for c in TORCH_CASES if c[:3] == (program, dynamic, mark))
    assert case[3:] == (seed, sizes)
    return _torch_results()[(program, dynamic, mark)]


@pytest.mark.parametrize("program, dynamic, graphs", [
    ("shifted", None, 2), ("shifted", True, 1), ("shifted", False, 4),
    ("shifted_softmax", True, 1)])
def test_graph_counts_and_gradients_match_torch(program, dynamic, graphs):
    """The same programs under torch.compile (aot_eager: no C compiler needed) and
    retrograd.compile with each `dynamic`: as many graphs, equal gradients."""
    sizes, seed = [6, 5, 7, 9, 5], 1
    torch_side = _torch_run(program, dynamic, seed, sizes)
    fn = retrograd.compile(PROGRAMS[program][0](retrograd), dynamic=dynamic)
    for (x, w), expected in zip(inputs(program, seed, sizes), torch_side["grads"]):
        xs = [retrograd.tensor(a, requires_grad=True) for a in (x, w)]
        fn(*xs).sum().backward()
        for t, e in zip(xs, expected):
            np.testing.assert_allclose(t.grad.numpy(), np.array(e), rtol=1e-12, atol=1e-12)
    assert torch_side["graphs"] == graphs
    assert counters["compiles"] == graphs


def test_a_dynamic_variant_loads_from_the_disk_index():
    """Compiled again after reset() (as in a new process): the variant with symbolic sizes is
    found by the call's symbolic guards, without capture, and serves a new size."""
    f = _shifted(retrograd)
    compiled = retrograd.compile(f, dynamic=True)
    _same_as_eager(f, compiled, [(6, 4), (4, 2)])
    assert counters["cache_miss"] == 1
    retrograd.compiler.reset()
    again = retrograd.compile(f, dynamic=True)
    _same_as_eager(f, again, [(9, 4), (4, 2)], seed=3)
    assert counters["cache_hit"] == 1 and counters["cache_miss"] == 0
    assert _variant(again).sym_sources == [[0, 0], [0, 1], [1, 1]]


@pytest.mark.parametrize("dynamic", [None, True, False])
@pytest.mark.parametrize("mark, graphs", [("mark_dynamic", {None: 1, True: 1, False: 1}),
                                          ("maybe_mark_dynamic", {None: 1, True: 1, False: 1}),
                                          ("mark_static", {None: 3, True: 3, False: 3})])
def test_marks_match_torch(mark, graphs, dynamic):
    """torch._dynamo's marks on dimension 0 of x: the same graph counts as torch under each
    `dynamic` (the other dimensions keep their sizes), equal gradients."""
    sizes, seed = [6, 5, 7], 2
    torch_side = _torch_run("shifted", dynamic, seed, sizes, mark)
    fn = retrograd.compile(shifted(retrograd), dynamic=dynamic)
    for (x, w), expected in zip(inputs("shifted", seed, sizes), torch_side["grads"]):
        xs = [retrograd.tensor(a, requires_grad=True) for a in (x, w)]
        getattr(retrograd._dynamo, mark)(xs[0], 0)
        fn(*xs).sum().backward()
        for t, e in zip(xs, expected):
            np.testing.assert_allclose(t.grad.numpy(), np.array(e), rtol=1e-12, atol=1e-12)
    assert torch_side["graphs"] == counters["compiles"] == graphs[dynamic]


def test_mark_dynamic_on_a_size_the_function_fixes_raises():
    from retrograd.fx.experimental.symbolic_shapes import ConstraintViolationError

    x = retrograd.randn(4, 4)
    retrograd._dynamo.mark_dynamic(x, 1)
    ones = retrograd.ones(4)
    compiled = retrograd.compile(lambda x: x + ones)
    with pytest.raises(ConstraintViolationError, match="marked dimensions .* as dynamic but "
                       "the function fixes their size"):
        compiled(x)
    with pytest.raises(ConstraintViolationError):  # again: the failure is remembered
        compiled(x)
    y = retrograd.randn(4, 4)
    retrograd._dynamo.maybe_mark_dynamic(y, 1)  # a hint: fixed without an error
    np.testing.assert_array_equal(compiled(y).numpy(), (y + ones).numpy())


def test_mark_dynamic_range():
    from retrograd.fx.experimental.symbolic_shapes import ConstraintViolationError

    compiled = retrograd.compile(lambda x: x * 2)
    x = retrograd.randn(6, 3)
    retrograd._dynamo.mark_dynamic(x, 0, min=2, max=5)
    with pytest.raises(ConstraintViolationError, match=r"6 not in range \[2, 5\]"):
        compiled(x)
    x = retrograd.randn(4, 3)
    retrograd._dynamo.mark_dynamic(x, 0, min=2, max=5)
    np.testing.assert_array_equal(compiled(x).numpy(), (x * 2).numpy())
