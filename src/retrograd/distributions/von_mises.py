"""VonMises(loc, concentration): the circular normal on [-pi, pi), sampled by Best and Fisher's
rejection scheme (in float64, as torch does).

The Bessel functions come from retrograd.special.i0e/i1e (log I_n(k) = log(i_ne(k)) + k);
torch evaluates them with Abramowitz and Stegun's polynomial approximations, so log_prob and
variance agree with torch's to the approximation's ~1e-7, not to the last digit."""

from __future__ import annotations

import math
from typing import Any

import retrograd
from retrograd._tensor import Size, Tensor
from retrograd.distributions import constraints
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_modified_bessel_fn(x: Tensor, order: int = 0) -> Tensor:
    """log I_order(x) for x > 0, order 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    scaled = retrograd.special.i0e(x) if order == 0 else retrograd.special.i1e(x)
    return scaled.log() + x


def _rejection_sample(loc: Tensor, concentration: Tensor, proposal_r: Tensor,
                      x: Tensor) -> Tensor:
    done = retrograd.zeros(tuple(x.shape), dtype=retrograd.bool)
    while not bool(done.all()):
        u1, u2, u3 = retrograd.rand((3,) + tuple(x.shape), dtype=loc.dtype).unbind()
        z = retrograd.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = retrograd.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * retrograd.cos(value - self.loc) - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(retrograd.double)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(retrograd.double)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho ** 2) / (2 * rho)
        # for tiny kappa the closed form cancels; its expansion is 1 / kappa + kappa
        return retrograd.where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with retrograd.no_grad():
            shape = self._extended_shape(sample_shape)
            x = retrograd.empty(shape, dtype=self._loc.dtype)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        try:
            return super().expand(batch_shape)  # type: ignore[return-value]
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            return type(self)(self.loc.expand(batch_shape),
                              self.concentration.expand(batch_shape),
                              validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:  # type: ignore[override]
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
