"""torch.quasirandom.SobolEngine: (scrambled) Sobol sequences in up to 21201 dimensions.

The direction numbers are Joe and Kuo's (search criterion D(6)), the table torch uses; retrograd
reads them from SciPy's copy (`scipy.stats`), so SobolEngine needs SciPy installed. Points are
made as torch makes them: in Gray-code order, each the previous one XOR one direction number,
scaled by 2**-30, so unscrambled sequences are torch's bit for bit. Scrambling (Owen's linear
matrix scrambling plus a random digital shift) uses torch's algorithm on random bits drawn
with torch's randint, so scrambled sequences are torch's too (NOTE [torch's random streams]).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd._tensor import Tensor, _wrap

__all__ = ["SobolEngine"]

MAXBIT = 30
MAXDIM = 21201
_POW2_DESC = np.left_shift(np.int64(1), np.arange(MAXBIT - 1, -1, -1, dtype=np.int64))


def _direction_tables() -> tuple[np.ndarray, np.ndarray]:
    """(the primitive polynomials, the initial direction numbers) of every dimension."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("scipy")  # (the file only: importing scipy.stats is slow)
    path = "" if spec is None or spec.origin is None else os.path.join(
        os.path.dirname(spec.origin), "stats", "_sobol_direction_numbers.npz")
    if not os.path.exists(path):
        raise ImportError("retrograd.quasirandom.SobolEngine reads Joe and Kuo's direction "
                          "numbers from SciPy: pip install scipy")
    with np.load(path) as tables:
        return tables["poly"].astype(np.int64), tables["vinit"].astype(np.int64)


def _initial_state(dimension: int) -> np.ndarray:
    """The direction numbers, dimension x MAXBIT, scaled to 30-bit integers: the first
    dimension is all ones (van der Corput); the others follow the recurrence of their
    polynomial from their initial numbers."""
    poly, vinit = _direction_tables()
    poly, vinit = poly[:dimension], vinit[:dimension]
    degree = np.array([int(p).bit_length() - 1 for p in poly], np.int64)
    v = np.zeros((dimension, MAXBIT), np.int64)
    cols = np.arange(vinit.shape[1])
    v[:, :vinit.shape[1]] = np.where(cols < degree[:, None], vinit, 0)
    v[0, :] = 1
    for j in range(MAXBIT):
        rows = np.nonzero((j >= degree) & (np.arange(dimension) > 0))[0]
        if rows.size == 0:
            continue
        deg, p = degree[rows], poly[rows]
        new = v[rows, j - deg]
        for k in range(int(deg.max())):
            tap = (k < deg) & (((p >> np.maximum(deg - 1 - k, 0)) & 1) == 1)
            earlier = v[rows, np.maximum(j - k - 1, 0)]
            new = np.where(tap, new ^ (earlier << (k + 1)), new)
        v[rows, j] = new
    return v * _POW2_DESC


def _parity(x: np.ndarray) -> np.ndarray:
    for s in (32, 16, 8, 4, 2, 1):
        x = x ^ (x >> s)
    return x & 1


def _scrambled(state: np.ndarray, ltm: np.ndarray) -> np.ndarray:
    """Apply each dimension's lower-triangular bit matrix (diagonal forced to one) to its
    direction numbers: bit p (from the top) of the result is the parity of row p AND v."""
    rows = ltm.copy()
    idx = np.arange(MAXBIT)
    rows[:, idx, idx] = 1
    masks = (rows * _POW2_DESC).sum(-1)  # dimension x MAXBIT: each row as an integer
    out = np.zeros_like(state)
    for p in range(MAXBIT):
        out |= _parity(masks[:, p, None] & state) << (MAXBIT - 1 - p)
    return out


def _rightmost_zero(n: np.ndarray) -> np.ndarray:
    lowest_zero = ~n & (n + 1)
    return np.log2(lowest_zero.astype(np.float64)).astype(np.int64)


class SobolEngine:
    """Draws points of a Sobol sequence of `dimension` dimensions in [0, 1); with `scramble`,
    a scrambled one (seeded by `seed`, else from the global generator's state)."""

    MAXBIT = MAXBIT
    MAXDIM = MAXDIM

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None) -> None:
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality for SobolEngine is "
                             f"[1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        self.sobolstate = _wrap(_initial_state(dimension))
        if not self.scramble:
            self.shift = _wrap(np.zeros(dimension, np.int64))
        else:
            self._scramble()
        self.quasi = _wrap(self.shift._data.copy())
        # computed as torch computes it: the long state divided in the default dtype
        ft = D.get_default_dtype().np
        self._first_point = _wrap((self.quasi._data.astype(ft) /
                                   ft.type(2 ** self.MAXBIT)).reshape(1, -1))
        self.num_generated = 0

    def _scramble(self) -> None:
        from retrograd._ops.random import Generator, randint

        g = None
        if self.seed is not None:
            g = Generator()
            g.manual_seed(self.seed)
        shift_bits = randint(2, (self.dimension, self.MAXBIT), generator=g)._data
        self.shift = _wrap(shift_bits @ np.left_shift(np.int64(1), np.arange(self.MAXBIT)))
        ltm = np.tril(randint(2, (self.dimension, self.MAXBIT, self.MAXBIT), generator=g)._data)
        self.sobolstate = _wrap(_scrambled(self.sobolstate._data, ltm))

    def _advance(self, n: int, start: int) -> np.ndarray:
        """The next n states after the current one (indices start, start + 1, ...); the
        current state becomes the last."""
        if n <= 0:
            return np.empty((0, self.dimension), np.int64)
        steps = self.sobolstate._data[:, _rightmost_zero(np.arange(start, start + n))].T
        states = np.bitwise_xor.accumulate(steps, axis=0) ^ self.quasi._data
        self.quasi._data[...] = states[-1]
        return states

    def draw(self, n: int = 1, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """The next n points, n x dimension."""
        if dtype is None:
            dtype = D.get_default_dtype()
        nd = dtype.np
        if self.num_generated == 0:
            first = self._first_point._data.astype(nd)
            rest = self._advance(n - 1, self.num_generated)
            arr = first if n == 1 else np.concatenate([first, self._points(rest, nd)])
        else:
            arr = self._points(self._advance(n, self.num_generated - 1), nd)
        self.num_generated += n
        result = _wrap(arr)
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    @staticmethod
    def _points(states: np.ndarray, nd: np.dtype) -> np.ndarray:
        return (states * 2.0 ** -MAXBIT).astype(nd)

    def draw_base2(self, m: int, out: Tensor | None = None, dtype: Any = None) -> Tensor:
        """2**m points; the total drawn must stay a power of two (the balance of Sobol'
        points)."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError(
                "The balance properties of Sobol' points require n to be a power of 2. "
                f"{self.num_generated} points have been previously generated, then: "
                f"n={self.num_generated}+2**{m}={total_n}. If you still want to do this, "
                "please use 'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self) -> SobolEngine:
        """Back to the first point."""
        self.quasi._data[...] = self.shift._data
        self.num_generated = 0
        return self

    def fast_forward(self, n: int) -> SobolEngine:
        """Skip n points (as drawing them would)."""
        if self.num_generated == 0:
            self._advance(n - 1, self.num_generated)
        else:
            self._advance(n, self.num_generated - 1)
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        fmt = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt.append("scramble=True")
        if self.seed is not None:
            fmt.append(f"seed={self.seed}")
        return f"{type(self).__name__}({', '.join(fmt)})"
