"""Graph: an ordered list of Nodes, the intermediate form of retrograd.fx (torch.fx.Graph)."""

from __future__ import annotations

import contextlib
import copy
import inspect
import keyword
import re
from collections.abc import Callable, Iterator
from typing import Any

from retrograd.fx.node import OPCODES, RESERVED, Node, map_aggregate, map_arg

_ILLEGAL_CHARS = re.compile("[^0-9a-zA-Z_]+")
_NUMBERED = re.compile(r"(.*)_(\d+)$")


def _snake_case(s: str) -> str:
    """`MyModule` -> `my_module` (how torch.fx turns a target into a node name)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", s).lower()


class _Namespace:
    """Unique Python identifiers for node names: `add`, `add_1`, `add_2`, ..."""

    def __init__(self) -> None:
        self._used: set = set()
        self._base_count: dict = {}

    def create_name(self, candidate: str) -> str:
        candidate = _ILLEGAL_CHARS.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        match = _NUMBERED.match(candidate)
        base, num = (candidate, None) if match is None else (match[1], int(match[2]))
        candidate = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count.get(base, 0)
        while candidate in self._used or candidate in RESERVED or keyword.iskeyword(candidate):
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        return candidate

    def release(self, name: str) -> None:
        self._used.discard(name)


class _NodeList:
    """graph.nodes: a live view of the linked list (len, iteration both ways)."""

    def __init__(self, graph: Graph, reverse: bool = False) -> None:
        self._graph = graph
        self._reverse = reverse

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        cur = root._prev if self._reverse else root._next
        while cur is not root:
            nxt = cur._prev if self._reverse else cur._next
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self._graph, not self._reverse))

    def __repr__(self) -> str:
        return repr(list(self))


class Graph:
    """A program as a list of Nodes: placeholders (inputs), operations, one output.

    >>> import retrograd
    >>> g = Graph()
    >>> x = g.placeholder("x")
    >>> y = g.call_function(retrograd.relu, (x,))
    >>> _ = g.output(y)
    >>> print(g)
    graph():
        %x : [num_users=1] = placeholder[target=x]
        %relu : [num_users=1] = call_function[target=retrograd.relu](args = (%x,), kwargs = {})
        return relu
    """

    def __init__(self, owning_module: Any = None, tracer_cls: Any = None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._namespace = _Namespace()
        self._len = 0
        self._insert: Callable[[Node], None] = self._root.prepend
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    def find_nodes(self, *, op: str, target: Any = None) -> list:
        """The nodes with opcode `op` (and `target`, if given), in graph order."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    def output_node(self) -> Node:
        for n in reversed(self.nodes):
            if n.op == "output":
                return n
        raise RuntimeError("Graph has no output node")

    # --- making nodes -------------------------------------------------------------------------
    def create_node(self, op: str, target: Any, args: tuple | None = None,
                    kwargs: dict | None = None, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """Make a node at the insertion point (the end of the graph unless moved with
        inserting_before/inserting_after); `name` is a wish, made unique."""
        if op not in OPCODES:
            raise ValueError(f"Unknown opcode {op!r}: expected one of {OPCODES}")
        candidate = name if name else self._target_to_str(target)
        node = Node(self, self._namespace.create_name(candidate), op, target, args or (),
                    kwargs or {}, type_expr)
        self._insert(node)
        self._len += 1
        return node

    def _target_to_str(self, target: Any) -> str:
        if isinstance(target, str):
            op = target[2:-2] if target.startswith("__") and target.endswith("__") else target
        else:
            from retrograd.fx._qualname import public_path

            packet = getattr(target, "overloadpacket", None)
            path = str(packet) if packet is not None else public_path(target)
            op = path.rpartition(".")[2] if path is not None else target.__name__
        return _snake_case(op)

    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """An input of the program; `default_value` makes it optional."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """Read an attribute (parameter, buffer, constant) of the owning module."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None,
                      kwargs: dict | None = None, type_expr: Any = None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def output(self, result: Any, type_expr: Any = None) -> Node:
        """The program's result (any nesting of tuples, lists and dicts of nodes)."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that no other node uses."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        self._namespace.release(to_erase.name)
        to_erase._update_args_kwargs((), {})

    # --- where new nodes go -------------------------------------------------------------------
    @contextlib.contextmanager
    def inserting_before(self, n: Node | None = None) -> Iterator[None]:
        """New nodes go just before `n` (the start of the graph if None) inside the block."""
        target = n if n is not None else self._root._next
        with self._inserting(target.prepend):
            yield

    @contextlib.contextmanager
    def inserting_after(self, n: Node | None = None) -> Iterator[None]:
        """New nodes go after `n` (the end of the graph if None), in the order they are made
        (torch puts each right after `n`, so several come out reversed)."""
        anchor = [n if n is not None else self._root._prev]

        def insert(node: Node) -> None:
            anchor[0].append(node)
            anchor[0] = node

        with self._inserting(insert):
            yield

    @contextlib.contextmanager
    def _inserting(self, insert: Callable[[Node], None]) -> Iterator[None]:
        saved, self._insert = self._insert, insert
        try:
            yield
        finally:
            self._insert = saved

    # --- copying ------------------------------------------------------------------------------
    def node_copy(self, node: Node, arg_transform: Callable[[Node], Any] = lambda x: x) -> Node:
        """Copy `node` (from any graph) here; `arg_transform` maps its input nodes to ours."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        new = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        new.meta = copy.copy(node.meta)
        return new

    def graph_copy(self, g: Graph, val_map: dict, return_output_node: bool = False) -> Any:
        """Copy every node of `g` except its output into this graph, recording old -> new in
        `val_map`; returns what g's output refers to, mapped (or the output node itself)."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                out = map_arg(node.args[0], val_map.__getitem__)
                return (out, node) if return_output_node else out
            val_map[node] = self.node_copy(node, val_map.__getitem__)
        return None

    def __deepcopy__(self, memo: dict) -> Graph:
        g = Graph(tracer_cls=self._tracer_cls)
        out = g.graph_copy(self, {}, return_output_node=True)
        memo[id(self)] = g
        if out is not None:
            result, old = out
            g.output(result, old.type).meta = copy.copy(old.meta)
        return g

    def __reduce__(self) -> tuple:
        # pickled as a list of node records, not the linked list (which would recurse once
        # per node)
        index = {n: i for i, n in enumerate(self.nodes)}

        def ref(n: Node) -> _NodeRef:
            return _NodeRef(index[n])

        records = [(n.op, n.target, map_arg(n.args, ref), map_arg(n.kwargs, ref), n.name,
                    n.type, n.meta) for n in self.nodes]
        return (_graph_from_records, (records,))

    # --- passes -------------------------------------------------------------------------------
    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase nodes whose results nobody uses (impure ones stay); True if any went."""
        impure = is_impure_node or Node.is_impure
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def lint(self) -> None:
        """Check the graph's invariants: known opcodes, unique names, inputs defined before use,
        users consistent with arguments, targets that exist on the owning module."""
        seen: set = set()
        names: set = set()
        for node in self.nodes:
            if node.op not in OPCODES:
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            for arg in node.all_input_nodes:
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       "has been defined! Please check that Nodes in the graph "
                                       "are topologically ordered")
                if node not in arg.users:
                    raise RuntimeError(f"Node {node} is not among the users of its input {arg}")
            seen.add(node)
            if node.op in ("get_attr", "call_module") and self.owning_module is not None:
                obj: Any = self.owning_module
                for i, atom in enumerate(node.target.split(".")):
                    if not hasattr(obj, atom):
                        path = ".".join(node.target.split(".")[:i])
                        raise RuntimeError(f"Node {node} target {node.target} references "
                                           f"nonexistent attribute {atom} of {path or 'root'}")
                    obj = getattr(obj, atom)

    def print_tabular(self) -> None:
        """Print one row per node: opcode, name, target, args, kwargs."""
        rows = [["opcode", "name", "target", "args", "kwargs"]]
        for n in self.nodes:
            target = n.target if isinstance(n.target, str) else _pretty(n.target)
            rows.append([n.op, n.name, str(target), str(n.args), str(n.kwargs)])
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        print("\n".join(lines))

    # --- code ---------------------------------------------------------------------------------
    def python_code(self, root_module: str = "self", *, verbose: bool = False) -> Any:
        """The graph as the source of `def forward(self, ...)` and the globals it needs
        (`verbose`: with the dtype and shape of each tensor value known from node.meta)."""
        from retrograd.fx._codegen import python_code

        return python_code(self, root_module, verbose)

    def __str__(self) -> str:
        lines = ["graph():"]
        for n in self.nodes:
            text = n.format_node()
            if text is not None:
                lines.append("    " + text)
        return "\n".join(lines)


class _NodeRef:
    """A node's position, standing for it in a pickled graph's arguments."""

    def __init__(self, index: int) -> None:
        self.index = index


def _graph_from_records(records: list) -> Graph:
    g = Graph()
    nodes: list = []

    def node(a: Any) -> Any:
        return map_aggregate(a, lambda x: nodes[x.index] if isinstance(x, _NodeRef) else x)

    for op, target, args, kwargs, name, type_expr, meta in records:
        n = g.create_node(op, target, node(args), node(kwargs), name, type_expr)
        n.meta = meta
        nodes.append(n)
    return g


def _pretty(target: Any) -> str:
    from retrograd.fx._qualname import qualified_name

    return qualified_name(target)
