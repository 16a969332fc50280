"""retrograd.distributions: torch.distributions' probability distributions.

Bernoulli, Binomial, Categorical, Cauchy, Exponential, Geometric, Independent, Laplace,
LogNormal, Normal, OneHotCategorical (and its StraightThrough variant), Poisson,
TransformedDistribution and Uniform, with torch's methods (sample/rsample, log_prob, cdf/icdf,
entropy, mean/mode/variance/stddev, expand, enumerate_support), `transforms`, `constraints`, and
`kl_divergence`/`register_kl` for the pairs torch defines among them. Arguments and the values
given to log_prob/cdf are validated by default with torch's error texts
(`Distribution.set_default_validate_args(False)` or `validate_args=False` turns it off).
Samples come from retrograd's own generator: the same distributions as torch's, not the same
numbers.
"""

from retrograd.distributions import constraints, transforms
from retrograd.distributions.bernoulli import Bernoulli
from retrograd.distributions.binomial import Binomial
from retrograd.distributions.categorical import Categorical
from retrograd.distributions.cauchy import Cauchy
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.exp_family import ExponentialFamily
from retrograd.distributions.exponential import Exponential
from retrograd.distributions.geometric import Geometric
from retrograd.distributions.independent import Independent
from retrograd.distributions.kl import kl_divergence, register_kl
from retrograd.distributions.laplace import Laplace
from retrograd.distributions.log_normal import LogNormal
from retrograd.distributions.normal import Normal
from retrograd.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from retrograd.distributions.poisson import Poisson
from retrograd.distributions.transformed_distribution import TransformedDistribution
from retrograd.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    IndependentTransform,
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

__all__ = [
    "Bernoulli", "Binomial", "Categorical", "Cauchy", "Distribution", "Exponential",
    "ExponentialFamily", "Geometric", "Independent", "Laplace", "LogNormal", "Normal",
    "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson",
    "TransformedDistribution", "Uniform", "kl_divergence", "register_kl",
    "AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform",
    "IndependentTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
    "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform",
    "TanhTransform", "Transform", "identity_transform", "constraints", "transforms",
]
