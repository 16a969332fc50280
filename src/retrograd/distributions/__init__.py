"""retrograd.distributions: the distributions that policy-gradient and VAE programs use.

Categorical, Normal and Bernoulli with torch's methods (sample, rsample, log_prob, entropy) and
lazily derived parameters (probs <-> logits). Arguments are not validated (torch checks them
by default); samples come from retrograd's own generator.
"""

from retrograd.distributions.bernoulli import Bernoulli
from retrograd.distributions.categorical import Categorical
from retrograd.distributions.distribution import Distribution
from retrograd.distributions.normal import Normal

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal"]
