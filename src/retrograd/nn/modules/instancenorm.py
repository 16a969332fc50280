"""torch.nn.modules.instancenorm's names (the classes live with the other normalizations)."""

from retrograd.nn.modules.lazy_norm import (
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
)
from retrograd.nn.modules.normalization import (
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    _InstanceNorm,
)

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
_bases = (_InstanceNorm,)  # imported from here by programs, as torch's
