"""retrograd.distributions: torch.distributions' probability distributions.

Distributions validate their arguments and the values given to log_prob/cdf by default, with
torch's error texts (`Distribution.set_default_validate_args(False)` or `validate_args=False`
turns it off); `constraints` holds torch's constraint objects. Samples come from retrograd's own
generator (statistically the same distribution as torch's, not the same numbers).
"""

from retrograd.distributions import constraints
from retrograd.distributions.bernoulli import Bernoulli
from retrograd.distributions.categorical import Categorical
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.exp_family import ExponentialFamily
from retrograd.distributions.normal import Normal

__all__ = ["Bernoulli", "Categorical", "Distribution", "ExponentialFamily", "Normal",
           "constraints"]
