"""retrograd.distributed.optim: ZeroRedundancyOptimizer."""

from retrograd.distributed.optim.zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
