"""nn.utils.parametrizations.orthogonal: a matrix (or batch) kept orthogonal by a map from
unconstrained parameters: the matrix exponential or the Cayley transform of a skew-symmetric
matrix, or a product of Householder reflectors.

With use_trivialization (the default) the map's output is multiplied by a stored orthogonal
`base` (a buffer), and assigning to the weight stores the value in `base` and resets the
parameters to the map's preimage of the identity.
"""

from __future__ import annotations

from enum import Enum, auto

import retrograd
from retrograd._tensor import Tensor
from retrograd.nn.modules.module import Module
from retrograd.nn.utils import parametrize


def _is_orthogonal(q: Tensor) -> bool:
    n, k = q.size(-2), q.size(-1)
    eye = retrograd.eye(k, dtype=q.dtype)
    eps = 10.0 * n * retrograd.finfo(q.dtype).eps
    return retrograd.allclose(q.mH @ q, eye, atol=eps)


def _make_orthogonal(a: Tensor) -> Tensor:
    """The Q of a's QR decomposition, with signs so that R's diagonal is positive."""
    x, tau = retrograd.geqrf(a)
    q = retrograd.linalg.householder_product(x, tau)
    return q * x.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    base: Tensor

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def _skew_map(self, x: Tensor, n: int, k: int) -> Tensor:
        # n x k - k(k-1)/2 free entries: the lower triangle, padded to n x n
        x = x.tril()
        if n != k:
            x = retrograd.cat([x, x.new_zeros(n, n - k).expand(*x.shape[:-2], -1, -1)], dim=-1)
        a = x - x.mH
        if self.orthogonal_map == _OrthMaps.matrix_exp:
            q = retrograd.matrix_exp(a)
        else:
            # Cayley: (I - A/2)^{-1} (I + A/2)
            eye = retrograd.eye(n, dtype=a.dtype)
            q = retrograd.linalg.solve(retrograd.add(eye, a, alpha=-0.5),
                                       retrograd.add(eye, a, alpha=0.5))
        return q[..., :k] if n != k else q

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            q = self._skew_map(X, n, k)
        else:
            a = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(dim=-2))
            q = retrograd.linalg.householder_product(a, tau)
            # X's diagonal holds the signs +-1; the cast keeps it out of the gradient
            q = q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with retrograd.no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError(
                    "It is not possible to assign to the matrix exponential or the Cayley "
                    "parametrizations when use_trivialization=False.")
            # the reflectors of Q's QR, with the diagonal holding R's signs
            a, tau = retrograd.geqrf(Q)
            a.diagonal(dim1=-2, dim2=-1).sign_()
            a.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return a.mT if transpose else a
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            # complete Q to a square orthogonal matrix with random columns
            extra = retrograd.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(retrograd.cat([Q, extra], dim=-1))
        self.base = Q
        # the preimage of the identity is -I (householder of zeros with signs -1 is eye)
        neg_id = retrograd.zeros_like(q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Constrain `module.<name>` to orthogonal (or semi-orthogonal) matrices."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
