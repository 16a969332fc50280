"""Saved-tensor hooks inlined into compiled graphs (NOTE [Compiler pipeline], stage 4).

Under `autograd.graph.saved_tensors_hooks(pack, unpack)` with both hooks `fx.GraphModule`s, the
pack graph is captured on each saved value the filtering mode selects
(config.saved_tensors_hooks_filtering_mode) and the unpack graph on what it packed. The pack
nodes go into the forward graph, whose outputs become the packed tensors ("{saved}_hook_{i}");
non-tensor packed values (a dtype, a size) are constants of the unpack graph; the unpack nodes go
into the backward graph in place of the saved value. Floating values only are packed.

Placement (config.saved_tensors_hooks_placement): "last_use" puts each pack right after the
saved value's last forward use and each unpack right before its first backward use, so a packed
copy (float8, offloaded) replaces the full value for the shortest time; "epilogue" puts packs
at the end of the forward and unpacks at the start of the backward, as torch does.

Plain callables as hooks are not inlined: they run eagerly, as for any custom Function, on the
values the compiled forward saves.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from retrograd._autograd.state import state
from retrograd._compiler import config
from retrograd._compiler.capture import Tracer, Unsupported
from retrograd._compiler.graph import Graph, Node, map_nodes
from retrograd._tensor import Tensor, _wrap

code_log = logging.getLogger("retrograd.graph_code")

class HookError(RuntimeError):
    """An inlineable hook pair that cannot be inlined as written (raised to the caller)."""


HOOK_MUTATES_INPUT = ("saved tensors {} hook of {} modifies its input in place; a pack or unpack "
                      "hook must return new tensors")
UNPACK_MISMATCH = ("saved tensors unpack hook returned a tensor of shape {} and dtype {} for "
                   "{}, saved with shape {} and dtype {}; it must restore the saved tensor")


def inlineable(pair: tuple) -> bool:
    """A (pack, unpack) pair of graph modules (objects with a `.graph` and a `.code`)."""
    return all(hasattr(h, "graph") and hasattr(h, "code") and callable(h) for h in pair)


def current_inlineable() -> tuple | None:
    stack = state.saved_hooks
    if stack and inlineable(stack[-1]):
        return stack[-1]
    return None


def structure_key(pair: tuple) -> Any:
    """The hook graphs' structure for the cache key (names left out, so two pairs that trace to
    the same graphs share it); a wrapped call contributes its meta["user_cache_hash"], and
    without one the key is None (bypass the cache)."""
    from retrograd._compiler.cache import BYPASS

    parts: list = []
    for gm in pair:
        index: dict = {}
        for i, n in enumerate(gm.graph.nodes):
            index[n] = i
            if n.meta.get("is_wrapped"):
                h = n.meta.get("user_cache_hash")
                if h is None:
                    return BYPASS
                parts.append(("wrapped", h))
                continue
            args = map_fx(n.args, index)
            kwargs = tuple(sorted((k, repr(map_fx(v, index))) for k, v in n.kwargs.items()))
            parts.append((n.op, _target_text(n.target), repr(args), kwargs))
    return tuple(parts)


def _target_text(target: Any) -> str:
    if isinstance(target, str):
        return target
    return f"{getattr(target, '__module__', '')}.{getattr(target, '__qualname__', target)}"


def map_fx(value: Any, index: dict) -> Any:
    if hasattr(value, "op") and hasattr(value, "target") and value in index:
        return ("%", index[value])
    if isinstance(value, (tuple, list)):
        return tuple(map_fx(v, index) for v in value)
    return value


# --- capturing one hook ---------------------------------------------------------------------

def _capture_hook(hook: Any, values: list, build: Any, what: str, saved: str) -> tuple:
    """Capture hook(build(tensors)) with `values` as the tensors: (graph, input nodes, output
    leaves, output spec)."""
    from retrograd._compiler.joint import flatten

    tracer = Tracer()
    inputs = []
    tensors = []
    for v in values:
        t = _wrap(np.array(v, copy=True))
        tensors.append(t)
        inputs.append(tracer.add_input(t, "x"))
    arg = build(tensors)
    hooks = state.saved_hooks
    state.saved_hooks = ()
    try:
        with tracer:
            out = hook(arg)
            leaves, spec = flatten(out)
            nodes = [tracer.node_of(v) if isinstance(v, Tensor) else v for v in leaves]
    finally:
        state.saved_hooks = hooks
    if tracer.mutated:
        raise HookError(HOOK_MUTATES_INPUT.format(what, saved))
    graph = tracer.graph
    graph.output(tuple(nodes))
    graph.erase_unused()
    return graph, inputs, nodes, spec


def _insert(graph: Graph, sub: Graph, env: dict, at: int, rename: dict) -> None:
    """Copy `sub`'s op nodes into `graph` at position `at`; env maps sub's placeholders."""
    inputs = [p.meta["val"] for p in sub.placeholders()]
    for n in sub.nodes:
        if n.op != "call_function":
            continue
        new = graph.call_function(n.target, map_nodes(n.args, env.__getitem__),
                                  {k: map_nodes(v, env.__getitem__) for k, v in n.kwargs.items()},
                                  val=n.meta.get("val"), name=rename.get(n), at=at)
        new.meta.update({k: v for k, v in n.meta.items() if k != "val"})
        val = n.meta.get("val")
        if isinstance(val, np.ndarray) and any(np.may_share_memory(val, v) for v in inputs):
            new.meta["alias"] = True  # shares the memory of the value it was inlined on
        env[n] = new
        at += 1


def _selected(node: Node, primals: list, static: set) -> bool:
    """Whether the filtering mode packs saved value `node`; a view of an input counts as that
    input (its memory cannot be freed either)."""
    val = node.meta.get("val")
    if not isinstance(val, np.ndarray) or val.dtype.kind not in "fV":
        return False  # non-floating saved tensors are left alone
    mode = config.saved_tensors_hooks_filtering_mode
    seen_as = [p.name for p in primals if p is node or np.may_share_memory(p.meta["val"], val)]
    if mode == "all":
        return True
    if mode == "no_static":
        return not any(name in static for name in seen_as)
    if mode == "donated":
        return not seen_as
    raise ValueError(f"saved_tensors_hooks_filtering_mode must be 'donated', 'no_static' or "
                     f"'all', not {mode!r}")


def _log(title: str, graph: Graph) -> None:
    if code_log.isEnabledFor(logging.INFO):
        code_log.info("===== %s =====\n%s", title, graph.python_code("forward"))


def inline_hooks(part: Any, pair: tuple, primal_names: list, static: set) -> Any:
    """Inline `pair` into part.forward / part.backward; returns the cache key part."""
    pack, unpack = pair
    fw, bw = part.forward, part.backward
    epilogue = config.saved_tensors_hooks_placement == "epilogue"
    fw_out = fw.output_node
    n_saved = len(part.saved)
    outs = list(fw_out.args[0])
    head, saved_nodes = outs[:len(outs) - n_saved], outs[len(outs) - n_saved:]
    new_saved_nodes: list = []
    new_saved_names: list = []
    bw_by_name = {n.name: n for n in bw.placeholders()}
    primals = [p for p in fw.placeholders() if p.name in primal_names]
    for s in saved_nodes:
        if not _selected(s, primals, static):
            new_saved_nodes.append(s)
            new_saved_names.append(s.name)
            continue
        val = s.meta["val"]
        pgraph, pin, pleaves, pspec = _capture_hook(pack, [val], lambda ts: ts[0], "pack",
                                                    s.name)
        _log(f"saved_tensors_pack_hook {s.name}", pgraph)
        tensor_leaves = [x for x in pleaves if isinstance(x, Node)]
        if not tensor_leaves:
            raise Unsupported(f"the saved tensors pack hook packed no tensor for {s.name}")
        ugraph, uin, uleaves, _ = _capture_hook(
            unpack, [x.meta["val"] for x in tensor_leaves], _rebuild(pleaves, pspec), "unpack",
            s.name)
        _log(f"saved_tensors_unpack_hook {s.name}", ugraph)
        if len(uleaves) != 1 or not isinstance(uleaves[0], Node):
            raise HookError(f"saved tensors unpack hook must return one tensor for {s.name}")
        uval = uleaves[0].meta["val"]
        if uval.shape != val.shape or uval.dtype != val.dtype:
            raise HookError(UNPACK_MISMATCH.format(list(uval.shape), uval.dtype.name, s.name,
                                                      list(val.shape), val.dtype.name))
        # forward: the pack nodes after the saved value's last forward use
        if epilogue:
            at = fw.nodes.index(fw_out)
        else:
            users = [i for i, n in enumerate(fw.nodes) if n is not fw_out and s in n.inputs()]
            at = (max(users) if users else fw.nodes.index(s)) + 1
        env = {pin[0]: s}
        rename = {leaf: f"{s.name}_hook_{i}" for i, leaf in enumerate(tensor_leaves)}
        _insert(fw, pgraph, env, at, rename)
        packed = [env[x] if x in env else x for x in tensor_leaves]
        new_saved_nodes.extend(packed)
        new_saved_names.extend(p.name for p in packed)
        # backward: placeholders for the packed tensors, the unpack before the first use
        old = bw_by_name[s.name]
        pos = bw.nodes.index(old)
        bw.nodes.remove(old)
        bw._used.discard(old.name)
        new_ph = []
        for k, p in enumerate(packed):
            ph = Node(bw, bw._unique(p.name), "placeholder", "saved", ())
            ph.meta["val"] = p.meta.get("val")
            bw.nodes.insert(pos + k, ph)
            new_ph.append(ph)
        uenv = dict(zip(uin, new_ph))
        n_ph = len(bw.placeholders())
        if epilogue:
            at = n_ph
        else:
            users = [i for i, n in enumerate(bw.nodes) if old in n.inputs()]
            at = min(users) if users else n_ph
        _insert(bw, ugraph, uenv, at, {})
        restored = uenv[uleaves[0]] if uleaves[0] in uenv else uleaves[0]
        _replace_uses(bw, old, restored)
    fw_out.args = (tuple(head + new_saved_nodes),)
    part.saved = new_saved_names
    return structure_key(pair)


def _replace_uses(graph: Graph, old: Node, new: Node) -> None:
    def swap(x: Node) -> Node:
        return new if x is old else x

    for n in graph.nodes:
        if n.op != "placeholder":
            n.args = map_nodes(n.args, swap)
            n.kwargs = {k: map_nodes(v, swap) for k, v in n.kwargs.items()}


def _rebuild(leaves: list, spec: Any) -> Any:
    """A function making the pack hook's output again with new tensors in its tensors' places
    (its other values, a dtype or a size, stay as constants)."""
    from retrograd._compiler.joint import unflatten

    def build(tensors: list) -> Any:
        it = iter(tensors)
        return unflatten([next(it) if isinstance(x, Node) else x for x in leaves], spec)

    return build
