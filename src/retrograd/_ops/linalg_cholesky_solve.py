"""torch.cholesky_solve and torch.cholesky_inverse: solves and inverses from a Cholesky factor
(A = L L^T, or U^T U with upper=True).

Both gradients go to the factor through dA = dL L^T + L dL^T: a gradient gA of A gives
(gA + gA^T) L (or U (gA + gA^T)), as torch computes it (not restricted to the triangle).
"""

from __future__ import annotations

from retrograd._ops import linalg as _mm
from retrograd._ops.kernels import linalg_solvers as K
from retrograd._ops.layout import type_name
from retrograd._ops.linalg_checks import broadcast_batches, check_square
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor

matmul = _mm.matmul


def _to_factor(sym: Tensor, factor: Tensor, upper: bool) -> Tensor:
    """The factor's gradient for a symmetric gradient `sym` of A."""
    return matmul(factor, sym) if upper else matmul(sym, factor)


def _cholesky_solve_grads(grads, input2: Tensor, result: Tensor, upper: bool, output_mask):
    g = grads[0]
    if g is None:
        return None, None
    gB = _cholesky_solve(g, input2, upper)
    if not output_mask[1]:
        return gB, None
    common = matmul(gB, result.mT)
    return gB, -_to_factor(common + common.mT, input2, upper)


_cholesky_solve = op(
    "cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor",
    K.cholesky_solve, grads={"self, input2": _cholesky_solve_grads},
    function=False, method=False)


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """torch.cholesky_solve / Tensor.cholesky_solve: X with A X = B, A given by its Cholesky
    factor input2."""
    if out is not None:
        raise NotImplementedError("retrograd.cholesky_solve does not support out=")
    if input.dtype != input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{type_name(input._data.dtype)} and A of type "
                           f"{type_name(input2._data.dtype)} instead.")
    for t, what in ((input, "b"), (input2, "A")):
        if t.dim() < 2:
            raise RuntimeError(f"{what} should have at least 2 dimensions, but has {t.dim()} "
                               "dimensions instead")
    if input2.shape[-1] != input2.shape[-2]:
        raise RuntimeError("A must be batches of square matrices, but they are "
                           f"{input2.shape[-2]} by {input2.shape[-1]} matrices")
    if input.shape[-2] != input2.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{input2.shape[-1]} by {input2.shape[-1]} but each b matrix is "
                           f"{input.shape[-2]} by {input.shape[-1]}")
    broadcast_batches(tuple(input.shape[:-2]), tuple(input2.shape[:-2]))
    return _cholesky_solve(input, input2, upper)


def _cholesky_inverse_grad(grad: Tensor, self: Tensor, result: Tensor, upper: bool) -> Tensor:
    common = matmul(result, matmul(grad + grad.mT, result))
    return -_to_factor(common, self, upper)


_cholesky_inverse = op(
    "cholesky_inverse(Tensor self, bool upper=False) -> Tensor", K.cholesky_inverse,
    grads={"self": _cholesky_inverse_grad}, function=False, method=False)


def cholesky_inverse(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """torch.cholesky_inverse / Tensor.cholesky_inverse: A^-1 from A's Cholesky factor."""
    if out is not None:
        raise NotImplementedError("retrograd.cholesky_inverse does not support out=")
    check_square("cholesky_inverse", input)
    return _cholesky_inverse(input, upper)


register("cholesky_solve", cholesky_solve, method=True)
register("cholesky_inverse", cholesky_inverse, method=True)
