"""retrograd.distributed.optim: optimizers that know about the process group."""

from retrograd.distributed.optim.zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
