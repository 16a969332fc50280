"""retrograd.testing: assert_close and make_tensor with torch.testing's signatures."""

from retrograd.testing._comparison import assert_close
from retrograd.testing._creation import make_tensor

__all__ = ["assert_close", "make_tensor"]
