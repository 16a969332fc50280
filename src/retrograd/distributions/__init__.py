"""retrograd.distributions: torch.distributions' probability distributions.

Bernoulli, Beta, Binomial, Categorical, Cauchy, Chi2, ContinuousBernoulli, Dirichlet,
Exponential, FisherSnedecor, Gamma, GeneralizedPareto, Geometric, Gumbel, HalfCauchy,
HalfNormal, Independent, InverseGamma, Kumaraswamy, Laplace, LKJCholesky, LogisticNormal,
LogNormal, LowRankMultivariateNormal, MixtureSameFamily, Multinomial, MultivariateNormal,
NegativeBinomial, Normal, OneHotCategorical (and its StraightThrough variant), Pareto, Poisson,
RelaxedBernoulli, RelaxedOneHotCategorical, StudentT, TransformedDistribution, Uniform,
VonMises, Weibull and Wishart, with torch's methods (sample/rsample, log_prob, cdf/icdf,
entropy, perplexity, mean/mode/variance/stddev, expand, enumerate_support) and reprs;
`constraints`; `transforms` with `biject_to`/`transform_to`; `kl_divergence`/`register_kl` with
torch's pairs among the distributions present.

Arguments and the values given to log_prob/cdf are validated by default, with torch's error
texts (`Distribution.set_default_validate_args(False)` or `validate_args=False` turns it off).

Samples are torch's numbers under the same seed (NOTE [torch's random streams]). Gamma's
rsample (and through it Chi2's, Beta's, Dirichlet's, StudentT's,
InverseGamma's, FisherSnedecor's) differentiates the draws in the concentration implicitly
through the Gamma CDF, as torch does; Dirichlet's gradient goes through normalized Gamma draws
rather than torch's closed-form Dirichlet one (the same expectation).

VonMises' Bessel functions are retrograd.special's i0e/i1e, not torch's polynomial
approximations (agreement to ~1e-7).
"""

from retrograd.distributions import constraints, transforms
from retrograd.distributions.bernoulli import Bernoulli
from retrograd.distributions.beta import Beta
from retrograd.distributions.binomial import Binomial
from retrograd.distributions.categorical import Categorical
from retrograd.distributions.chi2 import Chi2
from retrograd.distributions.constraint_registry import biject_to, transform_to
from retrograd.distributions.continuous_bernoulli import ContinuousBernoulli
from retrograd.distributions.cauchy import Cauchy
from retrograd.distributions.dirichlet import Dirichlet
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.exp_family import ExponentialFamily
from retrograd.distributions.exponential import Exponential
from retrograd.distributions.gamma import Gamma
from retrograd.distributions.geometric import Geometric
from retrograd.distributions.generalized_pareto import GeneralizedPareto
from retrograd.distributions.gumbel import Gumbel
from retrograd.distributions.half_cauchy import HalfCauchy
from retrograd.distributions.half_normal import HalfNormal
from retrograd.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from retrograd.distributions.mixture_same_family import MixtureSameFamily
from retrograd.distributions.multinomial import Multinomial
from retrograd.distributions.negative_binomial import NegativeBinomial
from retrograd.distributions.pareto import Pareto
from retrograd.distributions.weibull import Weibull
from retrograd.distributions.wishart import Wishart
from retrograd.distributions.fishersnedecor import FisherSnedecor
from retrograd.distributions.inverse_gamma import InverseGamma
from retrograd.distributions.kumaraswamy import Kumaraswamy
from retrograd.distributions.logistic_normal import LogisticNormal
from retrograd.distributions.independent import Independent
from retrograd.distributions.kl import kl_divergence, register_kl
from retrograd.distributions.laplace import Laplace
from retrograd.distributions.lkj_cholesky import LKJCholesky
from retrograd.distributions.log_normal import LogNormal
from retrograd.distributions.multivariate_normal import MultivariateNormal
from retrograd.distributions.normal import Normal
from retrograd.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from retrograd.distributions.poisson import Poisson
from retrograd.distributions.relaxed_bernoulli import RelaxedBernoulli
from retrograd.distributions.relaxed_categorical import RelaxedOneHotCategorical
from retrograd.distributions.studentT import StudentT
from retrograd.distributions.transformed_distribution import TransformedDistribution
from retrograd.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from retrograd.distributions.uniform import Uniform
from retrograd.distributions.von_mises import VonMises

__all__ = [
    "Wishart",
    "LKJCholesky",
    "VonMises",
    "GeneralizedPareto",
    "FisherSnedecor", "InverseGamma", "Kumaraswamy", "LogisticNormal",
    "CumulativeDistributionTransform",
    "ContinuousBernoulli", "LowRankMultivariateNormal",
    "Gumbel", "HalfCauchy", "HalfNormal", "MixtureSameFamily", "Multinomial", "NegativeBinomial",
    "Pareto", "Weibull",
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "Dirichlet",
    "Distribution", "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Independent",
    "Laplace", "LogNormal", "MultivariateNormal", "Normal",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "StudentT",
    "TransformedDistribution", "Uniform", "biject_to", "kl_divergence", "register_kl",
    "transform_to",
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
    "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform",
    "TanhTransform", "Transform", "identity_transform", "constraints", "transforms",
]
