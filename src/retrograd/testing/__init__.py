"""retrograd.testing: assert_close and make_tensor with torch.testing's signatures (and the
deprecated assert_allclose)."""

from retrograd.testing._comparison import assert_close
from retrograd.testing._creation import make_tensor
from retrograd.testing._deprecated import assert_allclose

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
