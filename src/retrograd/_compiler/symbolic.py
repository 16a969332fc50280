"""Dynamic shapes: one compiled variant for every size of the dimensions it leaves symbolic.

NOTE [Dynamic shapes]
With `dynamic=True` the sizes of the call's tensor arguments are not guarded: each dimension of
size 2 or more is a symbol (s0, s1, ...; dimensions of equal size share one, as torch's duck
sizing does, so a call where they differ gets a variant of its own), sizes 0 and 1 stay exact
(broadcasting and squeezing decide on them), and the parameters, buffers and tensors the
function reads from outside keep their sizes. Arguments that are not C-contiguous keep theirs.
A size that some parameter also has stays fixed too (a feature dimension meets a weight, and
torch would specialize it); when even that cannot be captured, the leading (batch) dimensions
alone are symbols. A call fits a variant when its fixed sizes are equal and each symbol has
one size of 2 or more. With the default `dynamic=None` (torch's automatic dynamic shapes) the
first variant is static, and the dimensions seen changing are the symbols of the next one.
retrograd._dynamo's marks override all of this, as torch's do: a dimension marked by
mark_dynamic or maybe_mark_dynamic is a symbol under any `dynamic` (mark_dynamic's raises
ConstraintViolationError when the function fails at the probe sizes, i.e. fixes that size),
one marked by mark_static keeps its size.

Capture runs real NumPy code, so it sees numbers, never symbols. The variant is therefore
captured twice, at two probe sizes: each symbol gets a distinct prime just above its size in
the call (at least 5) that divides no fixed size the call shows, then that prime plus 5 (so
every size computed from a symbol moves, and floor divisions the odd primes cannot tell apart
differ); the probes stay close to the call's sizes because capture computes at them. The
arguments are tiled to those sizes, so
indices and labels keep valid values. The two graphs must be the same but for their numbers.
An integer argument equal in both is fixed; one that differs is a size computed from the
symbols, and unique factorization reads it back from the first probe as a product of symbols
and a number, plus a small offset (`s0 - 1`: a sequence shifted by one), perhaps floor-divided
by a small number (`s0 // 2`, a stride-2 output size), the simplest form the second probe
confirms. The argument becomes that expression (`64*s0*s1`), which the
generated code evaluates from the call's sizes. The forward reads the symbols from its inputs'
shapes, the backward gets them from the forward's call (they are arguments of both graphs, as
torch's SymInts are), and the graph listings print them (`f32[s0, 8]`). A graph that is not the
same at both probes, a number that differs but is no such expression (`s0 + s1`, a product of
two floor divisions), a float computed from a size, a constant array or a tensor made outside
the captured ops whose length is a symbol: the variant is not built, and each shape compiles
on its own, as without `dynamic` (logged). Inlined saved-tensor hooks are traced at both probes too.

Each new combination of sizes is then checked once against the eager function on perturbed
copies of the call's arguments (config.verify's comparison) before the variant serves it:
a branch on a size's value that both probes took the same way cannot hide a wrong result; a
shape that fails the check compiles on its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from retrograd._compiler.capture import Unsupported
from retrograd._compiler.graph import Graph, Node
from retrograd._tensor import Tensor, _wrap

# integers at least this large are sentinels (a slice's "to the end"), not sizes
_LARGEST_SIZE = 1 << 40


class SymExpr:
    """(coeff * prod(s_i ** e_i) + offset) // div: a size computed from the symbols, as the
    generated code evaluates it (`text`)."""

    __slots__ = ("coeff", "powers", "offset", "div", "text")

    def __init__(self, coeff: int, powers: tuple, offset: int = 0, div: int = 1) -> None:
        self.coeff = coeff
        self.powers = powers  # ((symbol index, exponent), ...), by symbol index
        self.offset = offset
        self.div = div
        factors = [f"s{i}" if e == 1 else f"s{i}**{e}" for i, e in powers]
        if coeff == -1:
            factors[0] = "-" + factors[0]
        elif coeff != 1:
            factors.insert(0, str(coeff))
        text = "*".join(factors)
        if offset:
            text = f"({text} {'+' if offset > 0 else '-'} {abs(offset)})"
        if div != 1:
            text = f"({text} // {div})"
        self.text = text

    def evaluate(self, sizes: list | tuple) -> int:
        value = self.coeff
        for i, e in self.powers:
            value *= sizes[i] ** e
        return (value + self.offset) // self.div

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SymExpr) and self._id() == other._id()

    def __hash__(self) -> int:
        return hash(self._id())

    def _id(self) -> tuple:
        return self.coeff, self.powers, self.offset, self.div


def factor(value: int, primes: tuple) -> SymExpr | None:
    """`value` as a SymExpr over the probe primes, or None when none divides it."""
    if not 2 <= abs(value) < _LARGEST_SIZE:
        return None
    coeff, powers = value, []
    for i, p in enumerate(primes):
        e = 0
        while coeff % p == 0:
            coeff //= p
            e += 1
        if e:
            powers.append((i, e))
    return SymExpr(coeff, tuple(powers)) if powers else None


# how far from a product of symbols a size may be (`s0 - 1`: a sequence shifted by one)
_MAX_OFFSET = 8


# the largest divisor of a floor division read back (`T // 2`, a stride-2 output size)
_MAX_DIV = 4
_OFFSETS = sorted(range(-_MAX_OFFSET, _MAX_OFFSET + 1), key=abs)


def solve(vp: int, vq: int, primes: tuple, other: tuple) -> int | SymExpr:
    """The size that is `vp` at probe sizes `primes` and `vq` at `other`: the same number
    (fixed), or a product of symbols and a number plus a small offset, or that floor-divided
    by a small number (the simplest form that fits both probes)."""
    if vp == vq:
        return vp
    for div in range(1, _MAX_DIV + 1):
        # (e + k) // div == vp: e + k is one of vp * div ... vp * div + div - 1; the smallest
        # offset first (the probes are odd: (s0 - 1) // 2 fits where s0 // 2 is meant)
        for k in _OFFSETS:
            for low in range(vp * div, vp * div + div):
                e = factor(low - k, primes)
                if e is not None:
                    found = SymExpr(e.coeff, e.powers, k, div)
                    if found.evaluate(other) == vq:
                        return found
    raise Unsupported(f"a size computed from the dynamic sizes in a form the compiler does not "
                      f"read ({vp} at sizes {list(primes)}, {vq} at {list(other)})")


def dim_text(size: int, primes: tuple) -> str:
    """A dimension as graph listings print it: its expression, or the number."""
    expr = factor(size, primes) if primes else None
    return str(size) if expr is None else expr.text


# --- the guard key and the probe call ------------------------------------------------------------

def outside_sizes(fn: Any) -> set:
    """The sizes of the tensors (and modules' parameters) a function reads from its closure,
    defaults and globals: a dimension that meets one of them stays fixed, as one meeting a
    parameter does."""
    from retrograd.nn.modules.module import Module

    code = getattr(fn, "__code__", None)
    values: list = list(getattr(fn, "__defaults__", None) or ())
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    if code is not None:
        scope = getattr(fn, "__globals__", {})
        values += [scope[n] for n in code.co_names if n in scope]
    sizes: set = set()
    for v in values:
        if isinstance(v, Tensor):
            sizes.update(v._data.shape)
        elif isinstance(v, Module):
            for t in v.state_dict().values():
                sizes.update(t._data.shape)
    return sizes


def changed_dims(old: tuple, new: tuple) -> set:
    """The (tensor argument ordinal, dimension) pairs whose size differs between two guard
    keys that differ in nothing else (torch's automatic dynamic shapes mark these)."""
    if old[:2] != new[:2] or old[3:] != new[3:] or len(old[2]) != len(new[2]):
        return set()
    changed: set = set()
    ordinal = 0
    for go, gn in zip(old[2], new[2]):
        if go[0] != "T" or gn[0] != "T":
            if go != gn:
                return set()
            continue
        if go[2:] != gn[2:] or len(go[1]) != len(gn[1]):
            return set()
        changed.update((ordinal, d) for d, (a, b) in enumerate(zip(go[1], gn[1])) if a != b)
        ordinal += 1
    return changed


class Marks:
    """The retrograd._dynamo marks on a call's tensor arguments, as (tensor argument ordinal,
    dimension) pairs: `strict` (mark_dynamic), `weak` (maybe_mark_dynamic), `static`."""

    __slots__ = ("strict", "weak", "static")

    def __init__(self, strict: frozenset = frozenset(), weak: frozenset = frozenset(),
                 static: frozenset = frozenset()) -> None:
        self.strict, self.weak, self.static = strict, weak, static

    @property
    def dynamic(self) -> frozenset:
        return (self.strict | self.weak) - self.static


NO_MARKS = Marks()


def call_marks(args: tuple, kwargs: dict) -> Marks:
    """The marks on the call's tensor arguments; a marked size outside its mark_dynamic range
    raises torch's ConstraintViolationError."""
    from retrograd._compiler.joint import flatten
    from retrograd.fx.experimental.symbolic_shapes import ConstraintViolationError

    strict: set = set()
    weak: set = set()
    static: set = set()
    ordinal = 0
    for leaf in flatten((args, kwargs))[0]:
        if not isinstance(leaf, Tensor):
            continue
        meta = leaf._meta
        marks = None if meta is None else meta.shape_marks
        if marks is not None:
            shape = leaf._data.shape
            for d, (lo, hi) in marks["range"].items():
                size = shape[d]
                if size < lo or (hi is not None and size > hi):
                    raise ConstraintViolationError(
                        f"{size} not in range [{lo}, {'int_oo' if hi is None else hi}] "
                        f"(dimension {d} of tensor argument {ordinal}, marked dynamic)")
            n = len(shape)
            strict.update((ordinal, d % n) for d in marks["dynamic"])
            weak.update((ordinal, d % n) for d in marks["weak"])
            static.update((ordinal, d % n) for d in marks["static"])
        ordinal += 1
    if not (strict or weak or static):
        return NO_MARKS
    return Marks(frozenset(strict), frozenset(weak), frozenset(static))


def dynamic_key(key: tuple, leading_only: bool = False, outside: frozenset = frozenset(),
                only: frozenset | None = None, marks: Marks = NO_MARKS) -> tuple | None:
    """(the call's guard key with its arguments' sizes made symbols, the symbols' sources as
    (tensor argument ordinal, dimension, symbol index), the call's size of each symbol), or
    None when no argument has a dimension to leave symbolic. A size some parameter or
    fixed-size argument or tensor read from outside (`outside`) also has stays fixed (a
    feature dimension that meets a weight);
    `leading_only`: the leading (batch) dimensions alone are symbols, whatever their size;
    `only`: the (tensor argument ordinal, dimension) pairs that are symbols. Marked dimensions
    (`marks`) are symbols, or fixed, whatever the rest says."""
    grad, params, guards, spec, hooks, inference, training, default_dtype = key
    fixed = set()
    if not leading_only:
        fixed = {s for g in params for s in g[1]} | outside
        fixed.update(s for g in guards if g[0] == "T" and not g[4] for s in g[1])
    symbol_of: dict = {}  # size -> symbol index (duck sizing)
    sources: list = []
    new: list = []
    ordinal = 0
    for g in guards:
        if g[0] != "T":
            new.append(g)
            continue
        shape, contiguous = g[1], g[4]
        if contiguous:
            dims: list = []
            for d, size in enumerate(shape):
                at = (ordinal, d)
                if size >= 2 and at not in marks.static and (
                        at in marks.dynamic or
                        (at in only if only is not None else
                         size not in fixed and (d == 0 or not leading_only))):
                    k = symbol_of.setdefault(size, len(symbol_of))
                    sources.append((ordinal, d, k))
                    dims.append(f"s{k}")
                else:
                    dims.append(size)
            g = ("T", tuple(dims)) + g[2:]
        new.append(g)
        ordinal += 1
    if not sources:
        return None
    return ((grad, params, tuple(new), spec, hooks, inference, training, default_dtype),
            sources, list(symbol_of))


def matches(dkey: tuple, key: tuple, marks: Marks = NO_MARKS) -> bool:
    """Whether a call with guard key `key` fits the symbolic key `dkey`: fixed sizes equal,
    each symbol one size of 2 or more, and no dimension marked static a symbol."""
    if dkey[:2] != key[:2] or dkey[3:] != key[3:] or len(dkey[2]) != len(key[2]):
        return False
    bound: dict = {}
    ordinal = 0
    for dg, g in zip(dkey[2], key[2]):
        if dg[0] != "T" or g[0] != "T":
            if dg != g:
                return False
            continue
        if dg[2:] != g[2:] or len(dg[1]) != len(g[1]):
            return False
        for d, (ds, size) in enumerate(zip(dg[1], g[1])):
            if type(ds) is str:
                if size < 2 or bound.setdefault(ds, size) != size or \
                        (ordinal, d) in marks.static:
                    return False
            elif ds != size:
                return False
        ordinal += 1
    return True


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True


def choose_probes(sizes: list, fixed: set) -> tuple:
    """A distinct prime per symbol, above its size (and at least 5), dividing none of the fixed
    sizes. Close to the call's sizes: capture computes at them, and a size may be an exponent
    of the work (histogramdd's number of dimensions)."""
    primes: list = []
    for size in sizes:
        p = max(size + 1, 5)
        while not _is_prime(p) or p in primes or any(f % p == 0 for f in fixed if f):
            p += 1
        primes.append(p)
    return tuple(primes)


def confirming_probes(primes: tuple) -> tuple:
    """The second probe's sizes, which only confirm what the first probe's factorization
    reads: each prime plus 5. Far enough that every size computed from a symbol differs
    between the probes (a floor division by up to _MAX_DIV moves; an integer equal at both is
    fixed), and even, so that floor divisions the odd primes cannot tell apart (s0 // 2 and
    (s0 - 1) // 2) differ there."""
    return tuple(p + 5 for p in primes)


def fixed_sizes(key: tuple) -> set:
    """Every size the guard key keeps exact: parameters', and arguments' numbers."""
    fixed: set = set()
    for g in key[1]:
        fixed.update(g[1])
    for g in key[2]:
        if g[0] == "T":
            fixed.update(s for s in g[1] if isinstance(s, int))
    return fixed


def _tiled(t: Tensor, dims: list) -> Tensor:
    a = t._data
    for d, size in dims:
        a = np.take(a, np.arange(size) % a.shape[d], axis=d)
    c = _wrap(np.ascontiguousarray(a))
    c._requires_grad = t._requires_grad
    return c


def probe_call(args: tuple, kwargs: dict, sources: list, primes: tuple) -> tuple:
    """The call's arguments tiled to the probe sizes."""
    from retrograd._compiler.joint import flatten, unflatten

    leaves, spec = flatten((args, kwargs))
    by_ordinal: dict = {}
    for o, d, k in sources:
        by_ordinal.setdefault(o, []).append((d, primes[k]))
    new, ordinal = [], 0
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            dims = by_ordinal.get(ordinal)
            if dims:
                leaf = _tiled(leaf, dims)
            ordinal += 1
        new.append(leaf)
    return unflatten(new, spec)


# --- reading the probe sizes back as symbols ------------------------------------------------------

def _paired(a: Any, b: Any, probes: tuple) -> Any:
    """Argument `a` of the graph captured at probe sizes probes[0] with its integers that
    differ in `b`, the same argument captured at probes[1], made SymExprs."""
    t = type(a)
    if t is not type(b) and not (isinstance(a, np.integer) and isinstance(b, np.integer)):
        raise Unsupported("the captured graph's arguments depend on the sizes")
    if t is int or isinstance(a, np.integer):
        return solve(int(a), int(b), *probes)
    if t is tuple or t is list:
        if len(a) != len(b):
            raise Unsupported("the captured graph's arguments depend on the sizes")
        return t(_paired(x, y, probes) for x, y in zip(a, b))
    if isinstance(a, Node):
        if a.name != b.name:
            raise Unsupported("the captured graph depends on the sizes")
        return a
    if isinstance(a, np.ndarray):
        if a.shape != b.shape:
            raise Unsupported("a constant array whose size is a dynamic dimension")
        return a
    if t is float and a != b and not (a != a and b != b):
        raise Unsupported("a number computed from a dynamic size")
    return a


def _shape_of(node: Node, other: Node, probes: tuple) -> None:
    val, oval = node.meta.get("val"), other.meta.get("val")
    if isinstance(val, np.ndarray) and isinstance(oval, np.ndarray):
        if val.ndim != oval.ndim:
            raise Unsupported("the captured graph depends on the sizes")
        node.meta["sym_shape"] = tuple(
            str(solve(p, q, *probes)) for p, q in zip(val.shape, oval.shape))


def generalize(graph: Graph, primes: tuple, other: Graph, other_primes: tuple) -> None:
    """Make the graph's sizes symbolic: compared with `other`, the same function's graph
    captured at probe sizes `other_primes`, every integer argument that differs becomes its
    SymExpr (and each value's shape is written in the symbols, for the listings)."""
    graph.primes = primes
    if len(graph.nodes) != len(other.nodes):
        raise Unsupported("the captured graph depends on the sizes")
    probes = (primes, other_primes)
    for node, o in zip(graph.nodes, other.nodes):
        if node.op != o.op or node.name != o.name or str(node.target) != str(o.target):
            raise Unsupported("the captured graph depends on the sizes")
        _shape_of(node, o, probes)
        if node.op != "call_function":
            continue
        node.args = _paired(node.args, o.args, probes)
        if node.kwargs:
            node.kwargs = {k: _paired(v, o.kwargs.get(k), probes)
                           for k, v in node.kwargs.items()}


def generalize_part(part: Any, primes: tuple, sources: list, primal_names: list,
                    other: Any, other_primes: tuple) -> list:
    """Generalize both graphs of a partition (`other`: the partition of the capture at
    `other_primes`); the symbols' sources as (primal index, dimension), in symbol order, which
    the forward reads its symbols from."""
    for node in part.forward.placeholders():
        val = node.meta.get("val")
        if node.target == "free" and isinstance(val, np.ndarray) and \
                any(d % p == 0 for d in val.shape if d for p in primes):
            # made outside the recorded ops at the probe sizes: the variant would read it
            # at those sizes in every call
            raise Unsupported("a tensor made outside the captured ops is sized by a dynamic "
                              "dimension")
    first: dict = {}
    for i, d, k in sources:
        first.setdefault(k, (i, d))
    order = [first[k] for k in range(len(primes))]
    generalize(part.forward, primes, other.forward, other_primes)
    part.forward.sym_defs = [(f"s{k}", primal_names[i], d) for k, (i, d) in enumerate(order)]
    if part.backward is not None:
        if other.backward is None:
            raise Unsupported("the captured graph depends on the sizes")
        generalize(part.backward, primes, other.backward, other_primes)
        part.backward.sym_args = [f"s{k}" for k in range(len(primes))]
    return [list(src) for src in order]


def has_symbols(value: Any) -> bool:
    """`value` holds a graph value or a symbolic size (so it is written as an expression)."""
    if isinstance(value, (Node, SymExpr)):
        return True
    if isinstance(value, (tuple, list)):
        return any(has_symbols(v) for v in value)
    return False
