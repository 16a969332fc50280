"""Random numbers: torch's generator (an mt19937 seeded as torch's) and torch's samplers.

After `manual_seed(s)`, rand, randn, randint, randperm, normal_, uniform_, bernoulli_,
dropout, exponential_ and what is built on them (nn.init, random_split, shuffling data
loaders) draw torch's numbers (NOTE [torch's random streams] in kernels/torch_sampling.py);
the other samplers draw from the same stream with NumPy's algorithms.

The in-place samplers (normal_, uniform_, bernoulli_, random_, ...) are declared as ops: the
registry bumps the version counter, refuses leaves that require grad outside no_grad, and gives
a non-leaf torch's node (NormalBackward0, ...), whose derivative is zero as in torch.

The NumPy kernels the declarations run are in kernels/random.py and kernels/torch_sampling.py.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import secrets
import struct
import weakref

import numpy as np

from retrograd import _dtype as D
from retrograd._layout import check_layout
from retrograd._ops import dispatch
from retrograd._ops.creation import (
    NEGATIVE_DIM,
    _check_device,
    _finish,
    _like,
    _result,
    _write_out,
    parse_size,
    zeros,
)
from retrograd._ops.kernels import torch_sampling as TS
from retrograd._ops.kernels.creation import as_dtype, empty_strided_array
from retrograd._ops.kernels.random import (
    _check_p,
    _check_p_tensor,
    _check_range,
    _check_std,
    _check_uniform,
    _continuous,
    _expand_to,
    _float_dtype_of,
    _full_range,
    _integers,
    _np_float,
    normal_samples,
    standard_normal,
    uniform01,
)
from retrograd._ops.layout import not_implemented
from retrograd._ops.overloads import overloaded
from retrograd._tensor import Tensor

DEFAULT_SEED = 67280421310721  # torch's default CPU seed
_N = 624  # words of mt19937's state

# torch's CPUGeneratorImplState: the_initial_seed (u64), left, seeded (i32), next (u64), the
# state (624 u64), normal_x, normal_y, normal_rho (f64), normal_is_valid (i32, padded to 8),
# next_float_normal_sample (f32), its valid flag (bool, padded to 4)
_STATE = struct.Struct("<QiiQ624Qdddi4xf?3x")
_STATE_BYTES = _STATE.size  # 5056, as torch's


@functools.lru_cache(maxsize=64)  # (reseeding with the same few seeds is common)
def _seeded_key(seed: int) -> np.ndarray:
    """mt19937's state after seeding with the low 32 bits of seed (its init_genrand); read-only
    (the bit generator copies it)."""
    key = [seed & 0xFFFFFFFF]
    for i in range(1, _N):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    out = np.array(key, dtype=np.uint32)
    out.flags.writeable = False
    return out


# every Generator alive: the compiler puts their states back after drawing while it captures
LIVE_GENERATORS: weakref.WeakSet = weakref.WeakSet()


class Generator:
    """torch.Generator: torch's mt19937 and seeding, its state layout, and its cached normal
    sample (NOTE [torch's random streams])."""

    __slots__ = ("_seed", "_bits", "_np", "_device", "_float_normal", "__weakref__")

    def __init__(self, device: object = "cpu") -> None:
        from retrograd._device import device as make_device

        LIVE_GENERATORS.add(self)
        self._device = make_device(device)
        self._bits = np.random.MT19937()
        self._np = TS.TorchStream(self._bits)
        self._float_normal: float | None = None  # kept for torch's state layout only
        self._reseed(DEFAULT_SEED)

    @property
    def device(self):
        return self._device

    def _reseed(self, seed: int) -> None:
        # in place: other code holds this generator (and its NumPy generator)
        self._seed = seed
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": _seeded_key(seed), "pos": _N}}
        self._np.normal_cache = None
        self._float_normal = None

    def manual_seed(self, seed) -> Generator:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:
            raise ValueError("Overflow when unpacking long long")
        self._reseed(seed % 2**64)  # torch stores the seed as a uint64
        return self

    def seed(self) -> int:
        """Seed from the OS's entropy; returns the seed."""
        s = secrets.randbits(64)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The generator's state as a uint8 tensor in torch's layout (torch's get_rng_state
        bytes for the same seed and draws, and set_state takes torch's)."""
        from retrograd._tensor import _wrap

        st = self._bits.state["state"]
        key, pos = st["key"], int(st["pos"])
        # torch counts down `left` to the next refill and up `next`; a fresh seed has not
        # refilled yet (left 1, next 0), which NumPy's position 624 also means
        if pos >= _N:
            fresh = np.array_equal(key, _seeded_key(self._seed))
            left, nxt = 1, 0 if fresh else _N
        else:
            left, nxt = _N + 1 - pos, pos
        cache = self._np.normal_cache
        raw = _STATE.pack(self._seed, left, 1, nxt, *key.tolist(), 0.0,
                          0.0 if cache is None else cache, 0.0, int(cache is not None),
                          0.0 if self._float_normal is None else self._float_normal,
                          self._float_normal is not None)
        return _wrap(np.frombuffer(raw, np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        from retrograd._tensor import Tensor

        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a retrograd.ByteTensor, but got "
                            f"{type(new_state).__name__}")
        if new_state.dtype is not D.uint8:
            raise TypeError("RNG state must be a retrograd.ByteTensor")
        raw = np.ascontiguousarray(new_state._data).tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but "
                               f"found the input RNG state size to be {len(raw)}")
        fields = _STATE.unpack(raw)
        seed, left, _seeded, nxt = fields[:4]
        key = np.array(fields[4:4 + _N], dtype=np.uint64).astype(np.uint32)
        normal_y, normal_valid, float_normal, float_valid = (
            fields[4 + _N + 1], fields[4 + _N + 3], fields[4 + _N + 4], fields[4 + _N + 5])
        if not (1 <= left <= _N and 0 <= nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        self._seed = seed
        self._bits.state = {"bit_generator": "MT19937",
                            "state": {"key": key, "pos": _N if left == 1 else nxt}}
        self._np.normal_cache = normal_y if normal_valid else None
        self._float_normal = float_normal if float_valid else None
        return self

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset: int) -> Generator:
        raise RuntimeError("CPU Generator does not use offset")

    def clone_state(self) -> Generator:
        g = Generator(self._device)
        g.set_state(self.get_state())
        return g

    @property
    def np(self) -> TS.TorchStream:
        return self._np

    def __repr__(self) -> str:
        return f"<retrograd.Generator object at {hex(id(self))}>"


default_generator = Generator()

# called before every draw while not empty: vmap's randomness='error' refuses there
draw_hooks: list = []
# vmap's hook for a sampler called inside it (NOTE [Random draws under vmap])
member_draw_hooks: list = []


# NOTE [Random draws under vmap]
# A sampler whose arguments are not batched (rand(3), randn_like of an unbatched tensor,
# dropout's noise) sees only per-example shapes inside vmap, so it would draw one sample for
# the whole batch. While a vmap has run, such samplers hand vmap a function drawing one
# unbatched result (`member_draw_hooks`); vmap calls it once per batch member and gives a
# batched result (randomness="different"), once (randomness="same"), or raises torch's error
# (randomness="error"). Samplers on batched arguments (in-place ones, bernoulli(p)) go
# through the batching rules instead.


def per_member(draw_one):
    """draw_one() under vmap's randomness (NOTE [Random draws under vmap]): one tensor, or a
    tuple of them, drawn for every batch member that vmap's randomness asks for."""
    if member_draw_hooks:
        return member_draw_hooks[-1](draw_one)
    return draw_one()


def _sampler(fn, unbatched=None):
    """fn drawn per vmap batch member (NOTE [Random draws under vmap]); out= writes as is.
    `unbatched(args, kwargs)`, if given, says whether the call's arguments are unbatched (a
    batched argument goes through its batching rule instead)."""
    @functools.wraps(fn)
    def sampler(*args, **kwargs):
        if member_draw_hooks and kwargs.get("out") is None and (
                unbatched is None or unbatched(args, kwargs)):
            return member_draw_hooks[-1](lambda: fn(*args, **kwargs))
        return fn(*args, **kwargs)  # (its errors name what the call got wrong)

    return sampler


def gen(generator: Generator | None) -> TS.TorchStream:
    """The NumPy generator to draw from: the given one, or the default."""
    if draw_hooks:
        draw_hooks[-1]()
    if generator is None:
        return default_generator._np
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a retrograd.Generator, but got {type(generator).__name__}")
    return generator._np


def random_int64(generator: Generator | None = None) -> int:
    """torch.empty((), dtype=torch.int64).random_(generator=generator).item(): the draw torch's
    data loaders and samplers seed with."""
    return int(TS.integers(gen(generator), 1, 0, 2**63)[0])


def manual_seed(seed) -> Generator:
    """Seeds the default generator; returns it."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cpu"):
    """torch.random.fork_rng: restores the default generator's state on exit."""
    if not enabled:
        yield
        return
    saved = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(saved)


# --- sampling in a dtype ---------------------------------------------------------------------


def _g(generator) -> TS.TorchStream:
    return gen(generator)


def draw(kernel, *args):
    """kernel(*args): samples drawn from the generator among args (None: the default). While a
    dispatch mode is active the draw is reported to it (dispatch.random_drawn), so a compiled
    graph draws the same numbers in the same order as eager (NOTE [Random draws in compiled
    graphs]). `kernel` takes plain values and arrays and returns a fresh array (or a tuple); a
    Tensor among args is passed as its array (the graph records the tensor's value)."""
    out = kernel(*[a._data if isinstance(a, Tensor) else a for a in args])
    if dispatch.mode_stack:
        dispatch.random_drawn(kernel, args, out)
    return out


def _rand_kernel(generator, shape: tuple, d: D.dtype) -> np.ndarray:
    return uniform01(_g(generator), shape, d)


def _randn_kernel(generator, shape: tuple, d: D.dtype) -> np.ndarray:
    return standard_normal(_g(generator), shape, d)


def _randint_kernel(generator, low: int, high: int, shape: tuple, d: D.dtype) -> np.ndarray:
    return _integers(_g(generator), low, high, shape, d)


def _randperm_kernel(generator, n: int, dt: np.dtype) -> np.ndarray:
    return TS.permutation(_g(generator), n).astype(dt)


# the *_like draws make their result laid out as empty_like's (shape and element strides)
def _rand_like_kernel(generator, shape: tuple, strides: tuple, d: D.dtype) -> np.ndarray:
    arr = empty_strided_array(shape, strides, d.np)
    arr[...] = uniform01(_g(generator), shape, d)
    return arr


def _randn_like_kernel(generator, shape: tuple, strides: tuple, d: D.dtype) -> np.ndarray:
    arr = empty_strided_array(shape, strides, d.np)
    arr[...] = standard_normal(_g(generator), shape, d)
    return arr


def _randint_like_kernel(generator, low: int, high: int, shape: tuple, strides: tuple,
                         d: D.dtype) -> np.ndarray:
    arr = empty_strided_array(shape, strides, d.np)
    arr[...] = _integers(_g(generator), low, high, shape, d)
    return arr


def _normal_kernel(generator, mean: float, std: float, shape: tuple, d: D.dtype) -> np.ndarray:
    return normal_samples(_g(generator), shape, d, mean, std)


# --- factories -------------------------------------------------------------------------------


def _factory_args(name: str, size: tuple, kwargs: dict, dtype, out):

    shape = parse_size(name, size, kwargs)
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    return shape, d


def rand(*size, generator: Generator | None = None, out=None, dtype: D.dtype | None = None,
         layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
         names=None, **kwargs):
    """Uniform samples on [0, 1)."""
    check_layout(layout)
    return _float_samples("rand", "check_uniform_bounds", uniform01, size, kwargs, generator, out,
                          dtype, device, requires_grad)


def randn(*size, generator: Generator | None = None, out=None, dtype: D.dtype | None = None,
          layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False,
          names=None, **kwargs):
    """Standard normal samples."""
    check_layout(layout)
    return _float_samples("randn", "normal_kernel_cpu", standard_normal, size, kwargs, generator,
                          out, dtype, device, requires_grad)


def _float_samples(name: str, kernel: str, sample, size: tuple, kwargs: dict, generator, out,
                   dtype, device, requires_grad: bool):
    """rand and randn: floating dtypes only (torch names the kernel that refuses the others)."""
    shape, d = _factory_args(name, size, kwargs, dtype, out)
    _check_device(device)
    if d.category != D._FLOAT or d in D._FLOAT8:
        raise not_implemented(kernel, d.np)
    if out is None and not requires_grad:
        kernel = _rand_kernel if sample is uniform01 else _randn_kernel
        return _result(draw(kernel, generator, shape, d), out, requires_grad)
    return _result(sample(_g(generator), shape, d), out, requires_grad)


def _check_int_arg(name: str, pos: int, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        from retrograd._tensor import Tensor

        if isinstance(v, Tensor) and v.dtype.category == D._INT and v._data.size == 1:
            return int(v.item())
        raise TypeError(f"randint(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(v).__name__}")
    v = int(v)
    if not -(2**63) <= v < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _int64(v) -> int:
    """An int argument as torch unpacks it (a 0-d integral tensor stands for its value)."""
    v = int(v.item()) if hasattr(v, "item") else int(v)
    if not -(2**63) <= v < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _randint(low, high, size, generator, dtype, device, requires_grad: bool, out):
    """randint's overloads, once their arguments are told apart: integers on [low, high)."""
    low, high = _int64(low), _int64(high)
    shape = parse_size("randint", (size,))
    d = as_dtype(dtype) or (out.dtype if out is not None else D.int64)
    _check_device(device)
    _check_range(low, high, d)
    if out is None and not requires_grad:
        return _result(draw(_randint_kernel, generator, low, high, shape, d), out, False)
    return _result(_integers(_g(generator), low, high, shape, d), out, requires_grad)


# one function per overload (each carries its declaration), made by these
def _randint_form():
    def randint_form(high, size, *, generator: Generator | None = None, dtype=None, layout=None,
                     device=None, pin_memory: bool = False, requires_grad: bool = False,
                     out=None):
        check_layout(layout)
        return _randint(0, high, size, generator, dtype, device, requires_grad, out)

    return randint_form


def _randint_low_form():
    def randint_low_form(low, high, size, *, generator: Generator | None = None, dtype=None,
                         layout=None, device=None, pin_memory: bool = False,
                         requires_grad: bool = False, out=None):
        check_layout(layout)
        return _randint(low, high, size, generator, dtype, device, requires_grad, out)

    return randint_low_form


def _declare_randint() -> None:
    """torch's four randint overloads: (high, size) or (low, high, size), each with and without
    a generator (required in the .generator ones, so giving one, even None, selects them)."""
    from retrograd._ops.overloads import BIND_EACH, composite

    options = "ScalarType? dtype=long, Layout? layout=None, Device? device=None, " \
              "bool? pin_memory=None) -> Tensor"
    composite(f"randint(SymInt high, SymInt[] size, *, {options}", _randint_form(),
              method=False)
    composite("randint.generator(SymInt high, SymInt[] size, *, Generator? generator, "
              f"{options}", _randint_form(), method=False)
    composite(f"randint.low(SymInt low, SymInt high, SymInt[] size, *, {options}",
              _randint_low_form(), method=False)
    composite("randint.low_generator(SymInt low, SymInt high, SymInt[] size, *, "
              f"Generator? generator, {options}", _randint_low_form(), method=False)
    BIND_EACH.add("randint")


def randperm(n, *, generator: Generator | None = None, out=None, dtype: D.dtype | None = None,
             layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False):
    """A random permutation of 0..n-1 (int64)."""

    n = operator.index(n)
    if n < 0:
        raise RuntimeError(NEGATIVE_DIM.format(n, [n]))
    d = as_dtype(dtype) or (out.dtype if out is not None else D.int64)
    _check_device(device, layout)
    if out is None and not requires_grad:
        return _result(draw(_randperm_kernel, generator, n, np.dtype(d.np)), out, False)
    return _result(TS.permutation(_g(generator), n).astype(d.np), out, requires_grad)


def _like_array(input, dtype, memory_format=None) -> tuple:

    arr = _like(input, dtype, memory_format)
    return arr, D.from_numpy_dtype(arr.dtype)


def _drawn_like(kernel, arr: np.ndarray, requires_grad: bool, generator, *params) -> Tensor:
    """kernel(generator, *params, layout of arr, dtype) as a new tensor; `arr` is the empty
    array _like made, which gives the layout. A plain result is a draw the compiler records
    (NOTE [Random draws in compiled graphs]), as rand's."""
    layout = (arr.shape, tuple(s // arr.itemsize for s in arr.strides),
              D.from_numpy_dtype(arr.dtype))
    if requires_grad:
        return _finish(kernel(generator, *params, *layout), True)
    return _finish(draw(kernel, generator, *params, *layout), False)


def rand_like(input, *, generator: Generator | None = None, dtype: D.dtype | None = None,
              layout=None, device=None, requires_grad: bool = False, memory_format=None,
              pin_memory: bool = False):
    check_layout(layout)
    arr, d = _like_array(input, dtype, memory_format)
    if d.category != D._FLOAT or d in D._FLOAT8:
        raise not_implemented("check_uniform_bounds", d.np)
    return _drawn_like(_rand_like_kernel, arr, requires_grad, generator)


def randn_like(input, *, generator: Generator | None = None, dtype: D.dtype | None = None,
               layout=None, device=None, requires_grad: bool = False, memory_format=None,
               pin_memory: bool = False):
    check_layout(layout)
    arr, d = _like_array(input, dtype, memory_format)
    if d.category != D._FLOAT or d in D._FLOAT8:
        raise not_implemented("normal_kernel_cpu", d.np)
    return _drawn_like(_randn_like_kernel, arr, requires_grad, generator)


def randint_like(input, *args, generator: Generator | None = None, dtype: D.dtype | None = None,
                 layout=None, device=None, requires_grad: bool = False, memory_format=None,
                 pin_memory: bool = False, **kwargs):
    """randint_like(input, high) / randint_like(input, low, high)."""
    check_layout(layout)
    names = ("low", "high") if len(args) == 2 or "low" in kwargs else ("high",)
    bound = dict(zip(names, args))
    bound.update(kwargs)
    if "high" not in bound:
        raise TypeError("randint_like() missing required argument 'high'")
    low = _check_int_arg("low", 2, bound.get("low", 0))
    high = _check_int_arg("high", 3 if "low" in bound else 2, bound["high"])
    arr, d = _like_array(input, dtype, memory_format)
    _check_range(low, high, d)
    return _drawn_like(_randint_like_kernel, arr, requires_grad, generator, low, high)


# --- normal ----------------------------------------------------------------------------------


def _normal_tensor_float(mean, std, generator):
    d = _float_dtype_of(mean, "normal_kernel_cpu")
    _check_std(std)
    # torch draws normal(0, std) and adds the means
    z = normal_samples(_g(generator), mean.shape, d, 0.0, std)
    t = _np_float(d)
    return (z.astype(t, copy=False) + mean.astype(t, copy=False)).astype(d.np, copy=False)


def _normal_float_tensor(mean, std, generator):
    d = _float_dtype_of(std, "normal_kernel_cpu")
    if std.size and not (std >= 0).all():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    z = standard_normal(_g(generator), std.shape, d)
    t = _np_float(d)
    return (z.astype(t, copy=False) * std.astype(t, copy=False) + t(mean)).astype(d.np,
                                                                                 copy=False)


def _normal_tensor_tensor(mean, std, generator):
    d = _float_dtype_of(mean, "normal_kernel_cpu")
    if std.size and not (std >= 0).all():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    try:
        shape = np.broadcast_shapes(mean.shape, std.shape)
    except ValueError:
        from retrograd._ops.layout import broadcast_error

        raise broadcast_error(mean.shape, std.shape) from None
    z = standard_normal(_g(generator), shape, d)
    t = _np_float(d)
    return (z.astype(t, copy=False) * std.astype(t, copy=False)
            + mean.astype(t, copy=False)).astype(d.np, copy=False)


def _zeros_of(shape, d):
    return zeros(shape, dtype=d)


def _declare_ops():
    from retrograd._ops.registry import op

    zero_self = {"self": lambda grad: _zeros_of(grad.shape, grad.dtype)}
    ops = {}
    ops["normal_tf"] = op(
        "normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> Tensor",
        _normal_tensor_float, node="NormalBackward1",
        grads={"mean": lambda mean_shape, mean_dtype: _zeros_of(mean_shape, mean_dtype)},
        method=False)
    ops["normal_ft"] = op(
        "normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor",
        _normal_float_tensor, node="NormalBackward2",
        grads={"std": lambda std_shape, std_dtype: _zeros_of(std_shape, std_dtype)},
        method=False)
    ops["normal_tt"] = op(
        "normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor",
        _normal_tensor_tensor, node="NormalBackward3",
        grads={"mean": lambda mean_shape, mean_dtype: _zeros_of(mean_shape, mean_dtype),
               "std": lambda std_shape, std_dtype: _zeros_of(std_shape, std_dtype)},
        method=False)
    ops["normal_"] = op(
        "normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) "
        "-> Tensor(a!)", _normal_inplace, node="NormalBackward0", grads=zero_self)
    # `from` is a Python keyword, so the schema spells it from_
    ops["uniform_"] = op(
        "uniform_(Tensor(a!) self, float from_=0, float to=1, *, Generator? generator=None) "
        "-> Tensor(a!)", _uniform_inplace, node="UniformBackward0", grads=zero_self)
    ops["bernoulli"] = op(
        "bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", _bernoulli,
        node="BernoulliBackward0", grads=zero_self)
    # torch gives this overload a NotImplemented derivative; here it is not differentiable
    ops["bernoulli_p"] = op(
        "bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
        _bernoulli_p)
    ops["bernoulli_f"] = op(
        "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) "
        "-> Tensor(a!)", _bernoulli_inplace_float, node="BernoulliBackward2", grads=zero_self,
        function=False)
    ops["bernoulli_t"] = op(
        "bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) "
        "-> Tensor(a!)", _bernoulli_inplace_tensor, node="BernoulliBackward1",
        grads={"self": zero_self["self"],
               "p": lambda p_shape, p_dtype: _zeros_of(p_shape, p_dtype)},
        function=False)
    ops["random_from"] = op(
        "random_.from(Tensor(a!) self, int from_, int? to, *, Generator? generator=None) "
        "-> Tensor(a!)", _random_from, node="RandomBackward0", grads=zero_self,
        function=False, method=False)
    ops["random_to"] = op(
        "random_.to(Tensor(a!) self, int to, *, Generator? generator=None) -> Tensor(a!)",
        _random_to, node="RandomBackward1", grads=zero_self, function=False, method=False)
    ops["random_"] = op(
        "random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)", _random_full,
        node="RandomBackward2", grads=zero_self, function=False, method=False)
    ops["exponential_"] = op(
        "exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None) "
        "-> Tensor(a!)", _exponential_inplace, node="ExponentialBackward0", grads=zero_self)
    ops["cauchy_"] = op(
        "cauchy_(Tensor(a!) self, float median=0, float sigma=1, *, Generator? generator=None) "
        "-> Tensor(a!)", _cauchy_inplace, node="CauchyBackward0", grads=zero_self)
    ops["log_normal_"] = op(
        "log_normal_(Tensor(a!) self, float mean=1, float std=2, *, "
        "Generator? generator=None) -> Tensor(a!)", _log_normal_inplace,
        node="LogNormalBackward0", grads=zero_self)
    ops["geometric_"] = op(
        "geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!)",
        _geometric_inplace, node="GeometricBackward0", grads=zero_self)
    return ops


# --- in-place samplers (forwards get the tensor's array and write into it) -----------------


def _fill(a: np.ndarray, values: np.ndarray) -> None:
    """Write `values` (a.size of them, in the order they were drawn) into a in the order
    torch's kernels visit a's elements: memory order (NOTE [torch's random streams])."""
    view = TS.memory_order(a)
    view[...] = values.reshape(view.shape)


def _normal_inplace(a, mean, std, generator):
    d = _float_dtype_of(a, "normal_kernel_cpu")
    _check_std(std)
    _fill(a, normal_samples(_g(generator), (a.size,), d, mean, std, a.flags.c_contiguous))


def _uniform_inplace(a, low, high, generator):
    d = _float_dtype_of(a, "check_uniform_bounds")
    _check_uniform(low, high, d)
    _fill(a, TS.uniform(_g(generator), a.size, d.np, low, high))


def _bernoulli(a, generator):
    d = D.from_numpy_dtype(a.dtype)
    if d.category != D._FLOAT:
        raise not_implemented("bernoulli_tensor_cpu_p_", d.np)
    _check_p_tensor(a)
    return TS.bernoulli(_g(generator), a, a.size, a.dtype != np.float64).reshape(
        a.shape).astype(a.dtype)


def _bernoulli_p(a, p, generator):
    _check_p(p)
    return TS.bernoulli(_g(generator), p, a.size, False).reshape(a.shape).astype(a.dtype)


def _bernoulli_inplace_float(a, p, generator):
    _check_p(p)
    _fill(a, TS.bernoulli(_g(generator), p, a.size, False))


def _bernoulli_inplace_tensor(a, p, generator):
    _check_p_tensor(p)
    in_order = TS.memory_order(a, _expand_to(p, a.shape))  # each element's probability
    _fill(a, TS.bernoulli(_g(generator), in_order, a.size, p.dtype != np.float64))


def _random_from(a, low, high, generator):
    d = D.from_numpy_dtype(a.dtype)
    if high is None:
        high = _full_range(d)[1]
    _check_range(low, high, d)
    _fill(a, _integers(_g(generator), low, high, (a.size,), d))


def _random_to(a, high, generator):
    d = D.from_numpy_dtype(a.dtype)
    _check_range(0, high, d)
    _fill(a, _integers(_g(generator), 0, high, (a.size,), d))


def _random_full(a, generator):
    d = D.from_numpy_dtype(a.dtype)
    if d in D.BAREBONES_UNSIGNED:  # torch has no default range for them
        raise not_implemented("random_kernel_cpu", a.dtype)
    low, high = _full_range(d)
    _fill(a, _integers(_g(generator), low, high, (a.size,), d))


def _exponential_inplace(a, lambd, generator):
    _continuous(a, "Exponential")
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _fill(a, TS.exponential(_g(generator), a.size, lambd))


def _cauchy_inplace(a, median, sigma, generator):
    _continuous(a, "Cauchy")
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _fill(a, TS.cauchy(_g(generator), a.size, median, sigma))


def _log_normal_inplace(a, mean, std, generator):
    _float_dtype_of(a, "log_normal_cpu")
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    _fill(a, TS.log_normal(_g(generator), a.size, mean, std))


def _geometric_inplace(a, p, generator):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    _fill(a, TS.geometric(_g(generator), a.size, p))


OPS = _declare_ops()


# --- normal's factory overload and the dispatchers -----------------------------------------


def _normal_float_float(mean, std, size, *, generator: Generator | None = None, dtype=None,
                        layout=None, device=None, pin_memory: bool = False,
                        requires_grad: bool = False, out=None):
    """normal.float_float: samples of one mean and std, in a new tensor of shape `size` (a
    random draw a compiled graph records, NOTE [Random draws in compiled graphs])."""
    mean, std = float(mean), float(std)  # a 0-d tensor stands for its value
    shape = parse_size("normal", (size,))
    d = as_dtype(dtype) or (out.dtype if out is not None else D.get_default_dtype())
    _check_device(device, layout)
    _check_std(std)
    if out is None and not requires_grad:
        return _finish(draw(_normal_kernel, generator, mean, std, shape, d), False)
    return _result(_normal_kernel(generator, mean, std, shape, d), out, requires_grad)


def _declare_dispatchers() -> None:
    from retrograd._ops.overloads import BIND_EACH, composite

    composite("normal.float_float(float mean, float std, SymInt[] size, *, "
              "Generator? generator=None, ScalarType? dtype=None, Layout? layout=None, "
              "Device? device=None, bool? pin_memory=None) -> Tensor", _normal_float_float,
              method=False)
    _declare_randint()
    # torch's parser checks each argument of these (a Generator, a float p, ...)
    BIND_EACH.update({"normal", "bernoulli", "bernoulli_"})


_declare_dispatchers()
# the public functions, for module code that calls them (the data samplers' randint)
randint = overloaded("randint")
normal = overloaded("normal")
_bernoulli_dispatch = overloaded("bernoulli")


def _plain_mean_std(args: tuple, kwargs: dict) -> bool:
    """normal's float-and-size form and its forms on plain tensors are drawn per vmap member;
    a batched (wrapper) mean or std is batched by the op's rule."""
    return not any(isinstance(a, Tensor) and type(a) is not Tensor
                   for a in (*args[:2], kwargs.get("mean"), kwargs.get("std")))


def _plain_probabilities(args: tuple, kwargs: dict) -> bool:
    """bernoulli on unbatched probabilities is drawn per vmap member."""
    probs = args[0] if args else kwargs.get("input", kwargs.get("self"))
    return type(probs) is Tensor


bernoulli = _sampler(_bernoulli_dispatch, _plain_probabilities)


def random_(self, *args, generator: Generator | None = None, **kwargs):
    """random_() / random_(to) / random_(from, to) (to=None: up to the dtype's maximum)."""
    if "from" in kwargs:
        kwargs["from_"] = kwargs.pop("from")
    if not args and not kwargs:
        return OPS["random_"](self, generator=generator)
    if len(args) == 1 and not kwargs or set(kwargs) == {"to"} and not args:
        to = args[0] if args else kwargs["to"]
        if to is None:
            raise TypeError("random_() received an invalid combination of arguments - got "
                            "(to=NoneType), but expected (int from, int to) or (int to)")
        return OPS["random_to"](self, _check_int_arg("to", 1, to), generator=generator)
    bound = dict(zip(("from_", "to"), args))
    bound.update(kwargs)
    low = _check_int_arg("from", 1, bound.get("from_", 0))
    to = bound.get("to")
    to = None if to is None else _check_int_arg("to", 2, to)
    return OPS["random_from"](self, low, to, generator=generator)


# wrapper class -> multinomial for its instances (vmap's batched values draw per member)
multinomial_for: dict = {}


def multinomial(input, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None, out=None):
    """Indices drawn from the categorical distributions in the rows of `input` (int64)."""
    from retrograd._tensor import _is_wrapper, _wrap

    if isinstance(input, Tensor) and input.__class__ is not Tensor and _is_wrapper(input):
        special = multinomial_for.get(input.__class__)
        if special is None:
            raise NotImplementedError(
                f"multinomial of a {input.__class__.__name__} (a wrapper subclass) is not "
                "supported")
        return special(input, num_samples, replacement, generator)
    probs = input._data if isinstance(input, Tensor) else np.asarray(input)
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    d = D.from_numpy_dtype(probs.dtype)
    if d.category != D._FLOAT:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{D.legacy_name(d)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    src = input if isinstance(input, Tensor) else probs
    if out is not None:
        return _write_out(out, _multinomial_kernel(generator, probs, num_samples, replacement))
    return _wrap(draw(_multinomial_kernel, generator, src, num_samples, bool(replacement)))


def _multinomial_kernel(generator, probs: np.ndarray, num_samples: int,
                        replacement: bool) -> np.ndarray:
    """The draw, after the checks of the values (they run again at every compiled call)."""
    n_cat = probs.shape[-1]
    rows = probs.reshape(-1, n_cat).astype(np.float64)
    if rows.size and (not np.isfinite(rows).all() or (rows < 0).any()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if rows.shape[0] and (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    g = _g(generator)
    work = probs.reshape(-1, n_cat)
    t = work.dtype if work.dtype in (np.float32, np.float64) else np.float32
    work = work.astype(t, copy=False)
    if replacement and num_samples > 1:
        # torch's: each row's running sum in the input's precision, divided by its total,
        # the last set to 1; then per sample a 53-bit uniform and a binary search for the
        # first bucket whose bound is not below it (rows in order, a row's samples in order)
        cum = np.cumsum(work, axis=1, dtype=t)
        cum /= cum[:, -1:]
        cum[:, -1] = 1
        u = TS.unit(g, work.shape[0] * num_samples, True).reshape(-1, num_samples)
        idx = np.stack([np.searchsorted(c.astype(np.float64), row, side="left")
                        for c, row in zip(cum, u)]) if work.shape[0] else \
            np.zeros((0, num_samples), np.int64)
    else:
        # torch's exponential race: the largest of p / q, q ~ Exp(1) drawn in p's dtype
        q = TS.exponential(g, work.size, 1.0).astype(t).reshape(work.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = work / q
        idx = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    return idx.astype(np.int64).reshape(probs.shape[:-1] + (num_samples,))


def _register() -> None:
    from retrograd._ops.registry import register, register_method

    for fn in (manual_seed, seed, initial_seed, get_rng_state, set_rng_state, multinomial):
        register(fn.__name__, fn)
    for fn in (rand, randn, randint, randperm, rand_like, randn_like, randint_like):
        register(fn.__name__, _sampler(fn))
    register("normal", _sampler(normal, _plain_mean_std))
    register("bernoulli", bernoulli)
    register_method("bernoulli", _sampler(overloaded("bernoulli", True), _plain_probabilities))
    register("Generator", Generator)
    register("default_generator", default_generator)
    register_method("random_", random_)
    register_method("multinomial", multinomial)


_register()
