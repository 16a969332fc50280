"""Random numbers: retrograd's own generator (NumPy's PCG64), seeded like torch's.

Bitwise equality with torch's RNG is not a goal; reproducibility under manual_seed is.
"""

from __future__ import annotations

import numpy as np


class Generator:
    """torch.Generator: holds a NumPy bit generator; get_state/set_state round-trip."""

    def __init__(self, device: object = "cpu") -> None:
        self._seed = 67280421310721
        self._np = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._np = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy % (2**63))
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        import pickle

        from retrograd._ops.creation import tensor

        blob = pickle.dumps(self._np.bit_generator.state)
        return tensor(list(blob), dtype=_uint8())

    def set_state(self, state) -> Generator:
        import pickle

        self._np.bit_generator.state = pickle.loads(bytes(state.tolist()))
        return self

    @property
    def np(self) -> np.random.Generator:
        return self._np


def _uint8():
    from retrograd._dtype import uint8

    return uint8


default_generator = Generator()


def gen(generator: Generator | None) -> np.random.Generator:
    """The NumPy generator to draw from: the given one, or the default."""
    return (generator or default_generator)._np


def manual_seed(seed: int) -> Generator:
    return default_generator.manual_seed(seed)
