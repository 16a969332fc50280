"""nn.attention.flex_attention's BlockMask, create_block_mask, create_mask and the mask
combinators against torch 2.13: the block lists (kv and q side, partial and full), to_dense,
the text picture, sparsity, slicing, from_kv_blocks, _adjust, repr, errors."""

from __future__ import annotations

import warnings
from importlib import import_module

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of

torch = pytest.importorskip("torch")

DOCS = np.array([[0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3], [0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]])


def fa(lib):
    return import_module(f"{lib.__name__}.nn.attention.flex_attention")


def mask_mods(lib):
    ids = lib.from_numpy(DOCS)
    return {
        "causal": lambda b, h, q, k: q >= k,
        "sliding": lambda b, h, q, k: (q >= k) & (q - k <= 3),
        "prefix_lm": lambda b, h, q, k: (k <= 4) | (q >= k),
        "document": lambda b, h, q, k: (ids[b, q] == ids[b, k]) & (q >= k),
        "per_head": lambda b, h, q, k: (q - k).abs() <= h * 2,
        "noop": fa(lib).noop_mask,
        "nothing": lambda b, h, q, k: q < 0,
    }


def layout(bm):
    return {"tensors": [getattr(bm, a) if getattr(bm, a) is not None else "none"
                        for a in ("kv_num_blocks", "kv_indices", "full_kv_num_blocks",
                                  "full_kv_indices", "q_num_blocks", "q_indices",
                                  "full_q_num_blocks", "full_q_indices")],
            "block_size": bm.BLOCK_SIZE, "seq_lengths": bm.seq_lengths, "shape": bm.shape,
            "sparsity": bm.sparsity(), "dense": bm.to_dense(), "str": str(bm),
            "repr": repr(bm), "numel": bm.numel()}


# the document ids cover 11 positions, so that mask is built for (11, 11) only
CASES = [(name, lengths) for name in ("causal", "sliding", "prefix_lm", "document", "per_head",
                                      "noop", "nothing")
         for lengths in ([(11, 11)] if name == "document" else [(11, 11), (8, 11), (11, 6)])]


@pytest.mark.parametrize("block", [2, 3, (2, 4), 128])
@pytest.mark.parametrize("name,lengths", CASES)
def test_create_block_mask_as_torch(name, lengths, block):
    batch = 2 if name == "document" else None
    heads = 3 if name == "per_head" else None

    def program(lib):
        bm = fa(lib).create_block_mask(mask_mods(lib)[name], batch, heads, *lengths,
                                       device="cpu", BLOCK_SIZE=block)
        return layout(bm)

    both(program)


def test_without_separate_full_blocks_and_default_device():
    def program(lib):
        bm = fa(lib).create_block_mask(mask_mods(lib)["sliding"], 1, 2, 9, 9,
                                       BLOCK_SIZE=2, separate_full_blocks=False)
        return layout(bm), str(bm.kv_num_blocks.device)

    both(program)


@pytest.mark.parametrize("name", ["causal", "document", "per_head", "noop"])
def test_create_mask_as_torch(name):
    def program(lib):
        return fa(lib).create_mask(mask_mods(lib)[name], 2, 3, 11, 11, device="cpu")

    both(program)


def test_create_mask_of_a_score_mod_and_none_sizes():
    def program(lib):
        def score_mod(s, b, h, q, k):
            return lib.where(q >= k + 1, s, -float("inf"))

        return fa(lib).create_mask(score_mod, None, None, 5, 7, device="cpu")

    both(program)


def test_and_or_masks():
    def program(lib):
        mods, m = fa(lib), mask_mods(lib)
        both_ = mods.and_masks(m["causal"], m["prefix_lm"], m["sliding"])
        either = mods.or_masks(m["sliding"], m["prefix_lm"])
        return [mods.create_mask(f, 1, 1, 9, 9, device="cpu")
                for f in (both_, either, mods.and_masks(), mods.or_masks())]

    both(program)


def test_combinator_errors():
    def program(lib):
        return [error_of(fa(lib).and_masks, lambda *a: a, 3),
                error_of(fa(lib).or_masks, "x")]

    both(program)


def test_to_string_limits_and_grid():
    def program(lib):
        bm = fa(lib).create_block_mask(mask_mods(lib)["per_head"], 2, 3, 40, 40, device="cpu",
                                       BLOCK_SIZE=2)
        return [bm.to_string(), bm.to_string(grid_size=5, limit=2),
                bm.to_string(grid_size=(3, 7), limit=10), bm.to_string(grid_size=-1, limit=1)]

    both(program)


@pytest.mark.parametrize("index", ["int", "negative", "pair", "slices", "tensor_rows"])
def test_getitem_as_torch(index):
    def program(lib):
        bm = fa(lib).create_block_mask(mask_mods(lib)["per_head"], 2, 3, 11, 11, device="cpu",
                                       BLOCK_SIZE=2)
        key = {"int": 1, "negative": -1, "pair": (0, 2), "slices": (slice(0, 2), slice(1, 3)),
               "tensor_rows": (slice(None), 1, lib.tensor([1, 3], dtype=lib.int32))}[index]
        sliced = bm[key]
        q = lib.zeros(1, 1, 11, 4)
        error = error_of(fa(lib).flex_attention, q, q, q, block_mask=sliced)
        return layout(sliced), error, error_of(sliced.mask_mod, *([lib.tensor(0)] * 4))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(program)


def test_from_kv_blocks_and_adjust():
    def program(lib):
        mods = fa(lib)
        num = lib.tensor([[[1, 2, 2]]], dtype=lib.int32)
        idx = lib.tensor([[[[0, 1, 2], [1, 0, 2], [2, 0, 1]]]], dtype=lib.int32)
        full_num = lib.tensor([[[0, 0, 1]]], dtype=lib.int32)
        full_idx = lib.tensor([[[[0, 1, 2], [0, 1, 2], [1, 0, 2]]]], dtype=lib.int32)
        plain = mods.BlockMask.from_kv_blocks(num, idx, BLOCK_SIZE=4)
        with_full = mods.BlockMask.from_kv_blocks(num, idx, full_num, full_idx,
                                                  BLOCK_SIZE=(2, 4), seq_lengths=(6, 10))
        no_q = mods.BlockMask.from_kv_blocks(num, idx, compute_q_blocks=False)
        causal = mods.create_block_mask(mask_mods(lib)["causal"], 1, 2, 16, 16, device="cpu",
                                        BLOCK_SIZE=4)
        return [layout(plain), layout(with_full), layout(no_q), layout(causal._adjust(9, 7)),
                causal.as_tuple()[:-1], with_full.as_tuple(flatten=False)[:-1],
                plain.mask_mod is mods.noop_mask]

    both(program)


def score_only(s, b, h, q, k):
    return s


def test_block_mask_errors():
    def program(lib):
        mods = fa(lib)
        one = lib.ones(2, dtype=lib.int32)
        pair = lib.ones(1, 1, 2, dtype=lib.int32), lib.zeros(1, 1, 2, 2, dtype=lib.int32)
        return [
            error_of(mods.BlockMask.from_kv_blocks, one, one),
            error_of(mods.BlockMask.from_kv_blocks, *pair, full_kv_num_blocks=pair[0]),
            error_of(mods.BlockMask.from_kv_blocks, *pair, dq_kv_order=3),
            error_of(mods.BlockMask, (2, 2), *pair, None, None, None, None, pair[0], None),
            error_of(mods.create_block_mask, score_only, 1, 1, 4, 4, device="cpu"),
            error_of(mods.create_block_mask, lambda b, h, q: q, 1, 1, 4, 4, device="cpu"),
            error_of(mods.create_mask, lambda b, h: b, 1, 1, 4, 4, device="cpu"),
            error_of(mods.create_block_mask, mods.noop_mask, 1, 1, 4, 4, device="cpu",
                     dq_kv_order=None),
        ]

    result = both(program)
    assert all(r[0] == "raised" for r in result)


def test_create_block_mask_compile_flag_warns(monkeypatch):
    # torch's _compile=True runs create_block_mask under torch.compile; the warning comes
    # first, so torch.compile is made the identity to keep the test off the compiler
    monkeypatch.setattr(torch, "compile", lambda fn, *args, **kwargs: fn)

    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bm = fa(lib).create_block_mask(mask_mods(lib)["causal"], 1, 1, 8, 8, device="cpu",
                                           BLOCK_SIZE=4, _compile=True)
        return layout(bm), [(w.category.__name__, str(w.message)) for w in caught
                            if str(w.message).startswith("_compile flag")]

    both(program)


def test_devices():
    r = fa(retrograd)
    bm = r.create_block_mask(mask_mods(retrograd)["causal"], 1, 1, 8, 8,
                             device=retrograd.device("cpu"), BLOCK_SIZE=4)
    moved = bm.to("cpu")
    assert moved.kv_indices.equal(bm.kv_indices) and moved.mask_mod is bm.mask_mod
    for device in ("cuda", "cuda:0"):
        with pytest.raises(RuntimeError, match="retrograd runs on the CPU"):
            r.create_block_mask(r.noop_mask, 1, 1, 8, 8, device=device)
        with pytest.raises(RuntimeError, match="retrograd runs on the CPU"):
            r.create_mask(r.noop_mask, 1, 1, 8, 8, device=device)
