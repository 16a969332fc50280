"""LowRankMultivariateNormal(loc, cov_factor W, cov_diag D): covariance W W^T + diag(D),
evaluated through the m x m capacitance matrix I + W^T D^-1 W (Woodbury and the matrix
determinant lemma) instead of the n x n covariance."""

from __future__ import annotations

import math
from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import constraints
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.multivariate_normal import _batch_mahalanobis, _batch_mv
from retrograd.distributions.utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_capacitance_tril(W: Tensor, D: Tensor) -> Tensor:
    """Cholesky factor of I + W^T D^-1 W."""
    m = W.size(-1)
    K = retrograd.matmul(W.mT / D.unsqueeze(-2), W)
    return retrograd.linalg.cholesky(K + retrograd.eye(m, dtype=K.dtype))


def _batch_lowrank_logdet(W: Tensor, D: Tensor, capacitance_tril: Tensor) -> Tensor:
    """log det(W W^T + D) = log det(capacitance) + log det(D)."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + D.log().sum(-1))


def _batch_lowrank_mahalanobis(W: Tensor, D: Tensor, x: Tensor,
                               capacitance_tril: Tensor) -> Tensor:
    """x^T (W W^T + D)^-1 x by Woodbury's identity."""
    Wt_Dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, Wt_Dinv_x)


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, cov_factor: Tensor, cov_diag: Tensor,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(
                f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = retrograd.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        super(LowRankMultivariateNormal, new).__init__(batch_shape, self.event_shape,
                                                       validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self) -> tuple:
        return tuple(self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1)
                + self._unbroadcasted_cov_diag).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2
        n = self._event_shape[0]
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled_w = self._unbroadcasted_cov_factor / sqrt_d
        K = retrograd.matmul(scaled_w, scaled_w.mT) + retrograd.eye(n, dtype=scaled_w.dtype)
        return (sqrt_d * retrograd.linalg.cholesky(K)).expand(self._full())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        W = self._unbroadcasted_cov_factor
        return (retrograd.matmul(W, W.mT)
                + retrograd.diag_embed(self._unbroadcasted_cov_diag)).expand(self._full())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        # Woodbury: D^-1 - D^-1 W C^-1 W^T D^-1 with C the capacitance
        Wt_Dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = retrograd.linalg.solve_triangular(self._capacitance_tril, Wt_Dinv, upper=False)
        precision = retrograd.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - A.mT @ A
        return precision.expand(self._full())

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps_w = _standard_normal(shape[:-1] + self.cov_factor.shape[-1:], dtype=self.loc.dtype)
        eps_d = _standard_normal(shape, dtype=self.loc.dtype)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        W, D, C = (self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                   self._capacitance_tril)
        m = _batch_lowrank_mahalanobis(W, D, value - self.loc, C)
        log_det = _batch_lowrank_logdet(W, D, C)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + m)

    def entropy(self) -> Tensor:
        log_det = _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                        self._unbroadcasted_cov_diag, self._capacitance_tril)
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
