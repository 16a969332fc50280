"""torch.linalg's inverse family: inv / inv_ex / inverse, det, slogdet / logdet, solve /
solve_ex, solve_triangular, matrix_power.

Each op works on a batch of matrices (*, n, n); its gradient is written with these same ops
(inverse, solve), so it differentiates again. The NumPy kernels are in
kernels/linalg_solvers.py.
"""

from __future__ import annotations

from typing import Any

from retrograd._ops import linalg as _mm
from retrograd._ops.kernels import linalg_matrix_functions as KM
from retrograd._ops.kernels import linalg_solvers as K
from retrograd._ops.linalg_checks import (
    broadcast_batches,
    check_float,
    check_matrix,
    check_same_dtype,
    check_square,
    check_square_float,
)
from retrograd._ops.linalg_out import SCALAR_TYPE, with_out
from retrograd._ops.linalg_returns import return_types
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor

matmul = _mm.matmul
LinAlgError = K.LinAlgError


def _outer_scale(g: Tensor) -> Tensor:
    """A batch of scalars as (*, 1, 1), to scale a batch of matrices."""
    return g.unsqueeze(-1).unsqueeze(-1)


# --- inverse ---------------------------------------------------------------------------------

_linalg_inv_ex = op(
    "linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)",
    lambda a, check_errors: K.inv_ex(a, check_errors),
    grads={"A": lambda grad, inverse: -matmul(matmul(inverse.mT, grad), inverse.mT)},
    function=False, method=False)


@with_out("linalg_inv_ex", "linalg_inv_ex", 2, fields=("inverse", "info"))
def inv_ex(A: Tensor, *, check_errors: bool = False, out=None) -> tuple:
    """torch.linalg.inv_ex: (inverse, info); info > 0 marks a singular matrix of the batch."""
    check_square_float("linalg.inv_ex", A)
    return return_types.linalg_inv_ex(_linalg_inv_ex(A, check_errors=check_errors))


@with_out("linalg_inv", "linalg_inv_ex")
def inv(A: Tensor, *, out=None) -> Tensor:
    """torch.linalg.inv: the inverse of each square matrix; LinAlgError for a singular one."""
    check_square_float("linalg.inv", A)
    result, info = _linalg_inv_ex(A)
    K.raise_for_info("linalg.inv", info._data, K.INV_SINGULAR)
    return result


@with_out("inverse", "linalg_inv_ex")
def inverse(input: Tensor, *, out=None) -> Tensor:
    """torch.inverse / Tensor.inverse: linalg.inv."""
    return inv(input)


def _inverse_of(A: Tensor) -> Tensor:
    """A^-1 for gradient formulas (a differentiable op; singular matrices give inf / nan)."""
    return _linalg_inv_ex(A)[0]


# --- determinants ----------------------------------------------------------------------------


def _det_grad(grad: Tensor, A: Tensor, result: Tensor) -> Tensor:
    """d det(A) = det(A) tr(A^-1 dA): the gradient is grad det(A) A^-T, the transposed
    adjugate, which exists for singular matrices too (through the SVD there)."""
    from retrograd._autograd.state import is_grad_enabled, state
    from retrograd._ops.pointwise import where

    inverse, info = _linalg_inv_ex(A)
    if not _any_nonzero(info):
        return _outer_scale(grad * result) * inverse.mT
    singular = _outer_scale(info != 0)
    if not is_grad_enabled() or state.first_order_capture:
        # torch's first-order gradient of a singular matrix's det (no create_graph) is zero;
        # with create_graph it is the adjugate below (a compiled backward that is never
        # differentiated is first order)
        return where(singular, 0.0, _outer_scale(grad * result) * inverse.mT)
    # each branch sees a harmless stand-in where the other is taken, so that neither puts
    # nan into the double backward: the identity is invertible, diag(1..n) has distinct
    # singular values
    n = A.shape[-1]
    safe_inverse = _linalg_inv_ex(where(singular, _diagonal(A, [1.0] * n), A))[0]
    svd_input = where(singular, A, _diagonal(A, [float(i + 1) for i in range(n)]))
    return where(singular, _outer_scale(grad) * _adjugate_t_svd(svd_input),
                 _outer_scale(grad * result) * safe_inverse.mT)


def _any_nonzero(info: Tensor) -> bool:
    """Whether some matrix failed; under vmap, over every member (the batched value's
    physical data); a wrapper whose values cannot be read counts as failed (the general path
    is right either way)."""
    from retrograd._ops import dispatch

    if dispatch.mode_stack and not dispatch.only_subclass_mode():
        return True  # a tracer records the formula: the branch must hold for every input
    value: Any = info
    while type(value) is not Tensor:
        value = getattr(value, "_value", None)
        if not isinstance(value, Tensor):
            return True
    return bool(value._data.any())


def _diagonal(A: Tensor, values: list) -> Tensor:
    from retrograd._ops.creation import tensor

    return tensor(values, dtype=A.dtype).diag_embed()


def _adjugate_t_svd(A: Tensor) -> Tensor:
    """adj(A)^T = det(U) det(V) U diag(c) V^T with c_i the product of the other singular
    values (A = U diag(s) V^T): no division, so singular A is fine."""
    from retrograd._ops.linalg_decompositions import _linalg_svd
    from retrograd._ops.shape import cat

    U, S, Vh = _linalg_svd(A, False, True)
    sign = _linalg_det(U) * _linalg_det(Vh)
    ones = S.new_ones(tuple(S.shape[:-1]) + (1,))
    before = cat([ones, S[..., :-1]], -1).cumprod(-1)
    after = cat([ones, S.flip(-1)[..., :-1]], -1).cumprod(-1).flip(-1)
    c = before * after * sign.unsqueeze(-1)
    return matmul(U * c.unsqueeze(-2), Vh)


_linalg_det = op("linalg_det(Tensor A) -> Tensor", K.det, grads={"A": _det_grad},
                 function=False, method=False)


@with_out("linalg_det", "_linalg_det")
def det(A: Tensor, *, out=None) -> Tensor:
    """torch.linalg.det / torch.det / Tensor.det."""
    check_square_float("linalg.det", A)
    return _linalg_det(A)


def _slogdet_grad(grads, A: Tensor) -> Tensor | None:
    # sign is piecewise constant for real matrices: only log|det A| has a gradient, A^-T
    g = grads[1]
    if g is None:
        return None
    return _outer_scale(g) * _inverse_of(A).mT


_linalg_slogdet = op("linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", K.slogdet,
                     grads={"A": _slogdet_grad}, function=False, method=False)


@with_out("linalg_slogdet", "_linalg_slogdet", 2, fields=("sign", "logabsdet"))
def slogdet(A: Tensor, *, out=None) -> tuple:
    """torch.linalg.slogdet: (sign, log|det|)."""
    check_square_float("linalg.slogdet", A)
    return return_types.linalg_slogdet(_linalg_slogdet(A))


def torch_slogdet(input: Tensor) -> tuple:
    """torch.slogdet / Tensor.slogdet: linalg.slogdet as torch.return_types.slogdet."""
    check_square_float("linalg.slogdet", input)
    return return_types.slogdet(_linalg_slogdet(input))


def logdet(input: Tensor) -> Tensor:
    """torch.logdet: log det(A), nan where det(A) < 0 (torch's composite, WhereBackward0)."""
    from retrograd._ops.pointwise import where

    check_square("logdet", input)
    check_float("logdet", input)
    sign, logabs = _linalg_slogdet(input)
    return where(sign == -1, float("nan"), logabs)


# --- solve -----------------------------------------------------------------------------------


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    """torch's rule: B is a vector (batch) when 1-D or shaped like A without its last dim."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve_grads(grads, A: Tensor, result: Tensor, left: bool, output_mask):
    """X = A^-1 B: gB = A^-T G, gA = -gB X^T; X = B A^-1: gB = G A^-T, gA = -X^T gB."""
    g = grads[0]
    if g is None:
        return None, None
    vector = result.dim() < A.dim()  # a matrix result has A's rank at least
    gB = _solve(A.mT, g, left=left)
    if not output_mask[0]:
        return None, gB
    if vector:
        gA = -gB.unsqueeze(-1) * result.unsqueeze(-2)
    elif left:
        gA = -matmul(gB, result.mT)
    else:
        gA = -matmul(result.mT, gB)
    return gA, gB


_linalg_solve_ex = op(
    "_linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> "
    "(Tensor result, Tensor info)",
    lambda a, b, left, check_errors: K.solve_ex(a, b, left, _vector_arrays(a, b),
                                                check_errors),
    grads={"A, B": _solve_grads}, function=False, method=False)


def _vector_arrays(a, b) -> bool:
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])


def _solve(A: Tensor, B: Tensor, left: bool = True) -> Tensor:
    return _linalg_solve_ex(A, B, left=left)[0]


def _check_solve(name: str, A: Tensor, B: Tensor, left: bool) -> None:
    check_square(name, A)
    check_float(name, A)
    check_same_dtype(name, A, B)
    vector = _is_vector_rhs(A, B)
    if not vector:
        check_matrix(name, B, "B")
    n = A.shape[-1]
    rows, cols = (B.shape[-1], 1) if vector else (B.shape[-2], B.shape[-1])
    if vector and not left:  # torch makes the vector a column, which XA = B cannot take
        rows, cols = B.shape[-1], 1
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation XA = B "
                           f"({n}x{n} and {rows}x{cols})")
    if (rows if left else cols) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {rows}x{cols})")
    # torch broadcasts B's batch against A's (the message names B first)
    broadcast_batches(tuple(B.shape[:-1 if vector else -2]), tuple(A.shape[:-2]))


@with_out("linalg_solve_ex", "_linalg_solve_ex", 2, fields=("result", "info"))
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out=None) -> tuple:
    """torch.linalg.solve_ex: (result, info)."""
    _check_solve("linalg.solve", A, B, left)
    result, info = _linalg_solve_ex(A, B, left=left, check_errors=False)
    if check_errors:
        K.raise_for_info("torch.linalg.solve_ex", info._data, K.SOLVE_SINGULAR)
    return return_types.linalg_solve_ex((result, info))


@with_out("linalg_solve", "_linalg_solve_ex")
def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """torch.linalg.solve: X with AX = B (left=True) or XA = B; B a matrix or a vector."""
    _check_solve("linalg.solve", A, B, left)
    result, info = _linalg_solve_ex(A, B, left=left)
    K.raise_for_info("torch.linalg.solve", info._data, K.SOLVE_SINGULAR)
    return result


# --- triangular solve ------------------------------------------------------------------------


def _solve_triangular_grads(grads, self, B, result, upper, left, unitriangular, output_mask):
    """As solve's, with gA kept to the triangle A's solve reads (and no diagonal for a unit
    triangular A)."""
    g = grads[0]
    if g is None:
        return None, None
    gB = _solve_triangular(self.mT, g, upper=not upper, left=left, unitriangular=unitriangular)
    if not output_mask[0]:
        return None, gB
    gA = -matmul(gB, result.mT) if left else -matmul(result.mT, gB)
    gA = gA.triu(1 if unitriangular else 0) if upper else gA.tril(-1 if unitriangular else 0)
    return gA, gB


_solve_triangular = op(
    "linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, "
    "bool unitriangular=False) -> Tensor", K.solve_triangular,
    grads={"self, B": _solve_triangular_grads}, function=False, method=False)


_REQUIRED = object()


@with_out("linalg_solve_triangular", "linalg_solve_triangular", 1, SCALAR_TYPE)
def solve_triangular(A: Tensor, B: Tensor, *, upper: Any = _REQUIRED, left: bool = True,
                     unitriangular: bool = False, out=None) -> Tensor:
    """torch.linalg.solve_triangular: X with AX = B or XA = B for a triangular A."""
    name = "linalg.solve_triangular"
    if upper is _REQUIRED:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: '
                        '"upper"')
    check_square(name, A)
    check_matrix(name, B, "B")
    check_float(name, A)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    if B.dtype != A.dtype:
        B = B.to(A.dtype)
    return _solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)


# --- matrix_power ----------------------------------------------------------------------------


def matrix_power(A: Tensor, n: int) -> Tensor:
    """torch.linalg.matrix_power: A^n by repeated squaring; A^-n is (A^-1)^n; A^0 = I."""
    from retrograd._ops.creation import eye

    name = "linalg.matrix_power"
    check_square(name, A)
    if n == 0:
        # torch copies the identity into a copy of A (CopyBackwards)
        identity = eye(A.shape[-1], dtype=A.dtype).expand(tuple(A.shape))
        return A.clone(memory_format=_contiguous()).copy_(identity)
    if n < 0:
        A = inv(A)
        n = -n
    if n == 1:
        return A.clone(memory_format=_contiguous())
    if n == 2:
        return matmul(A, A)
    if n == 3:
        return matmul(matmul(A, A), A)
    result: Tensor | None = None
    square: Tensor | None = None
    while n:
        square = A if square is None else matmul(square, square)
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
    assert result is not None  # n >= 1 here
    return result


# --- matrix_exp ------------------------------------------------------------------------------


def _matrix_exp_grad(grad: Tensor, self: Tensor) -> Tensor:
    """The Frechet derivative of exp at A^T applied to grad: the upper-right block of
    exp([[A^T, grad], [0, A^T]])."""
    from retrograd._ops.shape import cat

    n = self.shape[-1]
    At = self.mT
    block = cat([cat([At, grad], -1), cat([At.new_zeros(tuple(At.shape)), At], -1)], -2)
    return _linalg_matrix_exp(block)[..., :n, n:]


_linalg_matrix_exp = op("linalg_matrix_exp(Tensor self) -> Tensor", KM.matrix_exp,
                        grads={"self": _matrix_exp_grad}, function=False, method=False)


def matrix_exp(A: Tensor) -> Tensor:
    """torch.linalg.matrix_exp / torch.matrix_exp / Tensor.matrix_exp: e^A."""
    name = "linalg.matrix_exp"
    check_square(name, A)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        check_float(name, A)
    return _linalg_matrix_exp(A)


def _contiguous():
    from retrograd import contiguous_format

    return contiguous_format


register("inverse", inverse, method=True)
register("det", det, method=True)
register("slogdet", torch_slogdet, method=True)
register("logdet", logdet, method=True)
register("matrix_power", matrix_power, method=True)
register("matrix_exp", matrix_exp, method=True)
