"""Write the autograd graph of one step as Graphviz dot (and svg/png when `dot` exists).

Nodes carry PyTorch's names and the shapes of what they saved, like torchviz.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any


def _saved_names(node: Any) -> list:
    plan = getattr(node, "_plan", None)  # retrograd's op nodes list what they saved
    if plan is not None and hasattr(plan, "names"):
        # tensors only (saved as SavedVariables), not scalar arguments like alpha
        return ["_saved_" + n for n in plan.names
                if hasattr(getattr(node, "_raw_saved_" + n, None), "register_hooks")]
    return [a for a in dir(node) if a.startswith("_saved_")]


def _saved_shapes(node: Any) -> list:
    shapes = []
    for attr in _saved_names(node):
        try:
            value = getattr(node, attr)
        except Exception:  # noqa: BLE001 - freed or unavailable saved values are skipped
            continue
        if hasattr(value, "shape"):
            shapes.append(f"{attr[7:]}: {tuple(value.shape)}")
    return shapes


def _label(node: Any) -> str:
    name = type(node).__name__
    if hasattr(node, "variable"):
        return f"{name}\\n{tuple(node.variable.shape)}"
    wrapped = getattr(node, "metadata", {}).get("wrapped_node") if hasattr(node, "metadata") \
        else None
    if wrapped is not None:
        name += f" ({type(wrapped).__name__})"
    return "\\n".join([name] + _saved_shapes(node))


def to_dot(root: Any) -> str:
    lines = ["digraph autograd {", '  node [shape=box, fontname="monospace", fontsize=10];']
    ids: dict = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node is None or node in ids:
            continue
        ids[node] = f"n{len(ids)}"
        color = ', style=filled, fillcolor="lightblue"' if hasattr(node, "variable") else ""
        lines.append(f'  {ids[node]} [label="{_label(node)}"{color}];')
        for nxt, _ in node.next_functions:
            if nxt is not None:
                stack.append(nxt)
    for node, nid in ids.items():
        for nxt, _ in node.next_functions:
            if nxt is not None:
                lines.append(f"  {ids[nxt]} -> {nid};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_graph(loss: Any, path: str) -> list:
    """Write `path` (.dot always; .svg/.png rendered with graphviz when installed)."""
    target = Path(path)
    dot_text = to_dot(loss.grad_fn)
    dot_path = target if target.suffix == ".dot" else target.with_suffix(".dot")
    dot_path.write_text(dot_text)
    written = [str(dot_path)]
    if target.suffix in (".svg", ".png"):
        exe = shutil.which("dot")
        if exe is None:
            print(f"graphviz 'dot' not found: wrote {dot_path} only")
        else:
            subprocess.run([exe, f"-T{target.suffix[1:]}", str(dot_path), "-o", str(target)],
                           check=True)
            written.append(str(target))
    return written
