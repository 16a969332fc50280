"""NumPy kernel of the matrix exponential: scaling and squaring with the degree-13 Pade
approximant (Higham 2005), over a batch of square matrices."""

from __future__ import annotations

import numpy as np

# the degree-13 Pade coefficients, and the 1-norm up to which it needs no scaling
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exp(a: np.ndarray) -> np.ndarray:
    if a.size == 0:
        return np.ascontiguousarray(a.copy())
    x = a.astype(np.float64)
    norm1 = np.abs(x).sum(-2).max(-1)
    with np.errstate(divide="ignore"):
        squarings = np.maximum(0, np.ceil(np.log2(norm1 / _THETA13))).astype(np.int64)
    x = x / np.exp2(squarings)[..., None, None]
    b = _PADE13
    eye = np.eye(a.shape[-1])
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2
             + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 \
        + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    for k in range(int(squarings.max(initial=0))):  # each matrix squared its own number of times
        more = squarings > k
        if r.ndim == 2:
            r = r @ r
        else:
            r[more] = r[more] @ r[more]
    return np.ascontiguousarray(r.astype(a.dtype, copy=False))
