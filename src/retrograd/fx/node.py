"""Node: one operation of a Graph (torch.fx.Node's names and fields)."""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable
from typing import Any

# the six opcodes, as torch.fx spells them
OPCODES = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")

# operators the code generator writes as Python syntax: target -> format
MAGIC = {
    operator.add: "{} + {}", operator.sub: "{} - {}", operator.mul: "{} * {}",
    operator.truediv: "{} / {}", operator.floordiv: "{} // {}", operator.mod: "{} % {}",
    operator.pow: "{} ** {}", operator.matmul: "{} @ {}", operator.lshift: "{} << {}",
    operator.rshift: "{} >> {}", operator.and_: "{} & {}", operator.or_: "{} | {}",
    operator.xor: "{} ^ {}", operator.eq: "{} == {}", operator.ne: "{} != {}",
    operator.lt: "{} < {}", operator.le: "{} <= {}", operator.gt: "{} > {}",
    operator.ge: "{} >= {}", operator.neg: "-{}", operator.pos: "+{}", operator.invert: "~{}",
    operator.getitem: "{}[{}]", operator.abs: "abs({})",
}


class Node:
    """One operation: `op` (an opcode), `target` (what runs), `args`/`kwargs` (may hold other
    Nodes), `users` (the nodes that read this one) and `meta` (free-form data for passes).

    Nodes live in a doubly linked list owned by their Graph; `prev`/`next` walk it.
    """

    def __init__(self, graph: Any, name: str, op: str, target: Any, args: tuple,
                 kwargs: dict, return_type: Any = None) -> None:
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self.users: dict = {}
        self.meta: dict = {}
        self._input_nodes: dict = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._prev = self
        self._next = self
        self._erased = False
        self._update_args_kwargs(args, kwargs)

    # --- arguments ----------------------------------------------------------------------------
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, value: tuple) -> None:
        self._update_args_kwargs(value, self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value: dict) -> None:
        self._update_args_kwargs(self._args, value)

    @property
    def all_input_nodes(self) -> list:
        """The distinct Nodes among args and kwargs, in the order they first appear."""
        return list(self._input_nodes)

    def _update_args_kwargs(self, args: tuple, kwargs: dict) -> None:
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._args = map_aggregate(tuple(args), lambda x: x)
        self._kwargs = dict(map_aggregate(dict(kwargs), lambda x: x))
        found: dict = {}
        map_arg(self._args, found.setdefault)
        map_arg(self._kwargs, found.setdefault)
        self._input_nodes = found
        for n in found:
            n.users.setdefault(self, None)

    def update_arg(self, idx: int, arg: Any) -> None:
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Any) -> None:
        self.kwargs = {**self._kwargs, key: arg}

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Make every use of `old_input` in this node's arguments a use of `new_input`."""
        def swap(n: Node) -> Node:
            return new_input if n is old_input else n

        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] = lambda user: True,
                              *, propagate_meta: bool = False) -> list:
        """Point every user of this node at `replace_with` instead; returns the users changed.

        >>> # y = graph.call_function(retrograd.relu, (x,)); x.replace_all_uses_with(z)
        """
        if propagate_meta:
            for k, v in self.meta.items():
                replace_with.meta.setdefault(k, v)
        changed = [u for u in list(self.users) if delete_user_cb(u)]
        for user in changed:
            user.replace_input_with(self, replace_with)
        return changed

    # --- position in the graph ----------------------------------------------------------------
    @property
    def next(self) -> Node:
        return self._next

    @property
    def prev(self) -> Node:
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move `x` to just before this node."""
        if x is self:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev, x._next, self._prev = x, p, self, x

    def append(self, x: Node) -> None:
        """Move `x` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # --- queries ------------------------------------------------------------------------------
    def is_impure(self) -> bool:
        """True for nodes dead-code elimination must keep (inputs, outputs, in-place ops)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            schema = getattr(self.target, "_schema", None)
            if schema is not None:
                return schema.is_inplace or schema.is_out
            return self.target in _IMPURE_FUNCTIONS
        if self.op == "call_method":
            return isinstance(self.target, str) and self.target.endswith("_") \
                and not self.target.endswith("__")
        return False

    def format_node(self) -> str | None:
        """This node as a line of `print(graph)`; None for the output node's `return`."""
        if self.op == "output":
            return f"return {self.args[0]!r}"
        head = f"%{self.name} : [num_users={len(self.users)}] = "
        if self.op == "placeholder":
            default = f"(default={self.args[0]})" if self.args else ""
            return f"{head}placeholder[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"{head}get_attr[target={self.target}]"
        return (f"{head}{self.op}[target={_pretty_target(self.target)}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self) -> str:
        return self.name


_IMPURE_FUNCTIONS = {operator.setitem}  # calls that write into their arguments


def _pretty_target(target: Any) -> str:
    if isinstance(target, str):
        return target
    from retrograd.fx._qualname import qualified_name

    return qualified_name(target)


def _format_arg(arg: Any) -> str:
    if isinstance(arg, Node):
        return f"%{arg.name}"
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        return "(" + ", ".join(_format_arg(a) for a in arg) + ("," if len(arg) == 1 else "") + ")"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    return str(arg)


def map_arg(a: Any, fn: Callable[[Node], Any]) -> Any:
    """Apply `fn` to every Node inside `a` (nested tuples, lists, dicts, slices)."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def map_aggregate(a: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply `fn` to every leaf of `a`, rebuilding tuples (named ones too), lists, dicts and
    slices around the results."""
    if isinstance(a, tuple):
        items = [map_aggregate(x, fn) for x in a]
        return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
    if isinstance(a, list):
        return [map_aggregate(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


# values the generated code can spell as literals (everything else becomes a global)
LITERAL_TYPES = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis), range)

# names that generated code must not shadow
RESERVED = frozenset({*dir(builtins), "self", "retrograd", "torch", "device", "inf", "nan",
                      "NoneType"})
