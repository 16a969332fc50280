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

import functools
import inspect
import itertools
import math
import operator
import warnings
from collections.abc import Callable
from enum import Enum
from typing import Any, Literal, NamedTuple, TypedDict

import numpy as np

import retrograd
from retrograd._tensor import Tensor
from retrograd.nn.attention import _flex_blocks as blocks

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

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30

# torch's switch to run score_mod/mask_mod uncompiled for debugging; retrograd always runs
# them uncompiled (print and breakpoints work), so it is kept for programs that set it and
# changes nothing. For the same reason retrograd does not give torch's warning that
# flex_attention was called without torch.compile.
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False

# torch warns about return_lse once per process; the same here
_WARNINGS_SHOWN: set[str] = set()


def _warn_once(warning_id: str, message: str, category: type[Warning] = UserWarning) -> None:
    if warning_id not in _WARNINGS_SHOWN:
        warnings.warn(message, category, stacklevel=3)
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


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """Returns a noop mask_mod"""
    return batch.new_ones(size=(), dtype=retrograd.bool, device=batch.device)


def _sliced_mask_mod_error(batch: Tensor, head: Tensor, token_q: Tensor,
                           token_kv: Tensor) -> Tensor:
    raise RuntimeError(
        "Cannot use mask_mod from a sliced BlockMask. "
        "When you slice a BlockMask using [], the mask_mod attribute is reset. "
        "You must set it from the original BlockMask's mask_mod."
        "\n\nIncorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(sliced_mask.mask_mod, offset)  # WRONG!"
        "\n\nCorrect usage:"
        "\n  base_mask = create_block_mask(my_mask_fn, ...)"
        "\n  sliced_mask = base_mask[:, :, block_idx]"
        "\n  sliced_mask.mask_mod = apply_offset(base_mask.mask_mod, offset)  # Use base_mask!"
    )


def _int32(a: np.ndarray) -> Tensor:
    return retrograd.from_numpy(np.ascontiguousarray(a, dtype=np.int32))


def _array(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def _transpose_ordered(num_blocks: Tensor, indices: Tensor) -> tuple[Tensor, Tensor]:
    counts, order = blocks.transpose_ordered(_array(num_blocks), _array(indices))
    return _int32(counts), _int32(order)


class BlockMask:
    """torch's block-sparse attention mask: per row of Q_BLOCK_SIZE queries, the count and the
    list of KV_BLOCK_SIZE key blocks to visit (kv_num_blocks, kv_indices), optionally split
    into partial blocks (mask_mod applies) and full blocks (full_kv_*, no masking), plus the
    same lists per key block (q_num_blocks, q_indices, full_q_*) that torch's backward uses."""

    seq_lengths: tuple[int, int]
    kv_num_blocks: Tensor
    kv_indices: Tensor
    full_kv_num_blocks: Tensor | None
    full_kv_indices: Tensor | None
    q_num_blocks: Tensor | None
    q_indices: Tensor | None
    full_q_num_blocks: Tensor | None
    full_q_indices: Tensor | None
    dq_write_order: Tensor | None
    dq_write_order_full: Tensor | None
    dq_kv_order: Tensor | None
    dq_kv_order_spt: bool | None
    BLOCK_SIZE: tuple[int, int]
    mask_mod: _mask_mod_signature

    _TENSOR_ATTRS = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
                     "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices",
                     "dq_write_order", "dq_write_order_full", "dq_kv_order"]

    def __init__(self, seq_lengths: tuple[int, int], kv_num_blocks: Tensor, kv_indices: Tensor,
                 full_kv_num_blocks: Tensor | None, full_kv_indices: Tensor | None,
                 q_num_blocks: Tensor | None, q_indices: Tensor | None,
                 full_q_num_blocks: Tensor | None, full_q_indices: Tensor | None,
                 BLOCK_SIZE: tuple[int, int] = (_DEFAULT_SPARSE_BLOCK_SIZE,
                                                _DEFAULT_SPARSE_BLOCK_SIZE),
                 mask_mod: _mask_mod_signature = noop_mask, *,
                 dq_write_order: Tensor | None = None,
                 dq_write_order_full: Tensor | None = None,
                 dq_kv_order: Tensor | None = None,
                 dq_kv_order_spt: bool | None = None) -> None:
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        if (full_q_num_blocks is None) != (full_q_indices is None):
            raise AssertionError(
                "full_q_num_blocks and full_q_indices must be both provided or omitted")
        if dq_write_order_full is not None and dq_write_order is None:
            raise ValueError("dq_write_order_full requires dq_write_order")
        self.seq_lengths = seq_lengths
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.dq_write_order = dq_write_order
        self.dq_write_order_full = dq_write_order_full
        self.dq_kv_order = dq_kv_order
        self.dq_kv_order_spt = dq_kv_order_spt
        self.BLOCK_SIZE = BLOCK_SIZE
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks: Tensor, kv_indices: Tensor,
                       full_kv_num_blocks: Tensor | None = None,
                       full_kv_indices: Tensor | None = None,
                       BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod: _mask_mod_signature | None = None,
                       seq_lengths: tuple[int, int] | None = None,
                       compute_q_blocks: bool = True, *,
                       dq_write_order: Tensor | None = None,
                       dq_write_order_full: Tensor | None = None,
                       dq_kv_order: Tensor | bool | None = None) -> BlockMask:
        """A BlockMask from its kv-side lists; the q-side lists are derived from them."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None and full_kv_indices is not None:
                full_q_num_blocks, full_q_indices = _transpose_ordered(full_kv_num_blocks,
                                                                       full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0],
                           kv_indices.shape[-1] * BLOCK_SIZE[1])
        if dq_kv_order is not None and not isinstance(dq_kv_order, (bool, Tensor)):
            raise ValueError("dq_kv_order must be a bool, Tensor, or None")
        return cls(seq_lengths=seq_lengths, kv_num_blocks=kv_num_blocks, kv_indices=kv_indices,
                   full_kv_num_blocks=full_kv_num_blocks, full_kv_indices=full_kv_indices,
                   q_num_blocks=q_num_blocks, q_indices=q_indices,
                   full_q_num_blocks=full_q_num_blocks, full_q_indices=full_q_indices,
                   BLOCK_SIZE=BLOCK_SIZE,
                   mask_mod=mask_mod if mask_mod is not None else noop_mask,
                   dq_write_order=dq_write_order, dq_write_order_full=dq_write_order_full,
                   dq_kv_order=dq_kv_order if isinstance(dq_kv_order, Tensor) else None,
                   dq_kv_order_spt=dq_kv_order if isinstance(dq_kv_order, bool) else None)

    def as_tuple(self, flatten: bool = True) -> tuple[Any, ...]:
        """The attributes as one tuple (BLOCK_SIZE and seq_lengths spread when flatten)."""
        sizes = (*self.seq_lengths,) if flatten else (self.seq_lengths,)
        block = (*self.BLOCK_SIZE,) if flatten else (self.BLOCK_SIZE,)
        return (*sizes, *(getattr(self, a) for a in self._TENSOR_ATTRS), self.dq_kv_order_spt,
                *block, self.mask_mod)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.kv_indices.shape[:-2]) + tuple(self.seq_lengths)

    def __str__(self) -> str:
        return (f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n"
                f"{self.to_string().strip()}\n)")

    def __getitem__(self, index: Any) -> BlockMask:
        """The mask of some batches, heads or query-block rows (integers keep their dim)."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Slicing BlockMask with tensor dq_kv_order is not supported yet. "
                "Construct a new BlockMask with matching precomputed dq_write_order metadata.")
        index = index if isinstance(index, tuple) else (index,)
        padded = (*index, slice(None), slice(None), slice(None))[:3]
        sizes = self.kv_num_blocks.shape[:3]
        index = tuple((slice(i + n, i + n + 1) if -n <= i < 0 else slice(i, i + 1))
                      if isinstance(i, int) else i for i, n in zip(padded, sizes, strict=True))
        full = self.full_kv_num_blocks, self.full_kv_indices
        sliced = BlockMask.from_kv_blocks(
            self.kv_num_blocks[index], self.kv_indices[index],
            full[0][index] if full[0] is not None else None,
            full[1][index] if full[1] is not None else None,
            BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=_sliced_mask_mod_error,
            seq_lengths=self.seq_lengths, compute_q_blocks=self.q_indices is not None)
        sliced.dq_kv_order_spt = self.dq_kv_order_spt
        return sliced

    def __repr__(self) -> str:
        def shape_or_none(x: Tensor | None) -> Any:
            return x.shape if x is not None else None

        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return ("BlockMask(\n"
                f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
                f"    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape_or_none(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape_or_none(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape_or_none(self.q_num_blocks)},\n"
                f"    q_indices={shape_or_none(self.q_indices)},\n"
                f"    full_q_num_blocks={shape_or_none(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape_or_none(self.full_q_indices)},\n"
                f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={name}\n"
                ")")

    def _adjust(self, new_q_len: int, new_kv_len: int) -> BlockMask:
        """The mask cropped to its upper left new_q_len x new_kv_len corner."""
        if self.dq_kv_order is not None:
            raise NotImplementedError(
                "Adjusting BlockMask with tensor dq_kv_order is not supported yet. "
                "Construct a new BlockMask with matching precomputed dq_write_order metadata.")
        rows = (new_q_len + self.BLOCK_SIZE[0] - 1) // self.BLOCK_SIZE[0]
        cols = (new_kv_len + self.BLOCK_SIZE[1] - 1) // self.BLOCK_SIZE[1]

        def crop(num: Tensor | None, idx: Tensor | None) -> tuple[Any, Any]:
            if num is None or idx is None:
                return None, None
            n, i = blocks.adjust_ordered(_array(num), _array(idx), rows, cols)
            return _int32(n), _int32(i)

        kv = crop(self.kv_num_blocks, self.kv_indices)
        full = crop(self.full_kv_num_blocks, self.full_kv_indices)
        adjusted = self.from_kv_blocks(kv[0], kv[1], full[0], full[1],
                                       BLOCK_SIZE=self.BLOCK_SIZE, mask_mod=self.mask_mod,
                                       seq_lengths=(new_q_len, new_kv_len),
                                       compute_q_blocks=self.q_indices is not None)
        adjusted.dq_kv_order_spt = self.dq_kv_order_spt
        return adjusted

    def numel(self) -> int:
        """Returns the number of elements (not accounting for sparsity) in the mask."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self) -> float:
        """Computes the percentage of blocks that are sparse (i.e. not computed)"""
        computed = int(_array(self.kv_num_blocks).sum())
        if self.full_kv_num_blocks is not None:
            computed += int(_array(self.full_kv_num_blocks).sum())
        computed_size = computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed_size / self.numel())

    def _dense_array(self) -> np.ndarray:
        dense = blocks.ordered_to_dense(_array(self.kv_num_blocks), _array(self.kv_indices),
                                        self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None and self.full_kv_indices is not None:
            dense = dense | blocks.ordered_to_dense(_array(self.full_kv_num_blocks),
                                                    _array(self.full_kv_indices),
                                                    self.full_kv_indices.shape[-1])
        return dense

    def to_dense(self) -> Tensor:
        """Returns a dense block that is equivalent to the block mask."""
        return _int32(self._dense_array())

    def to_string(self, grid_size: int | tuple[int, int] = (20, 20), limit: int = 4) -> str:
        """A picture of the blocks, one per (batch, head): full cells "█", empty " ", mixed
        "░", each summarising enough blocks to fit grid_size (-1: one cell a block)."""
        dense = self._dense_array()
        *batch_dims, rows, cols = dense.shape
        if isinstance(grid_size, int) and grid_size != -1:
            max_rows = max_cols = grid_size
        elif grid_size == -1:
            max_rows, max_cols = rows, cols
        else:
            max_rows, max_cols = grid_size  # type: ignore[misc]
        row_step = max(1, -(-rows // max_rows))
        col_step = max(1, -(-cols // max_cols))

        def picture(batch_idx: tuple[int, ...]) -> str:
            grid = dense[batch_idx]
            text = f"{batch_idx}\n"
            for r in range(0, rows, row_step):
                for c in range(0, cols, col_step):
                    kept = grid[r:r + row_step, c:c + col_step].astype(np.float32).mean()
                    text += ("█" if kept == 1 else " " if kept == 0 else "░") * 2
                text += "\n"
            return text

        parts = []
        for count, batch_idx in enumerate(itertools.product(*[range(i) for i in batch_dims])):
            if count == limit:
                parts.append("...")
                parts.append("To print out more, set BlockMask.to_string(limit=N)")
                parts.append("You can also index (BlockMask[batch, head]) to choose a specific "
                             "batch or head")
                break
            parts.append(picture(batch_idx))
        return "\n".join(parts)

    def to(self, device: Any) -> BlockMask:
        """The BlockMask with its tensors on `device` (retrograd has only the CPU)."""
        moved: dict[str, Any] = {a: (t.to(device) if t is not None else None)
                 for a in self._TENSOR_ATTRS for t in [getattr(self, a)]}
        return BlockMask(seq_lengths=self.seq_lengths, **moved, BLOCK_SIZE=self.BLOCK_SIZE,
                         mask_mod=self.mask_mod, dq_kv_order_spt=self.dq_kv_order_spt)


def or_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """Returns a mask_mod that's the union of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_zeros((), dtype=retrograd.bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def and_masks(*mask_mods: _mask_mod_signature) -> _mask_mod_signature:
    """Returns a mask_mod that's the intersection of provided mask_mods"""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = b.new_ones((), dtype=retrograd.bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


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
        warnings.warn(
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


def _check_score_mod(score_mod: Callable[..., Any]) -> None:
    """torch traces score_mod with five arguments and stops when they do not bind."""
    try:
        signature = inspect.signature(score_mod)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*range(5))
    except TypeError:
        name = getattr(score_mod, "__name__", type(score_mod).__name__)
        raise RuntimeError(
            "failed to bind arguments when attempting to inline\n"
            "  Higher Order Operator: torch.ops.higher_order.flex_attention\n"
            f"  Explanation: Argument mismatch when attempting to trace function {name}.\n"
        ) from None


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


def _check_inputs(query: Tensor, key: Tensor, value: Tensor) -> None:
    if getattr(query, "is_nested", False) or getattr(key, "is_nested", False) \
            or getattr(value, "is_nested", False):
        raise NotImplementedError(
            "flex_attention does not support NestedTensor inputs, including "
            "torch.compile(flex_attention) with jagged NestedTensor inputs. "
            "Convert inputs to dense tensors before calling flex_attention.")
    if query.device != key.device or query.device != value.device:
        raise ValueError(
            "Expected query, key, and value to have the same device type, "
            f"but got query.device: {query.device}, key.device: {key.device}, "
            f"and value.device: {value.device} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise ValueError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got "
            f"query.dim: {query.dim()}, key.dim: {key.dim()} and value.dim: {value.dim()} "
            "instead.")
    if query.size(-1) != key.size(-1):
        raise ValueError(
            "Expect query and key/value to have the same embedding dimension "
            f"but got E={query.size(-1)} and E={key.size(-1)}.")


def _check_kernel_options(kernel_options: Any, want_max: bool) -> None:
    options = {} if kernel_options is None else dict(kernel_options)
    if "BACKEND" in options and options.get("FORCE_USE_FLEX_ATTENTION", False):
        raise RuntimeError(
            "BACKEND cannot be combined with legacy FORCE_USE_FLEX_ATTENTION. "
            "BACKEND supersedes the legacy knob; please drop FORCE_USE_FLEX_ATTENTION "
            "and only specify the desired BACKEND.")
    backends = ("AUTO", "TRITON", "FLASH", "TRITON_DECODE")
    if "BACKEND" in options and options["BACKEND"] not in backends:
        raise ValueError(f"Invalid BACKEND value '{options['BACKEND']}'. "
                         f"Must be one of {backends}")
    if "OUTPUT_LOGSUMEXP" in options:
        raise AssertionError("OUTPUT_LOGSUMEXP must not be in kernel_options")
    if "OUTPUT_MAX" in options:
        raise AssertionError("OUTPUT_MAX must not be in kernel_options")
    if options.get("BACKEND", "AUTO") == "FLASH" and want_max:
        raise NotImplementedError(
            "Returning max scores is not supported with BACKEND='FLASH'. "
            "Use return_aux=AuxRequest(lse=True) or omit max_scores.")
    if want_max:
        raise NotImplementedError("Returning max scores is not supported on CPU/MPS.")


def _check_block_mask(block_mask: BlockMask, q_len: int, kv_len: int) -> None:
    mask_q, mask_kv = block_mask.shape[-2], block_mask.shape[-1]
    if q_len > mask_q or kv_len > mask_kv:
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={q_len} and kv_len={kv_len}. As the block mask was created for a smaller "
            "length than you're using it for, you likely need to create a new block mask.")
    if (q_len < mask_q and kv_len <= mask_kv) or (q_len <= mask_q and kv_len < mask_kv):
        raise ValueError(
            f"block_mask was created for block_mask.shape={block_mask.shape} but got "
            f"q_len={q_len} and kv_len={kv_len}. As the block mask was created for a larger "
            "length than you're using it for, you can either 1. create a new block mask with "
            "the correct length, or 2. 'adjust' the existing block mask to the correct length "
            "by calling block_mask._adjust(q_len, kv_len). This essentially 'crops' the block "
            "mask to the upper left corner, which does not work for all mask_mods!")


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
