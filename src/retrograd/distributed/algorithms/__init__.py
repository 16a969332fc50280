"""retrograd.distributed.algorithms: DDP communication hooks and the join context manager."""

from retrograd.distributed.algorithms.join import Join, Joinable, JoinHook

__all__ = ["Join", "JoinHook", "Joinable"]
