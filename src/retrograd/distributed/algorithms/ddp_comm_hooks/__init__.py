"""DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks)."""

from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks

__all__ = ["default_hooks"]
