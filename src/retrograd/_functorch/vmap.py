"""vmap: run a function over a batch dimension of its inputs by batching rules
(NOTE [Batched tensors], NOTE [Batching rules])."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from retrograd._functorch import levels
from retrograd._ops import dispatch
from retrograd._tensor import Tensor
from retrograd.utils._pytree import tree_flatten, tree_unflatten

RANDOM_IN_ERROR_MODE = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out of "
    "vmap")


def _fn_name(func: Any) -> str:
    return getattr(func, "__name__", repr(func))


def spec_repr(spec: Any, indent: int = 0) -> str:
    """A tree spec as torch prints it in its messages (children after the first on their own
    lines, indented by depth)."""
    if spec.type is None:
        return "*"
    kids = spec.children_specs
    inner = ""
    if kids:
        indent += 2
        inner = spec_repr(kids[0], indent) + ("," if len(kids) > 1 else "")
        inner += ",".join("\n" + " " * indent + spec_repr(k, indent) for k in kids[1:])
    return f"TreeSpec({spec.type.__name__}, {spec.context}, [{inner}])"


def broadcast_prefix(prefix: Any, tree: Any) -> list | None:
    """The leaves of `prefix` repeated over the leaves of `tree` below them, or None when the
    structures do not match (an int or None applies to a whole subtree)."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_flatten(tree)[0])
    if isinstance(prefix, (tuple, list)):
        if type(prefix) is not type(tree) and not (isinstance(tree, (tuple, list))
                                                   and type(tree) is type(prefix)):
            return None
        if len(prefix) != len(tree):
            return None
        out: list = []
        for p, t in zip(prefix, tree):
            sub = broadcast_prefix(p, t)
            if sub is None:
                return None
            out.extend(sub)
        return out
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or set(prefix) != set(tree):
            return None
        out = []
        for k in tree:  # the order tree_flatten uses
            sub = broadcast_prefix(prefix[k], tree[k])
            if sub is None:
                return None
            out.extend(sub)
        return out
    return None


def _check_randomness() -> None:
    lv = levels.innermost_vmap()
    if lv is not None and lv.randomness == "error":
        raise RuntimeError(RANDOM_IN_ERROR_MODE)


def _draw_per_member(draw_one: Callable) -> Any:
    """A sampler's draw under the enclosing vmaps (NOTE [Random draws under vmap]): with
    randomness="different" one draw per batch member of every such level, batched at those
    levels; "same" draws once; "error" raises torch's error."""
    lv = levels.innermost_vmap()
    if lv is None:
        return draw_one()
    if lv.randomness == "error":
        raise RuntimeError(RANDOM_IN_ERROR_MODE)
    different = [t for t in levels.vmap_levels() if t.randomness == "different"]
    if not different:
        return draw_one()
    sizes = tuple(t.batch_size for t in different)
    count = 1
    for n in sizes:
        count *= n
    draws = [draw_one() for _ in range(count)]
    if isinstance(draws[0], tuple):
        return tuple(_batched_draw([d[k] for d in draws], sizes, different)
                     for k in range(len(draws[0])))
    return _batched_draw(draws, sizes, different)


def _batched_draw(draws: list, sizes: tuple, at: list) -> Any:
    """The draws (one per member, outer levels first) as one value batched at levels `at`
    (outermost wrapped first: the innermost level's wrapper is the outermost object)."""
    from retrograd._functorch.batched import BatchedTensor
    from retrograd._ops.shape import stack

    value: Any = stack(draws, 0).reshape(sizes + tuple(draws[0].shape))
    for lv in at:
        value = BatchedTensor(value, lv.level)
    return value


def _install_random_check() -> None:
    from retrograd._ops import random

    if _check_randomness not in random.draw_hooks:
        random.draw_hooks.append(_check_randomness)
    if _draw_per_member not in random.member_draw_hooks:
        random.member_draw_hooks.append(_draw_per_member)


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """torch.func.vmap: func mapped over dimension in_dims of its inputs, by batching rules."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        dispatch.uncapturable("vmap (retrograd.func.vmap, also under jacrev, jacfwd, hessian)")
        try:
            return vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
        finally:
            levels.collect_lingering()

    return wrapped


def _flat_in_dims(func: Any, in_dims: Any, args: tuple) -> tuple:
    name = _fn_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to "
                         "be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         "inputs, or you are trying to vmap over a function with no inputs. The "
                         "latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = broadcast_prefix(in_dims, args)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         "compatible with the structure of `inputs`. in_dims has structure "
                         f"{spec_repr(tree_flatten(in_dims)[1])} but inputs has structure "
                         f"{spec_repr(spec)}.")
    for a, d in zip(flat_args, flat_dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             "for an input but in_dim must be either an integer dimension or "
                             "None.")
        if not isinstance(a, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(a)}. We cannot vmap "
                             "over non-Tensor arguments, please use None as the respective "
                             "in_dim")
        n = a.dim()
        if not -n <= d < n:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for some input, but that input is a Tensor of dimensionality {n} "
                             f"so expected in_dim to satisfy -{n} <= in_dim < {n}.")
    dims = [None if d is None else d % a.dim() for a, d in zip(flat_args, flat_dims)]
    return flat_args, spec, dims


def _batch_size(flat_args: list, dims: list) -> int:
    sizes = [a.shape[d] for a, d in zip(flat_args, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def vmap_impl(func: Callable, in_dims: Any, out_dims: Any, randomness: str,
              chunk_size: int | None, args: tuple, kwargs: dict) -> Any:
    flat_args, spec, dims = _flat_in_dims(func, in_dims, args)
    size = _batch_size(flat_args, dims)
    if chunk_size is None or chunk_size >= size:
        return _run(func, flat_args, spec, dims, size, out_dims, randomness, kwargs)
    pieces = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        chunk = [a if d is None else a.narrow(d, start, n) for a, d in zip(flat_args, dims)]
        pieces.append(_run(func, chunk, spec, dims, n, out_dims, randomness, kwargs))
    return _concat_chunks(pieces, out_dims)


def _concat_chunks(pieces: list, out_dims: Any) -> Any:
    from retrograd._ops.shape import cat
    flat0, spec = tree_flatten(pieces[0])
    flat_dims = broadcast_prefix(out_dims, pieces[0])
    assert flat_dims is not None
    flats = [tree_flatten(p)[0] for p in pieces]
    out = []
    for k, d in enumerate(flat_dims):
        if d is None:
            out.append(flat0[k])
        else:
            out.append(cat([f[k] for f in flats], d))
    return tree_unflatten(out, spec)


def _run(func: Callable, flat_args: list, spec: Any, dims: list, size: int, out_dims: Any,
         randomness: str, kwargs: dict) -> Any:
    _install_random_check()
    lv = levels.push_vmap(size, randomness)
    try:
        batched = [a if d is None else levels.add_batch_dim(a, d, lv.level)
                   for a, d in zip(flat_args, dims)]
        out = func(*tree_unflatten(batched, spec), **kwargs)
        return _unwrap_outputs(func, out, out_dims, lv.level, size)
    finally:
        levels.pop()


def _unwrap_outputs(func: Any, out: Any, out_dims: Any, level: int, size: int) -> Any:
    from retrograd._functorch.batched import is_batched

    name = _fn_name(func)
    if not (out_dims is None or isinstance(out_dims, (int, tuple, list))):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                         "None or a python collection of ints representing where in the "
                         "outputs the vmapped dimension should appear.")
    flat_out, spec = tree_flatten(out)
    flat_dims = broadcast_prefix(out_dims, out)
    if flat_dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                         "compatible with the structure of `outputs`. out_dims has structure "
                         f"{spec_repr(tree_flatten(out_dims)[1])} but outputs has structure "
                         f"{spec_repr(spec)}.")
    res = []
    for o, d in zip(flat_out, flat_dims):
        if d is None:
            if is_batched(o, level):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            res.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(o)}. Did you mean to set out_dims= to None for output?")
        if not isinstance(d, int):
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an "
                             "int, None or a python collection of ints representing where in "
                             "the outputs the vmapped dimension should appear.")
        r = o.dim() + 1
        if not -r <= d < r:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-r}, "
                             f"{r - 1}], but got {d})")
        res.append(levels.remove_batch_dim(o, level, size, d % r))
    return tree_unflatten(res, spec)
