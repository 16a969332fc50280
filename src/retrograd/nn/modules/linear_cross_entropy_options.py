"""torch.nn.modules.linear_cross_entropy_options' name."""

from retrograd.nn.modules.linear_cross_entropy import LinearCrossEntropyOptions

__all__ = ["LinearCrossEntropyOptions"]
