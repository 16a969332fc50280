"""Splitting a batch into microbatches along dim 0, and merging results back."""

from __future__ import annotations

from typing import Any

from retrograd._tensor import Tensor


def split_batch(value: Any, n: int) -> list:
    """n chunks of a tensor along dim 0 (views, like torch.tensor_split); non-tensors repeat."""
    if value is None:
        return [None] * n
    if not isinstance(value, Tensor):
        return [value] * n
    size = value.shape[0]
    if size < n:
        raise ValueError(f"cannot split a batch of {size} into {n} microbatches")
    bounds = [size * i // n for i in range(n + 1)]
    return [value[bounds[i]:bounds[i + 1]] for i in range(n)]


def merge_chunks(chunks: list) -> Any:
    from retrograd import cat

    if all(isinstance(c, Tensor) for c in chunks):
        return cat(chunks, 0)
    return chunks
