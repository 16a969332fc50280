"""retrograd.random, as torch.random: the default generator's seed and state."""

from retrograd._ops.random import (
    Generator,
    default_generator,
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "Generator", "default_generator"]
