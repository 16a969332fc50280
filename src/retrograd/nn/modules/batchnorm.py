"""torch.nn.modules.batchnorm's names (the classes live with the other normalizations)."""

from retrograd.nn.modules.lazy_norm import (
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyBatchNorm3d,
    _LazyNormBase,
)
from retrograd.nn.modules.normalization import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    _BatchNorm,
    _NormBase,
)
from retrograd.nn.modules.sync_batchnorm import SyncBatchNorm

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d",
           "LazyBatchNorm3d", "SyncBatchNorm"]
_bases = (_BatchNorm, _NormBase, _LazyNormBase)  # imported from here by programs, as torch's
