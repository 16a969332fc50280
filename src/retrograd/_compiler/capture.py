"""Capture: run the function once on real values under a dispatch mode that records every op
into a Graph, functionalizing as it goes (NOTE [Compiler pipeline], stage 1).

Values are tracked by their NumPy array. An in-place op becomes a node computing the new value;
if it wrote a view, an as_strided_scatter node computes the new value of the whole storage, and
other views of that storage read it again (as_strided) the next time they are used. So the
graph is a pure DAG: nothing in it writes memory another node reads.

Anything the graph cannot express ends capture with Unsupported (data-dependent Python control
flow, writes to memory the graph does not own): the caller then runs the function eagerly.
"""

from __future__ import annotations

import sys

import numpy as np

from retrograd._autograd.frames import user_frame
from retrograd._compiler.graph import Graph, Node
from retrograd._compiler.helpers import AS_STRIDED, AS_STRIDED_SCATTER, GETITEM
from retrograd._ops.dispatch import OpOverload
from retrograd._ops.registry import OPS, _promote
from retrograd._tensor import Tensor
from retrograd.utils._python_dispatch import TorchDispatchMode


class Unsupported(Exception):
    """The function cannot be captured as one graph; `where` is the user's file:line."""

    def __init__(self, reason: str, where: str | None = None) -> None:
        super().__init__(reason if where is None else f"{reason} (at {where})")
        self.reason = reason
        self.where = where


def user_site() -> str | None:
    frame = user_frame(sys._getframe(1))
    return None if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


class Functional:
    """An in-place op as a graph target: copy the written argument, then run the in-place
    kernel on the copy. It prints as the functional op (add_.Tensor -> aten.add.Tensor)."""

    __slots__ = ("op", "graph_name")

    def __init__(self, op) -> None:
        self.op = op
        base, _, overload = op.name.partition(".")
        name = base.rstrip("_")
        known = f"{name}.{overload}" if overload else name
        self.graph_name = (f"aten.{name}.{overload or 'default'}" if known in OPS
                           else f"aten.{base}.{overload or 'default'}(functional)")

    def __repr__(self) -> str:
        return self.graph_name


def _root(arr: np.ndarray) -> np.ndarray:
    while isinstance(arr.base, np.ndarray):
        arr = arr.base
    return arr


def _geometry(arr: np.ndarray, root: np.ndarray) -> tuple:
    """(size, element strides, element offset) of `arr` inside C-contiguous `root`."""
    item = root.itemsize
    if arr.itemsize != item or not root.flags.c_contiguous:
        raise Unsupported("a view whose storage is not a plain C-contiguous array")
    start = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if start % item or any(s % item for s in arr.strides):
        raise Unsupported("a view with unaligned strides")
    return tuple(arr.shape), tuple(s // item for s in arr.strides), start // item


class Tracer(TorchDispatchMode):
    """Records every op; see the module docstring."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.env: dict = {}    # id(array) -> [array, node, root version when recorded]
        self.roots: dict = {}  # id(root array) -> [root array, node of its value, version]
        self.owned: set = set()  # ids of root arrays made during capture (writes are allowed)
        self.inputs: list = []  # placeholder nodes, in order
        self.free: list = []    # (placeholder node, tensor) for tensors the function closed over
        self.mutated: dict = {}  # id(root) -> (placeholder node, root array) of written inputs
        self.input_roots: dict = {}  # id(root array) -> its placeholder
        self.undo: list = []    # (array, copy) to restore free tensors written during capture
        self.keep: list = []    # arrays kept alive so their ids stay unique
        self.backward_phase = False  # set once the function returned: autograd runs now

    def _on_data_dependent(self, t: Tensor, what: str) -> None:
        """Reading a captured value into Python ends capture (called by Tensor.item() and the
        other conversions while this mode is active on this thread)."""
        if id(t._data) in self.env or id(t._data) in self.roots:
            raise Unsupported(f"data-dependent Tensor.{what}()", user_site())

    def _on_uncapturable(self, what: str) -> None:
        raise Unsupported(f"{what} is not captured", user_site())

    def _on_random_draw(self, kernel, args: tuple, out) -> None:
        """A random draw outside the ops (dispatch.random_drawn): a graph node that draws again
        at every call (NOTE [Random draws in compiled graphs])."""
        from retrograd._compiler.random_ops import record

        record(self, kernel, args, out)

    def _on_tensor_made(self, kernel, args: tuple, out) -> None:
        """A factory's fresh array (dispatch.tensor_made): a graph node that makes it again at
        every call (NOTE [Factories in compiled graphs])."""
        from retrograd._compiler.factory_ops import record

        record(self, kernel, args, out)

    # --- values -----------------------------------------------------------------------------
    def _logical_root(self, arr: np.ndarray) -> np.ndarray:
        root = _root(arr)
        return root if id(root) in self.roots else arr

    def bind(self, arr: np.ndarray, node: Node, owned: bool = True) -> None:
        """`arr` now holds the value of `node` (`owned`: made during capture, free to write)."""
        root = self._logical_root(arr)
        info = self.roots.get(id(root))
        if info is None:
            info = self.roots[id(root)] = [root, node if root is arr else None, 0]
            self.keep.append(root)
            if owned:
                self.owned.add(id(root))
        elif root is arr:
            info[1] = node
        self.env[id(arr)] = [arr, node, info[2]]
        self.keep.append(arr)

    def add_input(self, tensor: Tensor, kind: str) -> Node:
        arr = tensor._data
        count = sum(1 for n in self.inputs if n.target == kind) + 1
        node = self.graph.placeholder(f"{kind}_{count}", arr, kind)
        self.inputs.append(node)
        self.bind(arr, node)
        self.input_roots[id(self._logical_root(arr))] = node
        return node

    def node_of(self, t: Tensor) -> Node:
        arr = t._data
        entry = self.env.get(id(arr))
        root = self._logical_root(arr)
        info = self.roots.get(id(root))
        if entry is not None and entry[0] is arr and (info is None or entry[2] == info[2]):
            return entry[1]
        if info is not None and info[1] is not None:
            if arr is root:
                return info[1]
            size, stride, offset = _geometry(arr, root)
            node = self.graph.call_function(AS_STRIDED, (info[1], size, stride, offset),
                                            val=np.array(arr))
            self.env[id(arr)] = [arr, node, info[2]]
            self.keep.append(arr)
            return node
        # a tensor the function reads without computing it: passed in at every call
        node = self.graph.placeholder(f"free_{len(self.free) + 1}", arr, "free")
        node.meta["requires_grad"] = t._requires_grad  # as first read (writes may change it)
        self.free.append((node, t))
        self.bind(arr, node, owned=False)
        self.input_roots[id(self._logical_root(arr))] = node
        return node

    def _arg_node(self, a):
        if isinstance(a, Tensor):
            return self.node_of(a)
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            return [self.node_of(x) if isinstance(x, Tensor) else x for x in a]
        return a

    # --- ops --------------------------------------------------------------------------------
    def __torch_dispatch__(self, func: OpOverload, types, args=(), kwargs=None):
        op = func._op
        if kwargs:
            names = op.arg_names
            full = list(args) + [None] * (len(names) - len(args))
            for i, a in enumerate(op.schema.args):
                if i >= len(args):
                    full[i] = kwargs.get(a.name, a.default)
            args = tuple(full)
        arg_node = self._arg_node
        node_args = tuple([arg_node(a) for a in args])
        casts = self._casts(op, args)
        written = None
        if op.inplace_idx:
            idx = op.inplace_idx[0]
            written = args[idx]._data
            self._before_write(written)
        out = func(*args)
        if written is not None:
            self._bind_snapshots(args[idx], node_args[idx])
            self._record_write(op, node_args, casts, written)
            return out
        if op.multi:
            vals = tuple(o._data for o in out)
            node = self.graph.call_function(func, node_args, val=vals)
            node.meta["casts"] = casts
            for i, o in enumerate(out):
                item = self.graph.call_function(GETITEM, (node, i), val=o._data,
                                                name=f"{node.name}_{i}")
                self.bind(o._data, item)
            return out
        node = self.graph.call_function(func, node_args, val=out._data)
        node.meta["casts"] = casts
        self.bind(out._data, node)
        return out

    def _casts(self, op, args: tuple) -> dict:
        """What the op runner's dtype promotion does to each argument before the kernel:
        {index: np.dtype to cast an array to, or the converted scalar}."""
        if op.promote is None:
            return {}
        call = [a._data if isinstance(a, Tensor) else a for a in args]
        before = list(call)
        _promote(op, args, call)
        casts = {}
        for i in op.tensor_idx:
            if call[i] is before[i]:
                continue
            if isinstance(call[i], np.ndarray):
                casts[i] = call[i].dtype
            else:
                casts[i] = ("scalar", call[i])
        return casts

    def _bind_snapshots(self, t: Tensor, old: Node) -> None:
        """The copy of the old value an in-place op's node saves for its formulas (made by the
        runner, not by an op) is the value `old`."""
        from retrograd._autograd.saved import SavedVariable

        fn = t._grad_fn
        node = getattr(fn, "fn", None) or fn
        for sv in getattr(node, "_saved", None) or ():
            if sv.__class__ is SavedVariable and isinstance(sv._data, Tensor):
                arr = sv._data._data
                if id(arr) not in self.env and id(arr) not in self.roots:
                    self.bind(arr, old)

    def _before_write(self, arr: np.ndarray) -> None:
        root = self._logical_root(arr)
        # nodes whose captured value is this memory keep the value they had
        for a, node, _ in list(self.env.values()):
            if node.meta.get("val") is a and np.may_share_memory(a, root):
                node.meta["val"] = np.array(a, copy=True)
        if id(root) in self.owned or any(r is root for r, _ in self.undo):
            return
        self.undo.append((root, np.array(root, copy=True)))

    def _record_write(self, op, node_args: tuple, casts: dict, arr: np.ndarray) -> None:
        node = self.graph.call_function(Functional(op), node_args, val=np.array(arr))
        node.meta["casts"] = casts
        root = self._logical_root(arr)
        info = self.roots.get(id(root))
        if info is None:
            raise Unsupported(f"{op.name} writes memory the graph does not track")
        info[2] += 1
        if root is arr:
            info[1] = node
        else:
            if info[1] is None:
                raise Unsupported(f"{op.name} writes a view of memory the graph does not track")
            size, stride, offset = _geometry(arr, root)
            info[1] = self.graph.call_function(
                AS_STRIDED_SCATTER, (info[1], node, size, stride, offset),
                val=np.array(root), name=f"{node.name}_scatter")
        self.env[id(arr)] = [arr, node, info[2]]
        self.keep.append(arr)
        placeholder = self._input_of(root)
        if placeholder is not None and not self.backward_phase:
            if placeholder.target == "free":
                # the tensor is held by the compiled code: writing it back would change what
                # the next call reads
                raise Unsupported(f"{op.name} writes a tensor the function reads from outside",
                                  user_site())
            self.mutated[id(root)] = (placeholder, root)

    def _input_of(self, root: np.ndarray) -> Node | None:
        return self.input_roots.get(id(root))

    def root_value(self, root: np.ndarray) -> Node:
        return self.roots[id(root)][1]

    def restore(self) -> None:
        """Put back what capture wrote into tensors it does not own."""
        for arr, copy in self.undo:
            if id(arr) not in self.owned:
                np.copyto(arr, copy)
