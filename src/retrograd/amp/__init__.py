"""retrograd.amp: automatic mixed precision on the CPU (torch.amp): autocast regions and
GradScaler."""

from retrograd.amp.autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from retrograd.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
