"""Samples for torch.linalg beyond matmul and QR: inverse, determinants, solves, Cholesky, eigh,
SVD, pinv, norms, LU, lstsq, products.

Inputs stay where the functions are smooth: A = random + n I (well conditioned), symmetric
positive-definite matrices built inside the call from B B^T + n I (Cholesky, eigh read one
triangle only, so the input is symmetrized where finite differences perturb one entry), and
eigen / singular vectors normalized in sign so torch's and NumPy's LAPACK agree.
"""

import warnings

import numpy as np

from tests.op_samples import Sample, arr


def wellcond(*shape, seed: int) -> np.ndarray:
    n = shape[-1]
    return arr(*shape, seed=seed) + n * np.eye(n)


def _eye(lib, x):
    return lib.eye(x.shape[-1], dtype=x.dtype)


def _spd(lib, x):
    return x @ x.mT + x.shape[-1] * _eye(lib, x)


def _sym(x):
    return x + x.mT


def cholesky(lib, x, upper=False):
    return lib.linalg.cholesky(_spd(lib, x), upper=upper)


def cholesky_upper(lib, x):
    return cholesky(lib, x, True)


def cholesky_ex(lib, x):
    return lib.linalg.cholesky_ex(_spd(lib, x))


def torch_cholesky(lib, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.cholesky(_spd(lib, x), True)


def _signed(v):
    """Columns of v with a positive first row (each vector's sign is LAPACK's choice)."""
    return v * v[..., :1, :].sign()


def eigh(lib, x):
    w, v = lib.linalg.eigh(_sym(x))
    return w, _signed(v)


def eigh_upper(lib, x):
    w, v = lib.linalg.eigh(_sym(x), UPLO="U")
    return w, _signed(v)


def eigvalsh(lib, x):
    return lib.linalg.eigvalsh(_sym(x))


def _svd_signed(u, s, vh):
    k = s.shape[-1]
    sign = u[..., :1, :k].sign()
    return u[..., :k] * sign, s, vh[..., :k, :] * sign.mT


def svd(lib, x):
    return _svd_signed(*lib.linalg.svd(x, full_matrices=False))


def svd_full(lib, x):
    return _svd_signed(*lib.linalg.svd(x))


def svd_u_only(lib, x):
    u, s, vh = svd(lib, x)
    return u


def svd_vh_only(lib, x):
    u, s, vh = svd(lib, x)
    return vh


def torch_svd(lib, x):
    u, s, v = lib.svd(x)
    sign = u[..., :1, :].sign()
    return u * sign, s, v * sign


def pinv_hermitian(lib, x):
    return lib.linalg.pinv(_sym(x), hermitian=True)


def inv_ex(lib, x):
    return lib.linalg.inv_ex(x)


def solve_ex(lib, a, b):
    return lib.linalg.solve_ex(a, b)


def lu_factor(lib, x):
    return lib.linalg.lu_factor(x)


def lu(lib, x):
    p, lower, upper = lib.linalg.lu(x)
    return lower, upper


def lu_solve(lib, a, b, left=True, adjoint=False):
    LU, piv = lib.linalg.lu_factor(a)
    return lib.linalg.lu_solve(LU, piv, b, left=left, adjoint=adjoint)


def lu_solve_right_adjoint(lib, a, b):
    return lu_solve(lib, a, b, False, True)


def lu_solve_adjoint(lib, a, b):
    return lu_solve(lib, a, b, True, False)


def _factor(lib, x, upper=False):
    """A Cholesky-like factor: a triangle with a dominant positive diagonal."""
    t = x.triu() if upper else x.tril()
    return t + x.shape[-1] * _eye(lib, x)


def cholesky_solve(lib, b, x):
    return lib.cholesky_solve(b, _factor(lib, x))


def cholesky_solve_upper(lib, b, x):
    return b.cholesky_solve(_factor(lib, x, True), upper=True)


def cholesky_inverse(lib, x):
    return lib.cholesky_inverse(_factor(lib, x))


def cholesky_inverse_upper(lib, x):
    return _factor(lib, x, True).cholesky_inverse(upper=True)


def lu_unpack(lib, x):
    LU, piv = lib.linalg.lu_factor(x)
    p, lower, upper = lib.lu_unpack(LU, piv)
    return lower, upper


def lstsq(lib, a, b):
    return lib.linalg.lstsq(a, b).solution


def lstsq_gelsd(lib, a, b):
    # singular_values and rank carry no gradient (torch's too)
    out = lib.linalg.lstsq(a, b, driver="gelsd")
    return out.solution, out.residuals


def torch_cross(lib, a, b):
    return lib.cross(a, b, dim=0)


def cond_svd(lib, x):
    return lib.linalg.cond(x)


def norm_nuc(lib, x):
    return lib.norm(x, "nuc")


def _inverse_samples() -> list:
    a, b = wellcond(3, 3, seed=40), wellcond(2, 3, 3, seed=41)
    return [
        Sample("linalg.inv", (a,)),
        Sample("linalg.inv", (b,), name="batched"),
        Sample("linalg.inv", (wellcond(2, 3, 3, seed=42).transpose(0, 2, 1),), name="noncontig"),
        Sample("linalg.inv", (arr(0, 3, 3),), name="empty", check_strides=False),
        Sample("inverse", (a,)),
        Sample("Tensor.inverse", (b,)),
        Sample(inv_ex, (b,)),
        Sample("linalg.det", (a,)),
        Sample("linalg.det", (b,), name="batched"),
        # exactly singular (a zero row: LU meets a zero pivot in any arithmetic): torch's
        # first-order gradient is zero there (the adjugate only with create_graph,
        # tests/test_linalg_more.py), so no gradcheck
        Sample("linalg.det", (np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [1.0, 0.0, 1.0]]),),
               name="singular", gradcheck=False),
        Sample("linalg.det", (np.stack([np.array([[1.0, 2.0], [2.0, 4.0]]),
                                        wellcond(2, 2, seed=39)]),), name="singular_batch",
               gradcheck=False),
        Sample("det", (a,)),
        Sample("Tensor.det", (b,)),
        Sample("linalg.slogdet", (b,)),
        Sample("slogdet", (a,)),
        Sample("logdet", (b,)),
        Sample("Tensor.logdet", (a,)),
        Sample("linalg.solve", (a, arr(3, 2, seed=43))),
        Sample("linalg.solve", (a, arr(3, seed=44)), name="vector"),
        Sample("linalg.solve", (b, arr(2, 3, seed=45)), name="batched_vector"),
        Sample("linalg.solve", (b, arr(3, 2, seed=46)), name="broadcast"),
        Sample("linalg.solve", (a, arr(2, 3, 1, seed=47)), name="broadcast_a"),
        Sample("linalg.solve", (b, arr(2, 2, 3, seed=48)), {"left": False}, name="right"),
        Sample(solve_ex, (b, arr(2, 3, 2, seed=49))),
        Sample("linalg.solve_triangular", (a, arr(3, 2, seed=50)), {"upper": True}),
        Sample("linalg.solve_triangular", (b, arr(2, 3, 2, seed=51)), {"upper": False},
               name="lower"),
        Sample("linalg.solve_triangular", (b, arr(2, 3, seed=52)),
               {"upper": True, "left": False}, name="right"),
        Sample("linalg.solve_triangular", (a, arr(3, 2, seed=53)),
               {"upper": False, "unitriangular": True}, name="unit"),
        Sample("linalg.matrix_power", (a, 0), name="zero"),
        Sample("linalg.matrix_power", (a, 1), name="one"),
        Sample("linalg.matrix_power", (a, 3), name="three"),
        Sample("linalg.matrix_power", (b, 5), name="five_batched"),
        Sample("linalg.matrix_power", (a, -2), name="negative"),
        Sample("matrix_power", (b, 2)),
        Sample("Tensor.matrix_power", (a, 4)),
        Sample("linalg.matrix_exp", (arr(3, 3, seed=54),)),
        Sample("linalg.matrix_exp", (4 * arr(2, 3, 3, seed=55),), name="scaled_batch"),
        Sample("matrix_exp", (arr(2, 2, seed=56),)),
        Sample("Tensor.matrix_exp", (arr(1, 1, seed=57),)),
    ]


def _decomposition_samples() -> list:
    x, xb = arr(3, 3, seed=60), arr(2, 3, 3, seed=61)
    tall, wide = arr(4, 3, seed=62), arr(2, 3, 5, seed=63)
    return [
        Sample(cholesky, (x,)),
        Sample(cholesky, (xb,), name="batched"),
        Sample(cholesky_upper, (xb,)),
        Sample(cholesky_ex, (x,)),
        Sample(torch_cholesky, (xb,)),
        Sample(eigh, (x,)),
        Sample(eigh, (xb,), name="batched"),
        Sample(eigh_upper, (x,)),
        Sample(eigvalsh, (xb,)),
        Sample(svd, (tall,), parity_rtol=1e-4, parity_atol=1e-5),
        Sample(svd, (wide,), name="wide", parity_rtol=1e-4, parity_atol=1e-5),
        Sample(svd, (x,), name="square", parity_rtol=1e-4, parity_atol=1e-5),
        Sample(svd_full, (tall,), parity_rtol=1e-4, parity_atol=1e-5),
        Sample(svd_full, (wide,), name="wide", parity_rtol=1e-4, parity_atol=1e-5),
        Sample(svd_u_only, (tall,), parity_rtol=1e-4, parity_atol=1e-5),
        Sample(svd_vh_only, (wide,), parity_rtol=1e-4, parity_atol=1e-5),
        Sample("linalg.svdvals", (wide,), parity_rtol=1e-4, parity_atol=1e-5),
        Sample(torch_svd, (tall,), parity_rtol=1e-4, parity_atol=1e-5),
        Sample("linalg.pinv", (tall,), parity_rtol=1e-4, parity_atol=1e-5),
        Sample("linalg.pinv", (wide,), name="wide", parity_rtol=1e-4, parity_atol=1e-5),
        Sample(pinv_hermitian, (wellcond(3, 3, seed=64),), parity_rtol=1e-4, parity_atol=1e-5),
        Sample("pinverse", (tall,), parity_rtol=1e-4, parity_atol=1e-5),
        Sample("Tensor.pinverse", (wide,), parity_rtol=1e-4, parity_atol=1e-5),
        Sample(lstsq, (tall, arr(4, 2, seed=65)), parity_rtol=1e-4, parity_atol=1e-5),
        Sample(lstsq, (arr(2, 4, 3, seed=66), arr(2, 4, seed=67)), name="vector",
               parity_rtol=1e-4, parity_atol=1e-5),
        Sample(lstsq_gelsd, (tall, arr(4, 2, seed=68)), parity_rtol=1e-4, parity_atol=1e-5),
        Sample(lu_factor, (wellcond(3, 3, seed=69),)),
        Sample(lu_factor, (wellcond(2, 3, 3, seed=70),), name="batched"),
        Sample(lu, (wellcond(3, 3, seed=71),)),
        Sample(lu_unpack, (arr(2, 3, 4, seed=88),), name="wide"),
        Sample(lu_unpack, (arr(4, 3, seed=89),), name="tall"),
        Sample(cholesky_solve, (arr(3, 2, seed=118), arr(3, 3, seed=119))),
        Sample(cholesky_solve_upper, (arr(2, 3, 2, seed=120), arr(3, 3, seed=121))),
        Sample(cholesky_inverse, (arr(2, 3, 3, seed=122),)),
        Sample(cholesky_inverse_upper, (arr(3, 3, seed=123),)),
        Sample(lu_factor, (arr(3, 5, seed=78),), name="wide"),
        Sample(lu_factor, (arr(2, 5, 3, seed=79),), name="tall"),
        Sample(lu, (arr(2, 3, 4, seed=86),), name="wide"),
        Sample(lu, (arr(4, 2, seed=87),), name="tall"),
        Sample(lu_solve, (wellcond(3, 3, seed=72), arr(3, 2, seed=73))),
        Sample(lu_solve_adjoint, (wellcond(2, 3, 3, seed=74), arr(2, 3, 2, seed=75))),
        Sample(lu_solve_right_adjoint, (wellcond(3, 3, seed=76), arr(2, 3, seed=77))),
    ]


def _norm_samples() -> list:
    a, b = wellcond(3, 3, seed=80), arr(2, 3, 4, seed=81)
    out = [Sample("linalg.matrix_norm", (b,), name="fro"),
           Sample("linalg.matrix_norm", (b, "nuc"), {"keepdim": True}, name="nuc_keepdim",
                  parity_rtol=1e-4),
           Sample("linalg.matrix_norm", (b, "nuc"), {"dim": (0, 2)}, name="nuc_dims",
                  parity_rtol=1e-4),
           Sample("linalg.matrix_norm", (b, -2), {"dim": (2, 0)}, name="neg2_dims",
                  parity_rtol=1e-4),
           Sample("linalg.norm", (b,), {"dim": (1, 2)}, name="fro_dims"),
           Sample("linalg.norm", (b, 2), {"dim": 1}, name="vector"),
           Sample("linalg.norm", (a, 2), name="spectral", parity_rtol=1e-4),
           Sample("linalg.norm", (a[0], 3.0), name="vector_ord"),
           Sample(norm_nuc, (a,), parity_rtol=1e-4),
           Sample(cond_svd, (a,), parity_rtol=1e-4),
           Sample("linalg.cond", (b[..., :3],), {"p": -2}, name="neg2", parity_rtol=1e-4),
           Sample("linalg.cond", (a, "nuc"), name="nuc", parity_rtol=1e-4),
           # torch's own backward of cond(A, 1) fails (an in-place write on a saved inverse):
           # its value is compared in tests/test_linalg_more.py
           Sample("linalg.cond", (a, 1), name="one", parity=False)]
    for ord in (1, -1, 2, float("inf"), -float("inf")):
        out.append(Sample("linalg.matrix_norm", (b, ord), name=f"ord_{ord}",
                          parity_rtol=1e-4))
    out.append(Sample("linalg.matrix_norm", (b, 1), {"keepdim": True, "dim": (2, 0)},
                      name="one_keepdim"))
    return out


def _product_samples() -> list:
    return [
        Sample("linalg.cross", (arr(2, 3, seed=90), arr(2, 3, seed=91))),
        Sample("linalg.cross", (arr(3, 2, seed=92), arr(3, 1, seed=93)), {"dim": 0},
               name="broadcast_dim"),
        Sample(torch_cross, (arr(3, 2, seed=94), arr(3, 2, seed=95))),
        Sample("Tensor.cross", (arr(4, 3, seed=96), arr(4, 3, seed=97)), {"dim": 1}),
        Sample("linalg.vecdot", (arr(2, 3, seed=98), arr(3, seed=99))),
        Sample("linalg.vecdot", (arr(2, 3, seed=100), arr(2, 3, seed=101)), {"dim": 0},
               name="dim"),
        Sample("linalg.diagonal", (arr(2, 3, 3, seed=102),)),
        Sample("linalg.diagonal", (arr(3, 4, 2, seed=103),), {"offset": 1, "dim1": 0,
                                                              "dim2": 1}, name="offset"),
        Sample("linalg.multi_dot", ([arr(2, 3, seed=104), arr(3, 4, seed=105)],)),
        Sample("linalg.multi_dot", ([arr(3, seed=106), arr(3, 4, seed=107),
                                     arr(4, 2, seed=108)],), name="three_vector"),
        Sample("linalg.multi_dot", ([arr(2, 5, seed=109), arr(5, 1, seed=110),
                                     arr(1, 4, seed=111), arr(4, seed=112)],), name="four"),
        Sample("linalg.vander", (arr(4, seed=113),)),
        Sample("linalg.vander", (arr(2, 3, seed=114),), {"N": 4}, name="N"),
        # torch's reshape of the column-major inverse is a _reshape_alias node, not a view
        Sample("linalg.tensorinv", (wellcond(6, 6, seed=115).reshape(2, 3, 6),), {"ind": 2},
               check_node=False),
        Sample("linalg.tensorsolve", (wellcond(6, 6, seed=116).reshape(2, 3, 2, 3),
                                      arr(2, 3, seed=117))),
    ]


SAMPLES = _inverse_samples() + _decomposition_samples() + _norm_samples() + _product_samples()
