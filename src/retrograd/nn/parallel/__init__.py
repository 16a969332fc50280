"""retrograd.nn.parallel: DataParallel."""

from retrograd.nn.parallel.data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
