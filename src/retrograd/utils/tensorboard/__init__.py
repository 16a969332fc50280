"""retrograd.utils.tensorboard: torch.utils.tensorboard's SummaryWriter, writing TensorBoard
event files itself (TFRecord framing, protocol buffers, PNG), so it needs no tensorboard
package to log; TensorBoard is only needed to view the logs."""

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
