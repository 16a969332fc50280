"""torch.triangular_solve (deprecated in favour of linalg.solve_triangular, warned once): the
solution of op(A) X = b for a triangular A, and a copy of A; both outputs are differentiable
(TriangularSolveBackward0)."""

from __future__ import annotations

from typing import Any

import numpy as np

from retrograd._ops.kernels import linalg_solvers as K
from retrograd._ops.layout import not_implemented, type_name
from retrograd._ops.linalg_inverse import _solve_triangular, matmul
from retrograd._ops.linalg_returns import _named
from retrograd._ops.registry import op, register, register_method
from retrograd._tensor import Tensor
from retrograd._warn_always import warn_once

_result_type = _named("triangular_solve", ("solution", "cloned_coefficient"))

DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
    "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
    "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).")


def _forward(b: np.ndarray, a: np.ndarray, upper: bool, transpose: bool,
             unitriangular: bool) -> tuple:
    if transpose:  # op(A) = A^T: its triangle is the other one
        x = K.solve_triangular(np.swapaxes(a, -1, -2), b, not upper, True, unitriangular)
    else:
        x = K.solve_triangular(a, b, upper, True, unitriangular)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return x, K.column_major(np.broadcast_to(a, batch + a.shape[-2:]).copy())


def _grads(grads: tuple, self: Tensor, A: Tensor, solution: Tensor, upper: bool,
           transpose: bool, unitriangular: bool, output_mask: tuple) -> tuple:
    g_x, g_m = grads
    g_a = g_b = None
    if g_x is not None:
        # b's gradient solves with op(A)^T; A's is the outer product with the solution, kept
        # to the triangle the forward read
        if transpose:
            g_b = _solve_triangular(A, g_x, upper=upper, unitriangular=unitriangular)
            g_a = -matmul(solution, g_b.mT)
        else:
            g_b = _solve_triangular(A.mT, g_x, upper=not upper, unitriangular=unitriangular)
            g_a = -matmul(g_b, solution.mT)
        k = int(unitriangular)
        g_a = g_a.triu(k) if upper else g_a.tril(-k)
    if g_m is not None:
        g_a = g_m if g_a is None else g_a + g_m
    if g_a is not None and g_a.shape != A.shape:
        g_a = g_a.sum_to_size(A.shape)
    if g_b is not None and g_b.shape != self.shape:
        g_b = g_b.sum_to_size(self.shape)
    return g_b, g_a


_triangular_solve = op(
    "triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, "
    "bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)", _forward,
    grads={"self, A": _grads}, function=False, method=False)


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, *, out: Any = None) -> Any:
    """torch.triangular_solve(b, A): (solution, cloned_coefficient) with op(A) X = b."""
    warn_once("triangular_solve", DEPRECATED)
    for name, t in (("b", input), ("A", A)):
        if t.dim() < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 "
                               f"dimensions, but it has {t.dim()} dimensions instead")
    if input.dtype != A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{type_name(input._data.dtype)} and A of type "
                           f"{type_name(A._data.dtype)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.shape[-1] != input.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is "
                           f"{input.shape[-2]} by {input.shape[-1]}")
    if not A.dtype.is_floating_point or A.dtype.itemsize < 4:
        raise not_implemented("triangular_solve_cpu", A._data.dtype)
    result = _triangular_solve(input, A, upper, transpose, unitriangular)
    if out is not None:
        for dst, src in zip(out, result):
            dst.resize_(src.shape).copy_(src)
        return _result_type(tuple(out))
    return _result_type(tuple(result))


def _method(self: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
            unitriangular: bool = False) -> Any:
    return triangular_solve(self, A, upper, transpose, unitriangular)


register("triangular_solve", triangular_solve)
register_method("triangular_solve", _method)
