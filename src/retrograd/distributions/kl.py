"""kl_divergence(p, q) and register_kl: KL(p || q) in closed form, chosen by the most specific
registered pair of types (torch's dispatch, including its ambiguity warning)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import total_ordering
from typing import Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor
from retrograd.distributions.bernoulli import Bernoulli
from retrograd.distributions.beta import Beta
from retrograd.distributions.binomial import Binomial
from retrograd.distributions.categorical import Categorical
from retrograd.distributions.cauchy import Cauchy
from retrograd.distributions.continuous_bernoulli import ContinuousBernoulli
from retrograd.distributions.dirichlet import Dirichlet
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.exp_family import ExponentialFamily
from retrograd.distributions.exponential import Exponential
from retrograd.distributions.gamma import Gamma
from retrograd.distributions.geometric import Geometric
from retrograd.distributions.gumbel import Gumbel
from retrograd.distributions.half_normal import HalfNormal
from retrograd.distributions.independent import Independent
from retrograd.distributions.laplace import Laplace
from retrograd.distributions.lowrank_multivariate_normal import (
    LowRankMultivariateNormal,
    _batch_lowrank_logdet,
    _batch_lowrank_mahalanobis,
)
from retrograd.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from retrograd.distributions.normal import Normal
from retrograd.distributions.one_hot_categorical import OneHotCategorical
from retrograd.distributions.pareto import Pareto
from retrograd.distributions.poisson import Poisson
from retrograd.distributions.transformed_distribution import TransformedDistribution
from retrograd.distributions.uniform import Uniform
from retrograd.distributions.utils import _sum_rightmost, euler_constant

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY: dict[tuple[type, type], Callable] = {}  # what was registered
_KL_MEMOIZE: dict[tuple[type, type], Any] = {}  # the lookup for concrete type pairs


def register_kl(type_p: type, type_q: type) -> Callable:
    """Decorator: `fun(p, q)` computes KL(p || q) for p of type_p and q of type_q."""
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # a new pair can change which one is most specific
        return fun
    return decorator


@total_ordering
class _Match:
    """Orders type pairs lexicographically by specificity (a subclass sorts first)."""

    __slots__ = ["types"]

    def __init__(self, *types: type) -> None:
        self.types = types

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Match) and self.types == other.types

    def __le__(self, other: _Match) -> bool:
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p: type, type_q: type) -> Any:
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    # most specific in p first, and most specific in q first: they must agree
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun = _KL_REGISTRY[left_p, left_q]
    right_fun = _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        _ws.warn(
            f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning, stacklevel=2)
    return left_fun


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), batched over the two distributions' batch shapes."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _dispatch_kl(type(p), type(q))
        _KL_MEMOIZE[type(p), type(q)] = fun
    if fun is NotImplemented:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
            f"{q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(tensor: Tensor) -> Tensor:
    return retrograd.full_like(tensor, math.inf)


def _set_where(t: Tensor, mask: Tensor, value: float) -> Tensor:
    """t with value where mask holds (no gradient flows through those entries)."""
    return t.masked_fill(mask.expand_as(t), value)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Any, q: Any) -> Tensor:
    softplus = retrograd.nn.functional.softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _set_where(_set_where(t1, q.probs == 0, math.inf), p.probs == 0, 0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _set_where(_set_where(t2, q.probs == 1, math.inf), p.probs == 1, 0)
    return t1 + t2


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Any, q: Any) -> Tensor:
    if (p.total_count < q.total_count).any():
        raise NotImplementedError(
            "KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return _set_where(kl, p.total_count > q.total_count, math.inf)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Any, q: Any) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = _set_where(_set_where(t, q.probs == 0, math.inf), p.probs == 0, 0)
    return t.sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Any, q: Any) -> Tensor:
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: Any, q: Any) -> Tensor:
    # the Bregman divergence of the log normalizer between the natural parameters
    if type(p) is not type(q):
        raise NotImplementedError(
            "The cross KL-divergence between different exponential families cannot"
            + " " * 29 + "be computed using Bregman divergences")
    p_params = [n.detach().requires_grad_() for n in p._natural_params]
    q_params = q._natural_params
    log_norm = p._log_normalizer(*p_params)
    grads = retrograd.autograd.grad(log_norm.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - log_norm
    for pn, qn, g in zip(p_params, q_params, grads):
        result = result - _sum_rightmost((qn - pn) * g, len(q.event_shape))
    return result


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Any, q: Any) -> Tensor:
    return -p.entropy() - retrograd.log1p(-q.probs) / p.probs - q.logits


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Any, q: Any) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return (-scale_ratio.log() + loc_abs_diff / q.scale
            + scale_ratio * retrograd.exp(-loc_abs_diff / p.scale) - 1)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Any, q: Any) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p: Any, q: Any) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Any, q: Any) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: Any, q: Any) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Any, q: Any) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _set_where(result, (q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p: Any, q: Any) -> Tensor:
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Exponential, Beta)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
@register_kl(Exponential, ContinuousBernoulli)
def _kl_exponential_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.rate)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p: Any, q: Any) -> Tensor:
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * retrograd.log(rate_sqr * var_normal * 2 * math.pi)
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Laplace, Beta)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Pareto)
@register_kl(Laplace, Uniform)
@register_kl(Laplace, ContinuousBernoulli)
def _kl_laplace_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.loc)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p: Any, q: Any) -> Tensor:
    var_normal = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * retrograd.log(2 * ratio / math.pi)
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Beta)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Pareto)
@register_kl(Normal, Uniform)
@register_kl(Normal, ContinuousBernoulli)
def _kl_normal_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.loc)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p: Any, q: Any) -> Tensor:
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    z = loc_diff / p.scale
    t1 = retrograd.log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * retrograd.exp(-0.5 * z.pow(2))
    t3 = loc_diff * retrograd.erf(math.sqrt(0.5) * z)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.rate)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponetial(p: Any, q: Any) -> Tensor:
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _set_where(result, p.low < q.support.lower_bound, math.inf)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p: Any, q: Any) -> Tensor:
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Any, q: Any) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                          p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Any, q: Any) -> Tensor:
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


def _x_log_x(tensor: Tensor) -> Tensor:
    return retrograd.xlogy(tensor, tensor)  # 0 at 0


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Any, q: Any) -> Tensor:
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * retrograd.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * retrograd.digamma(p.concentration0)
    t5 = (sum_q - sum_p) * retrograd.digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Any, q: Any) -> Tensor:
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Any, q: Any) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = retrograd.lgamma(q.concentration) - retrograd.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * retrograd.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p: Any, q: Any) -> Tensor:
    return (-p.entropy() - q.rate.log()
            + q.rate * (p.concentration1 / (p.concentration1 + p.concentration0)))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p: Any, q: Any) -> Tensor:
    total = p.concentration1 + p.concentration0
    t1 = -p.entropy()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma() - total.digamma())
    t4 = q.rate * p.concentration1 / total
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p: Any, q: Any) -> Tensor:
    total = p.concentration1 + p.concentration0
    e_beta = p.concentration1 / total
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (e_beta * (1 - e_beta) / (total + 1) + e_beta.pow(2)) * 0.5
    t4 = q.loc * e_beta
    t5 = q.loc.pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p: Any, q: Any) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    outside = (q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)
    return _set_where(result, outside, math.inf)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p: Any, q: Any) -> Tensor:
    ratio = q.rate / p.rate
    t1 = -q.concentration * retrograd.log(ratio)
    return (t1 + ratio + q.concentration.lgamma() + q.concentration * euler_constant
            - (1 + euler_constant))


@register_kl(Gamma, Beta)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
@register_kl(Gamma, ContinuousBernoulli)
def _kl_gamma_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.concentration)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p: Any, q: Any) -> Tensor:
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p: Any, q: Any) -> Tensor:
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = (0.5 * retrograd.log(beta_sqr * var_normal * 2 * math.pi) - p.concentration
          - p.concentration.lgamma())
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (p.concentration - 1) * p.concentration.digamma() + (t2 - t3 + t4) / var_normal


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p: Any, q: Any) -> Tensor:
    width = p.high - p.low
    t1 = retrograd.log(width)
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    result = t3 + t4 - t1 - t2
    outside = (p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)
    return _set_where(result, outside, math.inf)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p: Any, q: Any) -> Tensor:
    width = p.high - p.low
    t1 = width.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    result = -t1 + t2 + t3 + t4
    return _set_where(result, p.low < q.support.lower_bound, math.inf)


def _batch_trace_XXT(bmat: Tensor) -> Tensor:
    """trace(X X^T) over the batch: the sum of squares of each matrix."""
    return bmat.pow(2).sum((-2, -1))


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p: Any, q: Any) -> Tensor:
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with"
                         + " " * 26 + "different event shapes cannot be computed")
    Lq, Lp = q._unbroadcasted_scale_tril, p._unbroadcasted_scale_tril
    half_term1 = (Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    batch = retrograd.broadcast_shapes(tuple(Lq.shape[:-2]), tuple(Lp.shape[:-2]))
    n = p.event_shape[0]
    term2 = _batch_trace_XXT(retrograd.linalg.solve_triangular(
        Lq.expand(tuple(batch) + (n, n)), Lp.expand(tuple(batch) + (n, n)), upper=False))
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.concentration1)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Any, q: Any) -> Tensor:
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = retrograd.exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: Any, q: Any) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Any, q: Any) -> Tensor:
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _set_where(result, p.support.lower_bound < q.support.lower_bound, math.inf)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p: Any, q: Any) -> Tensor:
    scale_rate_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = scale_rate_prod.log() - 1
    t2 = retrograd.exp(loc_scale_ratio) * scale_rate_prod / (scale_rate_prod + 1)
    t3 = scale_rate_prod.reciprocal()
    return t1 - loc_scale_ratio + t2 + t3


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p: Any, q: Any) -> Tensor:
    beta_scale_prod = p.rate * q.scale
    loc_scale_ratio = q.loc / q.scale
    t1 = ((p.concentration - 1) * p.concentration.digamma() - p.concentration.lgamma()
          - p.concentration)
    t2 = beta_scale_prod.log() + p.concentration / beta_scale_prod
    t3 = (retrograd.exp(loc_scale_ratio)
          * (1 + beta_scale_prod.reciprocal()).pow(-p.concentration) - loc_scale_ratio)
    return t1 + t2 + t3


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
@register_kl(Gumbel, ContinuousBernoulli)
def _kl_gumbel_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.loc)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p: Any, q: Any) -> Tensor:
    param_ratio = p.scale / q.scale
    t1 = (param_ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * param_ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * euler_constant - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (euler_constant + 1)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p: Any, q: Any) -> Tensor:
    mean_scale_ratio = p.loc / q.scale
    var_scale_sqr_ratio = (p.scale / q.scale).pow(2)
    loc_scale_ratio = q.loc / q.scale
    t1 = var_scale_sqr_ratio.log() * 0.5
    t2 = mean_scale_ratio - loc_scale_ratio
    t3 = retrograd.exp(-mean_scale_ratio + 0.5 * var_scale_sqr_ratio + loc_scale_ratio)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Pareto, Beta)
@register_kl(Pareto, Uniform)
@register_kl(Pareto, ContinuousBernoulli)
def _kl_pareto_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.scale)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p: Any, q: Any) -> Tensor:
    scale_rate_prod = p.scale * q.rate
    t1 = (p.alpha / scale_rate_prod).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate_prod / (p.alpha - 1)
    return _set_where(t1 - t2 + t3 - 1, p.alpha <= 1, math.inf)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p: Any, q: Any) -> Tensor:
    common = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _set_where(t1 + t2 + t3 + t4 - 1, p.alpha <= 1, math.inf)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p: Any, q: Any) -> Tensor:
    var_normal = 2 * q.scale.pow(2)
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    return _set_where(t1 - t2 + (t3 + t4) / var_normal - 1, p.alpha <= 2, math.inf)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p: Any, q: Any) -> Tensor:
    common = q.scale / (p.high - p.low)
    high_loc_diff = (p.high - q.loc) / q.scale
    low_loc_diff = (p.low - q.loc) / q.scale
    t1 = common.log() + 0.5 * (high_loc_diff + low_loc_diff)
    t2 = common * (retrograd.exp(-high_loc_diff) - retrograd.exp(-low_loc_diff))
    return t1 - t2


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p: Any, q: Any) -> Tensor:
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = t2 * (q.alpha + 1) - t1
    return _set_where(result, p.low < q.support.lower_bound, math.inf)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p: Any, q: Any) -> Tensor:
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + retrograd.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - retrograd.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p: Any, q: Any) -> Tensor:
    return (-p.entropy() - p.mean * q.logits - retrograd.log1p(-q.probs)
            - q._cont_bern_log_norm())


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p: Any, q: Any) -> Tensor:
    return _infinite_like(p.probs)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p: Any, q: Any) -> Tensor:
    return -p.entropy() - retrograd.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p: Any, q: Any) -> Tensor:
    t1 = -p.entropy()
    t2 = (0.5 * (math.log(2.0 * math.pi) + retrograd.square(q.loc / q.scale))
          + retrograd.log(q.scale))
    t3 = ((p.variance + retrograd.square(p.mean) - 2.0 * q.loc * p.mean)
          / (2.0 * retrograd.square(q.scale)))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p: Any, q: Any) -> Tensor:
    result = -p.entropy() + (q.high - q.low).log()
    outside = retrograd.max(retrograd.ge(q.low, p.support.lower_bound),
                            retrograd.le(q.high, p.support.upper_bound))
    return retrograd.where(outside, retrograd.ones_like(result) * math.inf, result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p: Any, q: Any) -> Tensor:
    result = (-p.entropy() - p.mean * q.logits - retrograd.log1p(-q.probs)
              - q._cont_bern_log_norm())
    outside = retrograd.max(retrograd.ge(p.high, q.support.upper_bound),
                            retrograd.le(p.low, q.support.lower_bound))
    return retrograd.where(outside, retrograd.ones_like(result) * math.inf, result)


def _lowrank_event_check(p: Any, q: Any, which: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {which} with"
                         + " " * 26 + "different event shapes cannot be computed")


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p: Any, q: Any) -> Tensor:
    _lowrank_event_check(p, q, "Low Rank Multivariate Normals")
    qW, qD, qC = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril
    pW, pD, pC = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, p._capacitance_tril
    term1 = _batch_lowrank_logdet(qW, qD, qC) - _batch_lowrank_logdet(pW, pD, pC)
    term3 = _batch_lowrank_mahalanobis(qW, qD, q.loc - p.loc, qC)
    # trace(q_cov^-1 p_cov) by Woodbury, split into its four products
    A = retrograd.linalg.solve_triangular(qC, qW.mT / qD.unsqueeze(-2), upper=False)
    term21 = (pD / qD).sum(-1)
    term22 = _batch_trace_XXT(pW * qD.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_XXT(A * pD.sqrt().unsqueeze(-2))
    term24 = _batch_trace_XXT(A.matmul(pW))
    return 0.5 * (term1 + term21 + term22 - term23 - term24 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p: Any, q: Any) -> Tensor:
    _lowrank_event_check(p, q, "(Low Rank) Multivariate Normals")
    qW, qD, qC = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q._capacitance_tril
    pL = p._unbroadcasted_scale_tril
    term1 = (_batch_lowrank_logdet(qW, qD, qC)
             - 2 * pL.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    term3 = _batch_lowrank_mahalanobis(qW, qD, q.loc - p.loc, qC)
    A = retrograd.linalg.solve_triangular(qC, qW.mT / qD.unsqueeze(-2), upper=False)
    term21 = _batch_trace_XXT(pL * qD.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_XXT(A.matmul(pL))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p: Any, q: Any) -> Tensor:
    _lowrank_event_check(p, q, "(Low Rank) Multivariate Normals")
    pW, pD, pC = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, p._capacitance_tril
    qL = q._unbroadcasted_scale_tril
    term1 = (2 * qL.diagonal(dim1=-2, dim2=-1).log().sum(-1)
             - _batch_lowrank_logdet(pW, pD, pC))
    term3 = _batch_mahalanobis(qL, q.loc - p.loc)
    batch = tuple(retrograd.broadcast_shapes(tuple(qL.shape[:-2]), tuple(pW.shape[:-2])))
    n = p.event_shape[0]
    q_tril = qL.expand(batch + (n, n))
    p_factor = pW.expand(batch + (n, p.cov_factor.size(-1)))
    p_diag = retrograd.diag_embed(pD.sqrt()).expand(batch + (n, n))
    term21 = _batch_trace_XXT(retrograd.linalg.solve_triangular(q_tril, p_factor, upper=False))
    term22 = _batch_trace_XXT(retrograd.linalg.solve_triangular(q_tril, p_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])
