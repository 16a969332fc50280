"""nn.attention.flex_attention.flex_attention against torch 2.13 on the same programs: values,
logsumexp, gradients of query/key/value and of tensors a score_mod captures, dtypes, errors.

torch's CPU path refuses backward (NotImplementedError); to get its gradients the tests lift
that one check (`_validate_device`) on torch's side, which then differentiates its eager
implementation. retrograd differentiates on the CPU as a matter of course.
"""

from __future__ import annotations

import math
import warnings
from importlib import import_module

import numpy as np
import pytest

import retrograd
from tests.parity.harness import assert_same, both, error_of

torch = pytest.importorskip("torch")
tfa = import_module("torch.nn.attention.flex_attention")

pytestmark = pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def torch_backward_on_cpu(monkeypatch):
    monkeypatch.setattr(tfa, "_validate_device", lambda *args: None)


def fa(lib):
    return import_module(f"{lib.__name__}.nn.attention.flex_attention")


def arrays(B=2, Hq=2, Hkv=2, L=6, S=9, E=8, Ev=5, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((B, Hq, L, E)), rng.standard_normal((B, Hkv, S, E)),
            rng.standard_normal((B, Hkv, S, Ev)))


def leaf(lib, a, dtype="float64", grad=True):
    return lib.from_numpy(np.array(a, copy=True)).to(getattr(lib, dtype)).requires_grad_(grad)


def backprop(lib, outs, leaves):
    """Gradients of a fixed random weighting of the outputs (finite entries only)."""
    rng = np.random.default_rng(3)
    total = 0
    for o in outs:
        w = lib.from_numpy(rng.standard_normal(tuple(o.shape))).to(o.dtype)
        total = total + (lib.where(o.isfinite(), o, 0) * w).sum()
    total.backward()
    return [t.grad for t in leaves]


SCORE_MODS = {
    "none": lambda lib, ex: None,
    "relative": lambda lib, ex: lambda s, b, h, q, k: s + (q - k) * 0.25,
    "alibi": lambda lib, ex: lambda s, b, h, q, k: s + ex["slopes"][h] * (k - q),
    "softcap": lambda lib, ex: lambda s, b, h, q, k: 2.0 * lib.tanh(s / 2.0),
    "causal_where": lambda lib, ex: lambda s, b, h, q, k: lib.where(q >= k, s, -float("inf")),
    "head_bias": lambda lib, ex: lambda s, b, h, q, k: s + ex["bias"][h],
    "rel_table": lambda lib, ex: lambda s, b, h, q, k: s + ex["rel"][q - k + 8],
    "batch_head_bias": lambda lib, ex: lambda s, b, h, q, k: s * ex["bh"][b, h],
    "full_bias": lambda lib, ex: lambda s, b, h, q, k: s + ex["tab"][h, q, k],
}
EXTRAS = {"slopes": RNG.standard_normal(2), "bias": RNG.standard_normal(2),
          "rel": RNG.standard_normal(15), "bh": RNG.standard_normal((2, 2)),
          "tab": RNG.standard_normal((2, 6, 9))}
HEAD_BIAS = RNG.standard_normal(4)  # drawn once: both libraries' programs get these values


def attend(lib, score_mod_name, dtype="float64", mask_mod=None, block=4, **kw):
    q, k, v = (leaf(lib, a, dtype) for a in arrays())
    extras = {n: leaf(lib, a, dtype) for n, a in EXTRAS.items()}
    block_mask = None
    if mask_mod is not None:
        block_mask = fa(lib).create_block_mask(mask_mod, None, None, 6, 9, device="cpu",
                                               BLOCK_SIZE=block)
    out, aux = fa(lib).flex_attention(q, k, v, score_mod=SCORE_MODS[score_mod_name](lib, extras),
                                      block_mask=block_mask,
                                      return_aux=fa(lib).AuxRequest(lse=True), **kw)
    leaves = [q, k, v, *extras.values()]
    grads = backprop(lib, [out, aux.lse], leaves)
    return {"out": out, "lse": aux.lse, "aux_max": aux.max_scores,
            "grads": [g if g is not None else "none" for g in grads]}


@pytest.mark.parametrize("name", list(SCORE_MODS))
def test_score_mods_values_and_gradients(name):
    both(attend, name, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name", ["none", "alibi", "softcap", "head_bias", "rel_table"])
def test_float32(name):
    both(attend, name, "float32", rtol=1e-4, atol=1e-5)


MASK_MODS = {
    "causal": lambda b, h, q, k: q >= k,
    "sliding": lambda b, h, q, k: (q - k).abs() <= 2,
    "prefix_lm": lambda b, h, q, k: (k < 3) | (q >= k),
    "diagonal_band": lambda b, h, q, k: (k >= q) & (k <= q + 3),
    "nothing_for_early_rows": lambda b, h, q, k: (q >= 3) & (k <= q),
}


@pytest.mark.parametrize("block", [4, 128, (2, 3)])
@pytest.mark.parametrize("mask", list(MASK_MODS))
def test_block_masks(mask, block):
    """Lengths 6 and 9 are not multiples of the blocks; the last mask leaves rows with no key
    (output 0, lse -inf, no NaN in any gradient)."""
    both(lambda lib: attend(lib, "rel_table", mask_mod=MASK_MODS[mask], block=block),
         rtol=1e-9, atol=1e-10)


def test_score_mod_with_block_mask_and_scale():
    both(lambda lib: attend(lib, "softcap", mask_mod=MASK_MODS["sliding"], scale=0.3),
         rtol=1e-9, atol=1e-10)


def test_document_mask_per_batch():
    docs = np.array([[0, 0, 0, 1, 1, 1, 1, 2, 2], [0, 1, 1, 1, 1, 1, 2, 2, 2]])

    def program(lib):
        ids = lib.from_numpy(docs)

        def same_doc(b, h, q, k):
            return (ids[b, q] == ids[b, k]) & (q >= k)

        q, k, v = (leaf(lib, a) for a in arrays(L=9))
        mask = fa(lib).create_block_mask(same_doc, 2, None, 9, 9, device="cpu", BLOCK_SIZE=2)
        out = fa(lib).flex_attention(q, k, v, block_mask=mask)
        return out, mask.kv_num_blocks, mask.full_kv_indices, backprop(lib, [out], [q, k, v])

    both(program, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("Hkv", [1, 2])
def test_gqa(Hkv):
    def program(lib):
        q, k, v = (leaf(lib, a) for a in arrays(Hq=4, Hkv=Hkv))
        bias = leaf(lib, HEAD_BIAS)
        mask = fa(lib).create_block_mask(MASK_MODS["causal"], None, 4, 6, 9, device="cpu",
                                         BLOCK_SIZE=4)
        out = fa(lib).flex_attention(q, k, v, block_mask=mask, enable_gqa=True,
                                     score_mod=lambda s, b, h, i, j: s + bias[h] * (i - j))
        return out, backprop(lib, [out], [q, k, v, bias])

    both(program, rtol=1e-9, atol=1e-10)


def test_key_value_batch_one_with_block_mask_of_query_batch():
    def program(lib):
        q = leaf(lib, arrays()[0])
        k, v = (leaf(lib, a) for a in arrays(B=1)[1:])
        mask = fa(lib).create_block_mask(MASK_MODS["causal"], 2, None, 6, 9, device="cpu",
                                         BLOCK_SIZE=4)
        out = fa(lib).flex_attention(q, k, v, block_mask=mask)
        return out, backprop(lib, [out], [q, k, v])

    both(program, rtol=1e-9, atol=1e-10)


def test_return_lse_warns_once_and_returns_natural_log():
    def program(lib):
        module = fa(lib)
        module._WARNINGS_SHOWN.discard("deprecated_return_lse")
        q, k, v = (leaf(lib, a, "float32", grad=False) for a in arrays())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out, lse = module.flex_attention(q, k, v, return_lse=True)
            module.flex_attention(q, k, v, return_lse=True)
        messages = [(w.category.__name__, str(w.message)) for w in caught
                    if "torch.compile" not in str(w.message)]
        reference = ((q @ k.transpose(-2, -1)) / math.sqrt(8)).logsumexp(-1)
        return out, lse, (lse - reference).abs().max().item() < 1e-5, messages

    result = both(program, rtol=1e-5, atol=1e-6)
    assert len(result[3]) == 1 and result[2]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_computes_in_float32_and_returns_input_dtype(dtype):
    """Scores, score_mod and softmax run in float32; the probabilities are rounded to the input
    dtype before they weight the values, as torch's eager path does: the forward is equal."""
    def program(lib, grads):
        q, k, v = (leaf(lib, a, dtype) for a in arrays())
        out, aux = fa(lib).flex_attention(q, k, v, score_mod=SCORE_MODS["softcap"](lib, {}),
                                          return_aux=fa(lib).AuxRequest(lse=True))
        if not grads:
            return str(out.dtype), out.float(), aux.lse
        return [(str(g.dtype), g.float()) for g in backprop(lib, [out.float()], [q, k, v])]

    both(program, False, rtol=1e-6, atol=1e-6)
    tol = 1e-2 if dtype == "float16" else 5e-2
    both(program, True, rtol=tol, atol=tol)


def test_autocast_casts_the_inputs_and_keeps_float32_inside():
    def program(lib):
        q, k, v = (leaf(lib, a, "float32") for a in arrays())
        bias = leaf(lib, HEAD_BIAS[:2], "float32")
        with lib.autocast("cpu"):
            out, aux = fa(lib).flex_attention(q, k, v,
                                              score_mod=lambda s, b, h, i, j: s * bias[h],
                                              return_aux=fa(lib).AuxRequest(lse=True))
            doubled = fa(lib).flex_attention(q.double(), k.double(), v.double())
        grads = backprop(lib, [out.float()], [q, k, v, bias])
        return (str(out.dtype), out.float(), aux.lse, str(doubled.dtype),
                [(str(g.dtype), g) for g in grads])

    both(program, rtol=5e-2, atol=5e-2)


def test_mixed_dtypes_follow_the_query():
    def program(lib):
        q, k, v = arrays()
        out = fa(lib).flex_attention(leaf(lib, q, "float32", False), leaf(lib, k, "float64", False),
                                     leaf(lib, v, "float16", False))
        return out

    both(program, rtol=1e-3, atol=1e-3)


def test_default_block_size_against_eager_torch_and_noop_mask():
    def program(lib):
        q, k, v = (leaf(lib, a) for a in arrays(L=130, S=140, seed=2))
        mods = fa(lib)
        mask = mods.create_block_mask(mods.and_masks(MASK_MODS["causal"], mods.noop_mask),
                                      None, None, 130, 140, device="cpu")
        out = mods.flex_attention(q, k, v, block_mask=mask)
        return out, backprop(lib, [out], [q, k, v])

    both(program, rtol=1e-9, atol=1e-10)


def test_blocks_not_listed_are_skipped_as_the_compiled_kernel_does():
    """A BlockMask that lists fewer blocks than its mask_mod keeps: torch's eager path
    evaluates mask_mod everywhere, its compiled kernel (and retrograd) visit only the listed
    blocks. Compared with attention over the listed keys alone."""
    q, k, v = arrays(B=1, Hq=1, Hkv=1, L=4, S=4)
    r = fa(retrograd)
    mask = r.BlockMask.from_kv_blocks(retrograd.tensor([[[1, 2]]], dtype=retrograd.int32),
                                      retrograd.tensor([[[[0, 1], [1, 0]]]],
                                                       dtype=retrograd.int32),
                                      BLOCK_SIZE=2)
    out = r.flex_attention(*(leaf(retrograd, a, grad=False) for a in (q, k, v)),
                           block_mask=mask)
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    first = torch.nn.functional.scaled_dot_product_attention(tq[:, :, :2], tk[:, :, :2],
                                                             tv[:, :, :2])
    second = torch.nn.functional.scaled_dot_product_attention(tq[:, :, 2:], tk, tv)
    assert_same(out, torch.cat([first, second], dim=2), rtol=1e-9, atol=1e-10)


def test_partial_blocks_use_mask_mod_and_full_blocks_do_not():
    q, k, v = arrays(B=1, Hq=1, Hkv=1, L=4, S=4)
    r = fa(retrograd)
    one = retrograd.tensor([[[1, 1]]], dtype=retrograd.int32)
    mask = r.BlockMask.from_kv_blocks(
        one, retrograd.tensor([[[[0, 1], [1, 0]]]], dtype=retrograd.int32),
        one, retrograd.tensor([[[[1, 0], [0, 1]]]], dtype=retrograd.int32),
        BLOCK_SIZE=2, mask_mod=lambda b, h, qi, ki: qi == ki)
    out = r.flex_attention(*(leaf(retrograd, a, grad=False) for a in (q, k, v)),
                           block_mask=mask)
    dense = np.array([[1, 0, 1, 1], [0, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 1]], dtype=bool)
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    expected = torch.nn.functional.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=torch.from_numpy(dense))
    assert_same(out, expected, rtol=1e-9, atol=1e-10)


def test_gradcheck_first_and_second_order():
    q, k, v = (leaf(retrograd, a) for a in arrays(B=1, L=3, S=4, E=3, Ev=2))
    bias = leaf(retrograd, RNG.standard_normal(2))
    mask = fa(retrograd).create_block_mask(MASK_MODS["causal"], None, None, 3, 4, device="cpu",
                                           BLOCK_SIZE=2)

    def fn(q, k, v, bias):
        out, aux = fa(retrograd).flex_attention(
            q, k, v, score_mod=lambda s, b, h, i, j: 3 * retrograd.tanh(s / 3) + bias[h],
            block_mask=mask, return_aux=fa(retrograd).AuxRequest(lse=True))
        return out, aux.lse

    assert retrograd.autograd.gradcheck(fn, (q, k, v, bias))
    assert retrograd.autograd.gradgradcheck(fn, (q, k, v, bias))


def test_compile_gives_the_eager_result():
    q, k, v = (leaf(retrograd, a, "float32") for a in arrays())
    bias = leaf(retrograd, RNG.standard_normal(2), "float32")
    mask = fa(retrograd).create_block_mask(MASK_MODS["sliding"], None, None, 6, 9,
                                           device="cpu", BLOCK_SIZE=4)

    def fn(q, k, v, bias):
        return fa(retrograd).flex_attention(q, k, v, block_mask=mask,
                                            score_mod=lambda s, b, h, i, j: s + bias[h])

    eager = fn(q, k, v, bias)
    eager_grads = retrograd.autograd.grad(eager.sum(), (q, k, v, bias))
    compiled = retrograd.compile(fn, fullgraph=True)  # captured whole, not run eagerly
    for _ in range(2):
        out = compiled(q, k, v, bias)
        grads = retrograd.autograd.grad(out.sum(), (q, k, v, bias))
        assert_same(out, eager, rtol=1e-6, atol=1e-6)
        assert_same(list(grads), list(eager_grads), rtol=1e-5, atol=1e-6)


def call(lib, shapes, **kw):
    q, k, v = (lib.zeros(s) for s in shapes)
    return fa(lib).flex_attention(q, k, v, **kw).shape


QKV = [(1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)]
ERRORS = {
    "three_dims": ([(2, 4, 8)] * 3, {}),
    "one_dim": ([(8,)] * 3, {}),
    "embedding": ([(1, 2, 4, 8), (1, 2, 4, 6), (1, 2, 4, 8)], {}),
    "heads": ([(1, 4, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)], {}),
    "gqa_heads": ([(1, 4, 4, 8), (1, 3, 4, 8), (1, 3, 4, 8)], {"enable_gqa": True}),
    "batch": ([(2, 2, 4, 8), (3, 2, 4, 8), (3, 2, 4, 8)], {}),
    "batch_one": ([(2, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)], {}),
    "value_length": ([(1, 2, 4, 8), (1, 2, 5, 8), (1, 2, 6, 8)], {}),
    "value_batch": ([(1, 2, 4, 8), (1, 2, 5, 8), (2, 2, 5, 8)], {}),
    "lse_and_aux": (QKV, {"return_lse": True, "return_aux": "lse"}),
    "max_scores": (QKV, {"return_aux": "max"}),
    "bad_backend": (QKV, {"kernel_options": {"BACKEND": "X"}}),
    "backend_and_force": (QKV, {"kernel_options": {"BACKEND": "FLASH",
                                                   "FORCE_USE_FLEX_ATTENTION": True}}),
    "output_lse_option": (QKV, {"kernel_options": {"OUTPUT_LOGSUMEXP": True}}),
    "mask_too_small": ([(1, 2, 8, 8)] * 3, {"mask": (4, 4)}),
    "mask_too_large": (QKV, {"mask": (8, 8)}),
    "mask_mixed": ([(1, 2, 8, 8), (1, 2, 4, 8), (1, 2, 4, 8)], {"mask": (4, 8)}),
    "mask_batch": ([(2, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)], {"mask": (4, 4, 3)}),
    "sliced_mask": (QKV, {"mask": (4, 4, 2, "slice")}),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_as_torch(case):
    shapes, kw = ERRORS[case]

    def program(lib):
        kw2 = dict(kw)
        mods = fa(lib)
        if kw2.get("return_aux") == "lse":
            kw2["return_aux"] = mods.AuxRequest(lse=True)
        elif kw2.get("return_aux") == "max":
            kw2["return_aux"] = mods.AuxRequest(max_scores=True)
        if "mask" in kw2:
            spec = kw2.pop("mask")
            batch = spec[2] if len(spec) > 2 else None
            mask = mods.create_block_mask(MASK_MODS["causal"], batch, None, spec[0], spec[1],
                                          device="cpu", BLOCK_SIZE=2)
            kw2["block_mask"] = mask[0:1] if len(spec) > 3 else mask
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return error_of(call, lib, shapes, **kw2)

    result = both(program)
    assert result[0] == "raised"


@pytest.mark.parametrize("arity", [4, 6])
def test_score_mod_of_wrong_arity(arity):
    """torch stops while tracing the score_mod; the first lines of its message are kept."""
    mod = (lambda s, b, h, q: s) if arity == 4 else (lambda s, b, h, q, k, z: s)
    errors = []
    for lib in (retrograd, torch):
        q = lib.zeros(1, 2, 4, 8)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError) as e:
                fa(lib).flex_attention(q, q, q, score_mod=mod)
        errors.append(str(e.value).splitlines()[:3])
    assert errors[0] == errors[1]


def test_names():
    assert sorted(fa(retrograd).__all__) == sorted(tfa.__all__)
    assert fa(retrograd).AuxRequest._fields == tfa.AuxRequest._fields
    assert fa(retrograd).AuxOutput._fields == tfa.AuxOutput._fields
    assert set(fa(retrograd).FlexKernelOptions.__annotations__) == \
        set(tfa.FlexKernelOptions.__annotations__)
    import inspect

    for name in ("flex_attention", "create_block_mask", "create_mask"):
        ours = inspect.signature(getattr(fa(retrograd), name))
        theirs = inspect.signature(getattr(tfa, name))
        assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in theirs.parameters.values()], name


def test_score_mod_sees_broadcast_index_tensors_and_no_warning_is_given():
    seen = []

    def score_mod(s, b, h, q, k):
        seen.append([(tuple(t.shape), t.dtype) for t in (s, b, h, q, k)])
        return s

    q, k, v = (leaf(retrograd, a, "float32") for a in arrays())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fa(retrograd).flex_attention(q, k, v, score_mod=score_mod)
    i64 = retrograd.int64
    assert seen == [[((2, 2, 6, 9), retrograd.float32), ((2, 1, 1, 1), i64), ((1, 2, 1, 1), i64),
                     ((1, 1, 6, 1), i64), ((1, 1, 1, 9), i64)]]


def test_score_mod_that_is_not_elementwise_is_refused():
    """A reduction over the scores gives a shape that does not broadcast back: refused, where
    torch's vmap would reduce a scalar."""
    q, k, v = (leaf(retrograd, a, "float32") for a in arrays())
    with pytest.raises(RuntimeError, match="must be elementwise"):
        fa(retrograd).flex_attention(q, k, v, score_mod=lambda s, b, h, i, j: s.amax(-1))


def test_backward_on_the_cpu_where_torch_refuses(monkeypatch):
    """Deliberate difference: torch's CPU path raises for inputs that require grad; retrograd
    computes the gradients (those compared above with torch's eager formulas)."""
    monkeypatch.undo()  # torch's own check back in place
    q = torch.zeros(1, 1, 2, 4, requires_grad=True)
    with pytest.raises(NotImplementedError, match="does not support backward on CPU"):
        tfa.flex_attention(q, q, q)
    r = retrograd.zeros(1, 1, 2, 4, requires_grad=True)
    fa(retrograd).flex_attention(r, r, r).sum().backward()
    assert r.grad is not None and r.grad.shape == r.shape
