"""local_response_norm: each value divided by (k + alpha * mean of squares over `size`
neighbouring channels) ** beta, built as torch builds it (an average pool of the zero-padded
squares over the channel dim), so its node is DivBackward0."""

from __future__ import annotations

from retrograd._ops.padding import pad
from retrograd._ops.pooling import avg_pool2d
from retrograd._ops.pooling3d import avg_pool3d
from retrograd._ops.registry import register_functional
from retrograd._tensor import Tensor


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    dim = input.dim()
    if dim < 3:
        # (torch's message keeps the run of spaces of its source line break)
        raise ValueError(f"Expected 3D or higher dimensionality{' ' * 26}input (got {dim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    squares = input.mul(input)
    before, after = size // 2, (size - 1) // 2
    if dim == 3:
        padded = pad(squares.unsqueeze(1), (0, 0, before, after))
        div = avg_pool2d(padded, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        grouped = squares.view(sizes[0], 1, sizes[1], sizes[2], -1)
        padded = pad(grouped, (0, 0, 0, 0, before, after))
        div = avg_pool3d(padded, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


register_functional("local_response_norm", local_response_norm)
