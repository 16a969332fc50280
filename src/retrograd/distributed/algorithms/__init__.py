"""retrograd.distributed.algorithms: DDP communication hooks."""
