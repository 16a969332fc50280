"""The layer contract of ARCHITECTURE.md ("Layers"), checked over the import graph.

Every module's imports are read with `ast` (module-level ones and the deferred ones inside
functions alike); a module may import from its own layer and the layers below. An upward edge
fails unless ALLOWED lists it with the reason it is there.
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

# bottom to top; a module belongs to the layer of its longest matching prefix
LAYERS = [
    ("tensor", [
        "retrograd._dtype", "retrograd._device", "retrograd._memory_format", "retrograd._errors",
        "retrograd._config", "retrograd._tensor_str", "retrograd._safe_globals",
        "retrograd._memory", "retrograd._tensor", "retrograd.storage", "retrograd._legacy",
        "retrograd._warn_always", "retrograd._fields", "retrograd._generated",
        # the leaf modules of the autograd core that Tensor's slots (and its generated
        # constructor) need: they import nothing
        "retrograd._autograd.state", "retrograd._autograd.hooks", "retrograd._autograd.frames",
    ]),
    ("autograd core", ["retrograd._autograd"]),
    ("ops", ["retrograd._ops", "retrograd.linalg"]),
    ("autograd API", ["retrograd.autograd", "retrograd.profiler", "retrograd._C",
                      "retrograd._logging"]),
    ("libraries", [
        "retrograd.nn", "retrograd.optim", "retrograd.utils", "retrograd.amp", "retrograd.testing",
        "retrograd.cuda", "retrograd.serialization", "retrograd._checkpoint_io",
        "retrograd.backends", "retrograd.mps",
        "retrograd.onnx", "retrograd.accelerator", "retrograd.xpu", "retrograd._lobpcg",
        "retrograd.distributions",
    ]),
    ("applications", [
        "retrograd.distributed", "retrograd.train", "retrograd.__main__", "retrograd._stubgen",
        "retrograd.codegen", "retrograd._compile",
        "retrograd",  # the package namespace gathers everything (this module only)
    ]),
]

# (importer prefix, imported prefix): why this upward edge is there
ALLOWED = {
    ("retrograd._tensor", "retrograd._autograd"):
        "Tensor's hook and view methods call the autograd core; imported when called",
    ("retrograd._tensor", "retrograd._ops"):
        "Tensor.type('torch.FloatTensor') parses the name as .to() does; imported when called",
    ("retrograd._tensor", "retrograd.autograd"):
        "Tensor.backward is autograd.backward; imported when called",
    ("retrograd.storage", "retrograd._autograd"):
        "a storage offset is read relative to the view chain; imported when called",
    ("retrograd._legacy", "retrograd._ops"):
        "legacy constructors (FloatTensor(...)) create through the creation ops; when called",
    ("retrograd._memory_format", "retrograd._ops"):
        "converting to a memory format allocates a strided array; imported when called",
    ("retrograd._autograd", "retrograd._ops"):
        "the engine reduces broadcast gradients and CopySlices runs ops; imported when called",
    ("retrograd._ops", "retrograd.autograd"):
        "out= under grad mode copies with no_grad, the public context manager; when called",
    ("retrograd._ops", "retrograd"):
        "a few composite functions call ops through the namespace; imported when called",
    ("retrograd.autograd", "retrograd.utils"):
        "dispatch modes live in utils._python_dispatch, where torch has them",
    ("retrograd.autograd", "retrograd"):
        "gradcheck is written as user code, on the public namespace",
    ("retrograd.nn", "retrograd"):
        "modules call ops through the public namespace (`retrograd.matmul`), as torch code does",
    ("retrograd.distributions", "retrograd"):
        "distributions are written as user code on the public namespace, as torch's are",
    ("retrograd.autograd", "retrograd.nn"):
        "the profiler swaps ranged versions into nn.functional while it runs; when started",
    ("retrograd._lobpcg", "retrograd"):
        "lobpcg's backward is written as user code on the public namespace; when called",
    ("retrograd.optim", "retrograd"):
        "L-BFGS flattens parameters with the namespace's cat; imported when called",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted((SRC / "retrograd").rglob("*.py"))}


def _imports(name: str, path: Path) -> list:
    """[(imported module, line)] for every retrograd import; `from m import x` counts as an
    import of m.x when that is a module."""
    out = []
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        else:
            continue
        for t in targets:
            if t == "retrograd" or t.startswith("retrograd."):
                while t not in MODULES:
                    t = t.rsplit(".", 1)[0]
                out.append((t, node.lineno))
    return out


def _layer(name: str) -> tuple:
    """(layer index, matching prefix)"""
    best = None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            inside = name == p or (name.startswith(p + ".") and p != "retrograd")
            if inside and (best is None or len(p) > len(best[1])):
                best = (i, p)
    assert best is not None, f"{name} is in no layer: add it to LAYERS"
    return best


def _upward_edges() -> list:
    edges = []
    for name, path in MODULES.items():
        src_layer, src_prefix = _layer(name)
        for target, line in _imports(name, path):
            dst_layer, dst_prefix = _layer(target)
            if dst_layer > src_layer:
                edges.append((src_prefix, dst_prefix, f"{name}:{line} imports {target}"))
    return edges


def test_every_module_is_in_a_layer():
    for name in MODULES:
        _layer(name)


def test_no_unlisted_upward_import():
    bad = [where for src, dst, where in _upward_edges() if (src, dst) not in ALLOWED]
    assert not bad, "upward imports (see ARCHITECTURE.md, Layers):\n" + "\n".join(bad)


def test_every_allowed_edge_is_used():
    used = {(src, dst) for src, dst, _ in _upward_edges()}
    assert not set(ALLOWED) - used, f"stale entries in ALLOWED: {set(ALLOWED) - used}"


@pytest.mark.parametrize("name", [n for n in MODULES if n.startswith("retrograd._ops")])
def test_ops_do_not_import_nn(name):
    bad = [t for t, _ in _imports(name, MODULES[name]) if t.startswith("retrograd.nn")]
    assert not bad, f"{name} imports {bad}: nn is built on _ops, not the other way"


def test_the_import_reader():
    imports = dict(_imports("retrograd._ops.loss", MODULES["retrograd._ops.loss"]))
    assert "retrograd._ops.registry" in imports and "retrograd._tensor" in imports
    assert _layer("retrograd._autograd.engine")[0] > _layer("retrograd._autograd.state")[0]
