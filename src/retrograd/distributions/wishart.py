"""Wishart(df, covariance_matrix | precision_matrix | scale_tril): positive definite matrices,
sampled by the Bartlett decomposition (chi-squared diagonal, normal strict lower triangle),
reparameterized through the Chi2 draws.

torch's rsample tests the samples with the support's check but treats its True (valid) as
"singular", so it warns "Singular sample detected." and redraws on every call; here only
samples that are not positive definite are redrawn, and the warning means what it says."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd._tensor import Size, Tensor
from retrograd.distributions import constraints
from retrograd.distributions.chi2 import Chi2
from retrograd.distributions.exp_family import ExponentialFamily
from retrograd.distributions.multivariate_normal import _precision_to_scale_tril
from retrograd.distributions.utils import lazy_property

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    steps = retrograd.arange(p, dtype=x.dtype).div(2).expand(tuple(x.shape) + (-1,))
    return retrograd.digamma(x.unsqueeze(-1) - steps).sum(-1)


def _clamp_above_eps(x: Tensor) -> Tensor:
    return x.clamp(min=retrograd.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict:  # type: ignore[override]
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df: Tensor | float, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = retrograd.tensor(df, dtype=param.dtype)
        else:
            batch_shape = retrograd.broadcast_shapes(param.shape[:-2], df.shape)  # type: ignore[union-attr]
            self.df = df.expand(batch_shape)  # type: ignore[union-attr]
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if bool(self.df.lt(event_shape[-1]).any()):
            _ws.warn("Low df values detected. Singular samples are highly likely to "
                     "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = retrograd.linalg.cholesky(covariance_matrix)
        else:
            assert precision_matrix is not None
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape: Any) -> Chi2:
        # the k-th diagonal entry of the Bartlett factor is sqrt(Chi2(df - k))
        steps = retrograd.arange(self._event_shape[-1],
                                 dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._event_shape = self._event_shape
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _full(self) -> tuple:
        return tuple(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._full())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._full())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        eye = retrograd.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return retrograd.cholesky_solve(eye, self._unbroadcasted_scale_tril).expand(
            self._full())

    @property
    def mean(self) -> Tensor:
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = factor.masked_fill(factor <= 0, float("nan"))
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(tuple(self._batch_shape) + (1, 1)) * (
            V.pow(2) + retrograd.einsum("...i,...j->...ij", diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape: Any = Size()) -> Tensor:
        diag = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(
            dim1=-2, dim2=-1)
        # standard normal entries below the diagonal
        noise = diag + retrograd.randn(tuple(diag.shape), dtype=diag.dtype).tril(-1)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape: Any = Size(), max_try_correction: int | None = None
                ) -> Tensor:
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = ~self.support.check(sample.detach())
        if bool(singular.any()):
            _ws.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redraw = self._bartlett_sampling(sample_shape)
                sample = retrograd.where(singular[..., None, None], redraw, sample)
                singular = ~self.support.check(sample.detach())
                if not bool(singular.any()):
                    break
        return sample

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - retrograd.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * retrograd.linalg.slogdet(value)[1]
                - retrograd.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self) -> Tensor:
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + retrograd.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:  # type: ignore[override]
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-retrograd.linalg.slogdet(-2 * x)[1] + _log_2 * p)
                + retrograd.mvlgamma(y + (p + 1) / 2, p=p))
