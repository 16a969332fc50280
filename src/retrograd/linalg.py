"""retrograd.linalg: the torch.linalg functions retrograd has."""

from retrograd._ops.linalg import matmul, qr
from retrograd._ops.reduction import linalg_vector_norm as vector_norm

__all__ = ["vector_norm", "matmul", "qr"]
