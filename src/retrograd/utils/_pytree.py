"""torch.utils._pytree's basics: flatten nested lists, tuples (named ones and return_types
structseqs too) and dicts into leaves and back, and map a function over the leaves."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class TreeSpec:
    """How to rebuild a flattened tree: the container type, its keys, and the children's specs
    (a leaf's spec has type None)."""

    def __init__(self, kind: Any, context: Any, children: list) -> None:
        self.type = kind
        self.context = context
        self.children_specs = children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)

    def is_leaf(self) -> bool:
        return self.type is None

    def __repr__(self) -> str:
        if self.type is None:
            return "*"
        return f"TreeSpec({self.type.__name__}, {self.context}, {self.children_specs})"


LeafSpec = TreeSpec(None, None, [])


def _children(tree: Any) -> tuple | None:
    """(type, context, children) for a container, None for a leaf."""
    kind = type(tree)
    if kind in (list, tuple):
        return kind, None, list(tree)
    if kind is dict:
        keys = list(tree)
        return kind, keys, [tree[k] for k in keys]
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # a namedtuple
        return kind, None, list(tree)
    return None


def tree_flatten(tree: Any) -> tuple[list, TreeSpec]:
    leaves: list = []
    return leaves, _walk(tree, leaves)


# module-level recursion, not a nested function that calls itself: such a closure is a reference
# cycle (function -> cell -> function) that would keep every leaf alive until the next garbage
# collection (wrapper tensors that vmap makes, large arrays)
def _walk(node: Any, leaves: list) -> TreeSpec:
    parts = _children(node)
    if parts is None:
        leaves.append(node)
        return LeafSpec
    kind, context, children = parts
    return TreeSpec(kind, context, [_walk(c, leaves) for c in children])


def tree_unflatten(leaves: list, spec: TreeSpec) -> Any:
    return _build(spec, iter(leaves))


def _build(s: TreeSpec, it: Any) -> Any:
    if s.type is None:
        return next(it)
    children = [_build(c, it) for c in s.children_specs]
    if s.type is dict:
        return dict(zip(s.context, children))
    if s.type in (list, tuple) or hasattr(s.type, "n_sequence_fields"):
        return s.type(children)  # (a torch.return_types structseq takes one sequence)
    return s.type(*children)  # a namedtuple


def tree_leaves(tree: Any) -> list:
    return tree_flatten(tree)[0]


def tree_map(fn: Callable, tree: Any) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def tree_map_only(types: type | tuple, fn: Callable, tree: Any) -> Any:
    """Map fn over the leaves that are instances of `types`; other leaves stay."""
    return tree_map(lambda x: fn(x) if isinstance(x, types) else x, tree)


def tree_any(pred: Callable, tree: Any) -> bool:
    return any(pred(x) for x in tree_leaves(tree))


def tree_all(pred: Callable, tree: Any) -> bool:
    return all(pred(x) for x in tree_leaves(tree))
