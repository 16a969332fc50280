"""retrograd.nn.parallel: DataParallel and DistributedDataParallel."""

from retrograd.nn.parallel.data_parallel import DataParallel, data_parallel
from retrograd.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "data_parallel", "DistributedDataParallel"]
