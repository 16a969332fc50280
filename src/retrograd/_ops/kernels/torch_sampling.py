"""torch's CPU sampling algorithms, on the 32-bit draws of its Mersenne Twister.

NOTE [torch's random streams]
retrograd's Generator is torch's: an mt19937 seeded as torch seeds it (NumPy's MT19937 bit
generator holds the state; `Generator.get_state` writes it in torch's 5056-byte layout), with
torch's cached second normal sample. The samplers below turn its draws into numbers the way
torch's CPU kernels do, so that after `manual_seed(s)` a program draws torch's numbers:

- uniform (rand, uniform_, the nn.init functions built on it): the low 24 bits of one draw
  (float32) or 53 bits of two (float64) scaled to [0, 1), then `x * (to - from) + from` as one
  fused multiply-add, emulated here with exact products and sums;
- integers (randint, random_): one draw modulo the range, two for ranges of 2**32 or more;
- randperm: a Fisher-Yates shuffle swapping element i with i + draw % (n - i);
- normal: 16 or more contiguous values are filled with uniforms and transformed in blocks of
  16 by Box-Muller (the last, partial block redrawn); fewer, or a non-contiguous target, draw
  one double Box-Muller pair per two values, the second kept for the next call;
- bernoulli (bernoulli_, dropout): a uniform below p, in float32 for float32 probabilities;
- exponential: -1/lambda * log1p(-u); log_normal, cauchy and geometric from one double each;
- multinomial: with replacement a binary search of a uniform in the normalized running sums;
  without (or for one sample) the largest p / q with q exponential (random.py);
- rrelu: one uniform slope per element that is not positive (rrelu.py);
- standard gamma, poisson and binomial: torch's rejection samplers, value after value
  (torch_rejection.py).

Every one is torch's bit for bit in float32 and float64: float32 normal blocks with the
vectorized log and sincos of torch's AVX2 code (vector_mathfun.py; the code torch runs on x86
CPUs), float64 ones with the C library's functions as torch's (_libm). In the 16-bit float
types the uniform draws are torch's too (the float32 value rounded, `to` mapped to `from`),
and the normals are computed as float32 ones and rounded (the last, partial block keeps its
leftover uniforms and draws only the rest, where float32 redraws all 16).
Dirichlet and Beta normalize
float64 gamma draws as torch's do; in float64 with more than three categories the sum may
round differently from torch's in the last bit (its vectorized reduction adds in another
order). On Intel CPUs
torch's bernoulli_ with a scalar p and exponential_ use MKL's own generator, so torch itself
draws other numbers there; these are the numbers of torch's portable kernels.
"""

from __future__ import annotations

import math

import numpy as np

from retrograd._ops.kernels import vector_mathfun
from retrograd._ops.kernels.vector_mathfun import fma32

_M24 = np.uint64((1 << 24) - 1)
_M53 = np.uint64((1 << 53) - 1)
_SHIFT = np.uint64(32)
_BLOCK = 16


class TorchStream(np.random.Generator):
    """NumPy's Generator over an MT19937 (for the samplers written with NumPy's algorithms),
    plus torch's cached second sample of a double Box-Muller pair."""

    __slots__ = ("normal_cache",)

    def __init__(self, bits: np.random.MT19937) -> None:
        super().__init__(bits)
        self.normal_cache: float | None = None


def raw32(g: TorchStream, n: int) -> np.ndarray:
    """n draws of torch's random(): 32-bit values (in uint64)."""
    return g.bit_generator.random_raw(n)


def raw64(g: TorchStream, n: int) -> np.ndarray:
    """n draws of torch's random64(): the first of two 32-bit draws is the high half."""
    r = g.bit_generator.random_raw(2 * n)
    return (r[0::2] << _SHIFT) | r[1::2]


def unit(g: TorchStream, n: int, double: bool) -> np.ndarray:
    """n uniforms in [0, 1): 53 bits of random64() as float64 for double, else the low 24 bits
    of random() as float32 (exact either way)."""
    if double:
        return (raw64(g, n) & _M53).view(np.int64).astype(np.float64) * 2.0 ** -53
    low = raw32(g, n).view(np.uint32)[0::2]  # (the draws are below 2**32: little-endian halves)
    return (low & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)


def _libm(fn, x: np.ndarray) -> np.ndarray:
    """fn (math.log, log1p, exp, tan: the C library's, which torch's kernels call) on each
    value of x. NumPy's own vectorized versions differ from it in the last bit for about one
    value in 500, which would change torch's samples; its sine, cosine and square root agree."""
    return np.fromiter(map(fn, x.ravel().tolist()), np.float64, x.size).reshape(x.shape)


def _two_sum(a: np.ndarray, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    c = 134217729.0 * a  # 2**27 + 1: Veltkamp's split into two 26-bit halves
    hi = c - (c - a)
    return hi, a - hi


def fma64(x: np.ndarray, scale: float, shift: float) -> np.ndarray:
    """x * scale + shift as a fused multiply-add rounds it, in float64: the product's and the
    sum's rounding errors are carried exactly and added once (this can differ from a true
    fused multiply-add only when those errors themselves round onto a tie: not seen in
    millions of torch's draws)."""
    p = x * scale
    xh, xl = _split(x)
    sh, sl = _split(np.float64(scale))
    e = ((xh * sh - p) + xh * sl + xl * sh) + xl * sl  # p + e == x * scale exactly
    s, t = _two_sum(p, np.float64(shift))
    return s + (t + e)


def uniform(g: TorchStream, n: int, np_dtype, low: float, high: float) -> np.ndarray:
    """n samples of uniform_(low, high) in np_dtype, in order."""
    if np_dtype == np.float64:
        x = unit(g, n, True)
        return x if low == 0.0 and high == 1.0 else fma64(x, high - low, low)
    lo, hi = np.float32(low), np.float32(high)
    if lo == 0.0 and hi == 1.0:  # x * 1 + 0 is exact
        out = unit(g, n, False)
    else:
        out = fma32(unit(g, n, False), np.float32(hi - lo), lo)
    if np_dtype == np.float32:
        return out
    # the 16-bit floats: the float32 value rounded, and one that rounds onto `high` is `low`
    # (so the range stays half-open), as torch's kernel does
    narrow = out.astype(np_dtype)
    bounds = np.array([low, high], np.float32).astype(np_dtype)
    narrow[narrow == bounds[1]] = bounds[0]
    return narrow


def integers(g: TorchStream, n: int, low: int, high: int) -> np.ndarray:
    """n integers of random_(low, high) (int64), in order."""
    span = high - low
    draws = raw64(g, n) if span >= 1 << 32 else raw32(g, n)
    # (a span above 2**63 wraps in int64; adding low wraps back to the value)
    return (draws % np.uint64(span)).astype(np.int64) + np.int64(low)


def permutation(g: TorchStream, n: int) -> np.ndarray:
    """torch's randperm(n): swap element i with i + random() % (n - i), i = 0 .. n - 2 (the
    draws do not depend on the swaps, so they are made at once)."""
    if n >= (2**32 - 1) // 20:
        raise RuntimeError("randperm: n too large for retrograd's shuffle")  # > 214 million
    out = list(range(n))
    if n > 1:
        picks = (raw32(g, n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
        for i, z in enumerate(picks):
            j = i + z
            out[i], out[j] = out[j], out[i]
    return np.array(out, dtype=np.int64)


def _double_normals(g: TorchStream, n: int) -> np.ndarray:
    """n draws of torch's normal_distribution<double>: a Box-Muller pair from two 53-bit
    uniforms gives r cos(theta) now and r sin(theta) later (kept on the generator)."""
    out = np.empty(n)
    i = 0
    if n and g.normal_cache is not None:
        out[0] = g.normal_cache
        g.normal_cache = None
        i = 1
    pairs = (n - i + 1) // 2
    if pairs:
        u = unit(g, 2 * pairs, True)
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * _libm(math.log1p, -u2))
        theta = 2.0 * np.pi * u1
        values = np.empty(2 * pairs)
        values[0::2] = r * np.cos(theta)
        values[1::2] = r * np.sin(theta)
        out[i:] = values[:n - i]
        if (n - i) % 2:
            g.normal_cache = float(values[-1])
    return out


def _box_muller_blocks(u: np.ndarray, mean: float, std: float, double: bool) -> np.ndarray:
    """torch's normal_fill_16 on rows of 16 uniforms: values 0-7 become r cos(theta), 8-15
    r sin(theta), with r from 1 - u[0:8] and theta from u[8:16]; then * std + mean, fused.
    float64 uses the C library's functions as torch's scalar code; float32 torch's vectorized
    approximations (vector_mathfun)."""
    if double:
        u = u.reshape(-1, _BLOCK)
        radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - u[:, :8]))  # (1 - u is exact)
        theta = 2.0 * np.pi * u[:, 8:]
        out = np.empty(u.shape)
        out[:, :8] = radius * np.cos(theta)
        out[:, 8:] = radius * np.sin(theta)
        flat = out.reshape(-1)
        return flat if std == 1.0 and mean == 0.0 else fma64(flat, std, mean)
    flat32 = vector_mathfun.box_muller(u.reshape(-1, _BLOCK)).reshape(-1)
    if std == 1.0 and mean == 0.0:
        return flat32
    return fma32(flat32, np.float32(std), np.float32(mean))


def normal(g: TorchStream, n: int, np_dtype, mean: float, std: float,
           contiguous: bool = True) -> np.ndarray:
    """n samples of normal_(mean, std) in np_dtype, in the order torch writes them."""
    double = np_dtype == np.float64
    if n < _BLOCK or not contiguous:
        return fma64(_double_normals(g, n), std, mean).astype(np_dtype)
    u = unit(g, n, double)
    whole = n - n % _BLOCK
    out = np.empty(n, np.float64 if double else np.float32)
    out[:whole] = _box_muller_blocks(u[:whole], mean, std, double)
    if whole < n:
        # the last 16 values again, overlapping the blocks before: float32 and float64 draw
        # 16 new uniforms for them; the 16-bit types keep the leftover ones and draw the rest
        narrow = np_dtype not in (np.float32, np.float64)
        tail = np.concatenate([u[whole:], unit(g, _BLOCK - (n - whole), double)]) if narrow \
            else unit(g, _BLOCK, double)
        out[n - _BLOCK:] = _box_muller_blocks(tail, mean, std, double)
    return out if out.dtype == np_dtype else out.astype(np_dtype)


def bernoulli(g: TorchStream, p, n: int, single: bool) -> np.ndarray:
    """n draws of bernoulli(p) as bool: a uniform below p (24-bit float32 uniforms and p for a
    float32 probability tensor, else 53-bit doubles)."""
    if single:
        return unit(g, n, False) < np.asarray(p, np.float32).reshape(-1)
    return unit(g, n, True) < np.asarray(p, np.float64).reshape(-1)


def bernoulli_mask(g: TorchStream, shape: tuple, p: float) -> np.ndarray:
    """A bool array of `shape` drawn as torch's bernoulli_(p) fills a contiguous tensor."""
    n = int(np.prod(shape, dtype=np.int64))
    return bernoulli(g, p, n, False).reshape(shape)


def exponential(g: TorchStream, n: int, lambd: float) -> np.ndarray:
    """n draws of exponential_(lambd) as float64: -1/lambd * log1p(-u)."""
    return (-1.0 / lambd) * _libm(math.log1p, -unit(g, n, True))


def log_normal(g: TorchStream, n: int, mean: float, std: float) -> np.ndarray:
    """n draws of log_normal_(mean, std) as float64: exp of the double normal pairs."""
    return _libm(math.exp, normal(g, n, np.float64, mean, std, contiguous=False))


def cauchy(g: TorchStream, n: int, median: float, sigma: float) -> np.ndarray:
    """n draws of cauchy_(median, sigma) as float64: median + sigma tan(pi (u - 1/2))."""
    return median + sigma * _libm(math.tan, np.pi * (unit(g, n, True) - 0.5))


def geometric(g: TorchStream, n: int, p: float) -> np.ndarray:
    """n draws of geometric_(p) as float64: ceil(log(u) / log1p(-p))."""
    return np.ceil(_libm(math.log, unit(g, n, True)) / math.log1p(-p))


def memory_order(a: np.ndarray, of: np.ndarray | None = None) -> np.ndarray:
    """A view of `of` (a itself by default; else an array of a's shape read alongside it, such
    as probabilities broadcast to it) whose C order is the order torch's serial kernels visit
    a's elements: a's dimensions sorted by decreasing stride (memory order, as TensorIterator
    walks them)."""
    target = a if of is None else of
    if a.ndim < 2 or a.flags.c_contiguous:
        return target
    return target.transpose(sorted(range(a.ndim), key=lambda i: (-abs(a.strides[i]), i)))
