"""torch.nn.modules.channelshuffle's name."""

from retrograd.nn.modules.channel_ops import ChannelShuffle

__all__ = ["ChannelShuffle"]
