"""retrograd.linalg: the torch.linalg functions retrograd has."""

from retrograd._numpy_names import numpy_names_entry
from retrograd._ops import linalg_norms as _norms
from retrograd._ops import linalg_products as _products
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
from retrograd._ops.linalg_norms import cond, matrix_rank
from retrograd._ops.linalg_products import (
    diagonal,
    multi_dot,
    tensorinv,
    tensorsolve,
    vander,
)
from retrograd._ops.reduction import linalg_vector_norm as vector_norm

# torch binds these from op schemas: they take NumPy's names (NOTE [NumPy argument names])
norm = numpy_names_entry(_norms.norm)
matrix_norm = numpy_names_entry(_norms.matrix_norm)
cross = numpy_names_entry(_products.cross)
vecdot = numpy_names_entry(_products.vecdot)

__all__ = [
    "vector_norm", "matmul", "qr", "LinAlgError",
    "inv", "inv_ex", "det", "slogdet", "solve", "solve_ex",
    "cholesky", "cholesky_ex", "matrix_norm", "norm", "eigh", "eigvalsh", "svd", "svdvals",
    "pinv", "householder_product", "matrix_power", "multi_dot", "cross", "vecdot", "diagonal",
    "solve_triangular", "lstsq", "lu_factor", "lu_factor_ex", "lu", "lu_solve", "matrix_rank",
    "cond", "vander", "tensorinv", "tensorsolve", "matrix_exp",
]
