"""retrograd.functional: the tensor functions torch.functional defines (torch re-exports them
at the top level, where retrograd's live; this module names the same objects)."""

from __future__ import annotations

from retrograd import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    cdist,
    chain_matmul,
    einsum,
    lu,
    meshgrid,
    norm,
    pca_lowrank,
    split,
    svd_lowrank,
    tensordot,
    unique,
    unique_consecutive,
    unravel_index,
)

# not here: stft and istft (complex results) and align_tensors (named tensors): README, known gaps
__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes",
           "broadcast_tensors", "cartesian_prod", "block_diag", "cdist", "chain_matmul",
           "einsum", "lu", "norm", "meshgrid", "pca_lowrank", "split", "svd_lowrank",
           "tensordot", "unique", "unique_consecutive", "unravel_index"]
