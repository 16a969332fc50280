"""retrograd.linalg: the torch.linalg functions retrograd has."""

from retrograd._ops.householder import householder_product
from retrograd._ops.kernels.linalg_solvers import LinAlgError
from retrograd._ops.linalg import matmul, qr
from retrograd._ops.linalg_decompositions import (
    cholesky,
    cholesky_ex,
    eigh,
    eigvalsh,
    lstsq,
    pinv,
    svd,
    svdvals,
)
from retrograd._ops.linalg_inverse import (
    det,
    inv,
    inv_ex,
    matrix_exp,
    matrix_power,
    slogdet,
    solve,
    solve_ex,
    solve_triangular,
)
from retrograd._ops.linalg_lu import lu, lu_factor, lu_factor_ex, lu_solve
from retrograd._ops.linalg_norms import cond, matrix_norm, matrix_rank, norm
from retrograd._ops.linalg_products import (
    cross,
    diagonal,
    multi_dot,
    tensorinv,
    tensorsolve,
    vander,
    vecdot,
)
from retrograd._ops.reduction import linalg_vector_norm as vector_norm

__all__ = [
    "vector_norm", "matmul", "qr", "LinAlgError",
    "inv", "inv_ex", "det", "slogdet", "solve", "solve_ex",
    "cholesky", "cholesky_ex", "matrix_norm", "norm", "eigh", "eigvalsh", "svd", "svdvals",
    "pinv", "householder_product", "matrix_power", "multi_dot", "cross", "vecdot", "diagonal",
    "solve_triangular", "lstsq", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "matrix_rank",
    "cond", "vander", "tensorinv", "tensorsolve", "matrix_exp",
]
