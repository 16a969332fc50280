"""retrograd.nn.attention.flex_attention: torch's FlexAttention, run eagerly.

`flex_attention` computes attention whose scores a user function edits (`score_mod`) and whose
pattern a `BlockMask` restricts. There is no fused kernel: the (B, H, L, S) score tensor is
made once and `score_mod` and the mask function are called once on all of it, with index
tensors shaped to broadcast (b: (B,1,1,1), h: (1,H,1,1), q_idx: (1,1,L,1), kv_idx: (1,1,1,S)),
where torch's eager path maps them over every element with vmap. Elementwise functions (the
usual biases, softcapping, lookups such as `bias[h]` or `rel[q_idx - kv_idx]`) give the same
values either way; the result is differentiable through the ops they use, captured tensors
included. A BlockMask is applied as torch's compiled kernel applies it: keys in blocks it does
not list are skipped, in its partial blocks `mask_mod` decides, its full blocks are kept whole.
"""

from __future__ import annotations

import inspect
import math
import operator
from collections.abc import Callable
from enum import Enum
from typing import Any, Literal, NamedTuple, TypedDict

import numpy as np

import retrograd
from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor
from retrograd.nn.attention import _flex_blocks as blocks
from retrograd.nn.attention._flex_block_mask import (
    _DEFAULT_SPARSE_BLOCK_SIZE,
    _LARGE_SPARSE_BLOCK_SIZE,
    BlockMask,
    _array,
    _int32,
    _sliced_mask_mod_error,
    noop_mask,
)
from retrograd.nn.attention._flex_checks import (
    _check_block_mask,
    _check_inputs,
    _check_kernel_options,
    _check_score_mod,
)

__all__ = [
    "BlockMask",
    "flex_attention",
    "AuxOutput",
    "AuxRequest",
    "FlexKernelOptions",
    "create_block_mask",
    "create_mask",
    "or_masks",
    "and_masks",
    "noop_mask",
]

_score_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor], Tensor]
_mask_mod_signature = Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]
_Backend = Literal["AUTO", "TRITON", "FLASH", "TRITON_DECODE"]


# torch's switch to run score_mod/mask_mod uncompiled for debugging; retrograd always runs
# them uncompiled (print and breakpoints work), so it is kept for programs that set it and
# changes nothing. For the same reason retrograd does not give torch's warning that
# flex_attention was called without torch.compile.
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False

# torch warns about return_lse once per process; the same here
_WARNINGS_SHOWN: set[str] = set()


def _warn_once(warning_id: str, message: str, category: type[Warning] = UserWarning) -> None:
    if warning_id not in _WARNINGS_SHOWN:
        _ws.warn(message, category, stacklevel=3)
        _WARNINGS_SHOWN.add(warning_id)


class FlexKernelOptions(TypedDict, total=False):
    """Options for torch's FlexAttention kernels; retrograd checks BACKEND as torch does and
    otherwise has no kernel to tune."""

    num_warps: int
    num_stages: int
    BLOCK_M: int
    BLOCK_N: int
    BLOCK_M1: int
    BLOCK_N1: int
    BLOCK_M2: int
    BLOCK_N2: int
    PRESCALE_QK: bool
    ROWS_GUARANTEED_SAFE: bool
    BLOCKS_ARE_CONTIGUOUS: bool
    WRITE_DQ: bool
    FORCE_USE_FLEX_ATTENTION: bool
    USE_TMA: bool
    kpack: int
    matrix_instr_nonkdim: int
    waves_per_eu: int
    BACKEND: _Backend


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention should return."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's auxiliary outputs (None where not requested)."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


class _ModificationType(Enum):
    SCORE_MOD = 1
    MASK_MOD = 2
    UNKNOWN = 3


def _get_mod_type(fn: Callable[..., Any]) -> _ModificationType:
    """A score_mod takes 5 positional arguments, a mask_mod 4 (those with defaults aside)."""
    if hasattr(fn, "__code__"):
        count = fn.__code__.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        count = sum(1 for p in inspect.signature(fn).parameters.values()
                    if p.default is inspect.Parameter.empty)
    if count not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {count}")
    return _ModificationType.SCORE_MOD if count == 5 else _ModificationType.MASK_MOD


def _identity(score: Tensor, batch: Tensor, head: Tensor, token_q: Tensor,
              token_kv: Tensor) -> Tensor:
    return score


def _combined(mask_mods: tuple, start: bool, combine: Callable, name: str) -> Callable:
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def combined(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_full((), start, dtype=retrograd.bool)
        for mask in mask_mods:
            result = combine(result, mask(b, h, q_idx, kv_idx))
        return result

    combined.__name__ = combined.__qualname__ = name
    return combined


def or_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """The union of the masks: a position is kept when any of them keeps it."""
    return _combined(mask_mods, False, operator.or_, "or_mask")


def and_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """The intersection of the masks: a position is kept when all of them keep it."""
    return _combined(mask_mods, True, operator.and_, "and_mask")


def _default_device(device: Any) -> Any:
    # torch's default is the current accelerator, else the CPU; retrograd has none
    return "cpu" if device is None else device


def _indices(B: int, H: int, Q_LEN: int, KV_LEN: int, device: Any = "cpu"
             ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """b, h, q_idx, kv_idx as int64 tensors laid along dims 0..3, to broadcast together."""
    return (retrograd.arange(B, device=device).view(B, 1, 1, 1),
            retrograd.arange(H, device=device).view(1, H, 1, 1),
            retrograd.arange(Q_LEN, device=device).view(1, 1, Q_LEN, 1),
            retrograd.arange(KV_LEN, device=device).view(1, 1, 1, KV_LEN))


def _broadcast_result(out: Any, shape: tuple[int, ...], what: str) -> Tensor:
    """A mod function's result spread over the whole score tensor; functions that are not
    elementwise (reductions, chained indexing t[i][j]) give other shapes and are refused."""
    if not isinstance(out, Tensor):
        out = retrograd.as_tensor(out)
    try:
        full = np.broadcast_shapes(tuple(out.shape), shape)
    except ValueError:
        full = None
    if full != shape:
        raise RuntimeError(
            f"{what} returned a tensor of shape {tuple(out.shape)}, which does not broadcast "
            f"to the scores' shape {shape}: retrograd calls it once on index tensors shaped "
            "(B,1,1,1), (1,H,1,1), (1,1,L,1), (1,1,1,S), so it must be elementwise (index a "
            "captured tensor as t[i, j], not t[i][j])")
    return out if tuple(out.shape) == shape else out.expand(shape)


def create_mask(mod_fn: _score_mod_signature | _mask_mod_signature, B: int | None,
                H: int | None, Q_LEN: int, KV_LEN: int, device: Any = None) -> Tensor:
    """The dense (B, H, Q_LEN, KV_LEN) mask of a mask_mod, or of a score_mod (where it does
    not give -inf)."""
    device = _default_device(device)
    B = 1 if B is None else B
    H = 1 if H is None else H
    b, h, m, n = _indices(B, H, Q_LEN, KV_LEN, device)
    shape = (B, H, Q_LEN, KV_LEN)
    if _get_mod_type(mod_fn) == _ModificationType.SCORE_MOD:
        out = mod_fn(retrograd.zeros(shape, device=device), b, h, m, n)  # type: ignore[call-arg]
        return _broadcast_result(~retrograd.isneginf(out), shape, "score_mod").contiguous()
    mask = mod_fn(b, h, m, n)  # type: ignore[call-arg]
    return _broadcast_result(mask, shape, "mask_mod").contiguous()


def create_block_mask(mask_mod: _mask_mod_signature, B: int | None, H: int | None,
                      Q_LEN: int, KV_LEN: int, device: Any = None,
                      BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile: bool = False, separate_full_blocks: bool = True,
                      compute_dq_write_order: bool = False,
                      dq_kv_order: bool = True) -> BlockMask:
    """The BlockMask of a mask_mod: blocks where it keeps every element are full (with
    separate_full_blocks), blocks where it keeps some are partial, the rest are skipped."""
    device = _default_device(device)
    if _get_mod_type(mask_mod) != _ModificationType.MASK_MOD:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B = 1 if B is None else B
    H = 1 if H is None else H
    q_block, kv_block = (BLOCK_SIZE, BLOCK_SIZE) if isinstance(BLOCK_SIZE, int) else BLOCK_SIZE
    if _compile:
        _ws.warn(
            "_compile flag on create_block_mask was originally added to work around a "
            "torch.compile limitation. That limitation has since been addressed. So, to "
            "compile create_block_mask, we suggest doing torch.compile(create_block_mask). "
            "This still works for now, but will be removed in the future.",
            DeprecationWarning, stacklevel=2)
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    if compute_dq_write_order:
        # the write order feeds torch's deterministic CUDA backward kernel only
        raise NotImplementedError(
            "compute_dq_write_order=True is metadata for a CUDA kernel; retrograd runs on "
            "the CPU")
    mask = _array(create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)).astype(bool)
    partial, full = blocks.mask_to_blocks(mask, q_block, kv_block, separate_full_blocks)
    kv = blocks.dense_to_ordered(partial)
    full_kv = blocks.dense_to_ordered(full) if full is not None else None
    return BlockMask.from_kv_blocks(
        _int32(kv[0]), _int32(kv[1]),
        _int32(full_kv[0]) if full_kv is not None else None,
        _int32(full_kv[1]) if full_kv is not None else None,
        BLOCK_SIZE=(q_block, kv_block), mask_mod=mask_mod, seq_lengths=(Q_LEN, KV_LEN))


def _is_noop(block_mask: BlockMask | None) -> bool:
    return block_mask is None or tuple(block_mask.BLOCK_SIZE) == (_LARGE_SPARSE_BLOCK_SIZE,
                                                                  _LARGE_SPARSE_BLOCK_SIZE)


def _element_mask(block_mask: BlockMask, shape: tuple[int, int, int, int]) -> Tensor:
    """Which (b, h, q, kv) scores the BlockMask keeps, as torch's kernel visits them: full
    blocks whole, partial blocks where mask_mod holds, nothing elsewhere. The mask's batch and
    head dims are indexed modulo their size, so a size of 1 broadcasts. Only the block lists
    are read as arrays; mask_mod runs on tensors, so a compiled function captures it."""
    B, H, L, S = shape
    q_block, kv_block = block_mask.BLOCK_SIZE

    def grid(num: Tensor, idx: Tensor) -> Tensor:
        num_a, idx_a = _array(num), _array(idx)
        while idx_a.ndim < 4:
            num_a, idx_a = num_a[None], idx_a[None]
        cols = max(idx_a.shape[-1], -(-S // kv_block))
        dense = blocks.ordered_to_dense(num_a, idx_a, cols)
        dense = dense[np.arange(B) % dense.shape[0]][:, np.arange(H) % dense.shape[1]]
        return retrograd.from_numpy(np.ascontiguousarray(
            blocks.blocks_to_elements(dense, q_block, kv_block, L, S)))

    b, h, m, n = _indices(B, H, L, S)
    mask = _broadcast_result(block_mask.mask_mod(b, h, m, n), shape, "mask_mod")
    kept = grid(block_mask.kv_num_blocks, block_mask.kv_indices) & mask.to(retrograd.bool)
    if block_mask.full_kv_num_blocks is not None and block_mask.full_kv_indices is not None:
        kept = kept | grid(block_mask.full_kv_num_blocks, block_mask.full_kv_indices)
    return kept


def _attend(query: Tensor, key: Tensor, value: Tensor, score_mod: Callable[..., Any],
            block_mask: BlockMask | None, scale: float) -> tuple[Tensor, Tensor]:
    """Output and logsumexp (natural log) of one attention, as torch's eager path computes
    them: scores, score_mod and softmax in float32 (float64 for float64 queries), the
    probabilities cast to the query's dtype before they weight the values."""
    working = retrograd.float64 if query.dtype == retrograd.float64 else retrograd.float32
    groups = query.size(1) // key.size(1)
    if groups > 1:
        key = key.repeat_interleave(groups, dim=1)
        value = value.repeat_interleave(groups, dim=1)
    bq, bkv = query.size(0), key.size(0)
    if not (bq == bkv or (bq > 1 and bkv == 1)):
        raise RuntimeError(f"Bq and Bkv must broadcast. Got Bq={bq} and Bkv={bkv}")
    key = key.expand((bq, *key.size()[1:]))
    value = value.expand((bq, *value.size()[1:]))
    scores = (query.to(working) @ key.to(working).transpose(-2, -1)) * scale
    scores = scores.to(working)
    shape = tuple(scores.shape)
    _check_score_mod(score_mod)
    b, h, m, n = _indices(*shape)
    modded = _broadcast_result(score_mod(scores, b, h, m, n), shape, "score_mod")
    minus_inf = retrograd.tensor(-math.inf, dtype=working)
    if _is_noop(block_mask):
        kept = retrograd.ones(shape, dtype=retrograd.bool)
    else:
        kept = _element_mask(block_mask, shape)  # type: ignore[arg-type]
    post = retrograd.where(kept, modded, minus_inf)
    # rows with no finite score give 0 and lse -inf; softmax sees 0 there, so no NaN (nor a
    # NaN gradient) comes out of them. Written without branching on values, so that a
    # compiled function captures it whole.
    dead = (post == -math.inf).all(-1, keepdim=True)
    post = retrograd.where(dead, retrograd.tensor(0.0, dtype=post.dtype), post)
    lse = retrograd.where(dead[..., 0], minus_inf.to(post.dtype), post.logsumexp(-1))
    probs = retrograd.where(dead, retrograd.tensor(0.0, dtype=post.dtype), post.softmax(-1))
    return probs.to(query.dtype) @ value.to(query.dtype), lse


def flex_attention(query: Tensor, key: Tensor, value: Tensor,
                   score_mod: _score_mod_signature | None = None,
                   block_mask: BlockMask | None = None, scale: float | None = None,
                   enable_gqa: bool = False, return_lse: bool = False,
                   kernel_options: FlexKernelOptions | None = None, *,
                   return_aux: AuxRequest | None = None) -> Any:
    """Attention of query (B, Hq, L, E) over key (B, Hkv, S, E) and value (B, Hkv, S, Ev):
    softmax over S of score_mod(q @ k^T * scale, b, h, q_idx, kv_idx), kept where block_mask
    keeps it, times value; returns (B, Hq, L, Ev), with the logsumexp (B, Hq, L) when
    return_lse or return_aux=AuxRequest(lse=True) asks for it. Differentiable, captured
    tensors of score_mod included (torch's CPU path refuses backward)."""
    _check_inputs(query, key, value)
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not enable_gqa and query.size(-3) != key.size(-3):
        raise ValueError(
            "Expect query and key/value to have the same number of heads "
            f"but got Hq={query.size(-3)} and Hkv={key.size(-3)}. "
            "Try setting enable_gqa=True for GQA.")
    if enable_gqa and query.size(1) % key.size(1) != 0:
        raise ValueError(
            "Expect number of query heads to be a multiple of kv heads for GQA "
            f"but got Hq={query.size(1)} and Hkv={key.size(1)}.")
    if query.size(0) != key.size(0):
        if block_mask is None:
            raise ValueError(
                "Expect query and key/value to have the same batch size, "
                "or non-none block_mask, "
                f"but got block_mask=None, Bq={query.size(0)}, and Bkv={key.size(0)}.")
        if block_mask.kv_num_blocks.size(0) != query.size(0):
            raise ValueError(
                "Expect query and key/value to have the same batch size, "
                "or block_mask and query to have the same batch size, "
                f"but got Bq={query.size(0)}, Bkv={key.size(0)}, "
                f"B_block_mask={block_mask.kv_num_blocks.size(0)}.")
    if score_mod is None:
        score_mod = _identity
    if block_mask is not None and getattr(block_mask, "mask_mod", None) \
            is _sliced_mask_mod_error:
        raise RuntimeError("Cannot use mask_mod from a sliced BlockMask")
    if not _is_noop(block_mask):
        _check_block_mask(block_mask, query.size(-2), key.size(-2))  # type: ignore[arg-type]
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    if return_lse and return_aux is not None:
        raise ValueError(
            "Cannot specify both return_lse and return_aux. "
            "return_lse is deprecated, please use return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("deprecated_return_lse",
                   "return_lse is deprecated and will be removed in v2.10. "
                   "Please use return_aux=AuxRequest(lse=True) instead.",
                   category=FutureWarning)
    _check_kernel_options(kernel_options, return_aux is not None and return_aux.max_scores)
    if retrograd.is_autocast_enabled("cpu"):
        # as torch's: the inputs are cast to the autocast dtype, then attention (score_mod
        # included) runs with autocast off, so it keeps its float32 working precision
        low = retrograd.get_autocast_dtype("cpu")
        query, key, value = (t.to(low) if t.is_floating_point() and t.dtype != retrograd.float64
                             else t for t in (query, key, value))
        with retrograd.autocast("cpu", enabled=False):
            out, lse = _attend(query, key, value, score_mod, block_mask, scale)
    else:
        out, lse = _attend(query, key, value, score_mod, block_mask, scale)
    if return_aux is not None:
        return out, AuxOutput(lse=lse if return_aux.lse else None, max_scores=None)
    if return_lse:
        return out, lse
    return out
