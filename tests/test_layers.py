"""The layer contract of ARCHITECTURE.md ("Layers"), checked over the import graph.

Every module's imports are read with `ast`: module-level ones, the deferred ones inside
functions, those under `if TYPE_CHECKING:` and `importlib.import_module("retrograd....")` calls
alike. A module may import from its own layer and the layers below. An upward edge fails unless
ALLOWED lists it with the reason it is there, and one listed as "called" fails if any of its
imports runs when the module is imported (at module level), which could make an import cycle.
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

# bottom to top; a module belongs to the layer of its longest matching prefix
LAYERS = [
    ("tensor", [
        "retrograd._dtype", "retrograd._device", "retrograd._memory_format", "retrograd._layout",
        "retrograd._named_constant", "retrograd._errors",
        "retrograd._config", "retrograd._tensor_str", "retrograd._safe_globals",
        "retrograd._memory", "retrograd._tensor", "retrograd.storage", "retrograd._legacy",
        "retrograd._warn_always", "retrograd._dims", "retrograd._fields", "retrograd._generated",
        "retrograd._numpy_blas",
        "retrograd._shared_memory",  # segments of memory other processes map: arrays only
        "retrograd._warning_site",  # warnings.warn past generated entries: imports nothing
        "retrograd._numpy_names",  # axis/keepdims in generated entries: needs _generated only
        # the leaf modules of the autograd core that Tensor's slots (and its generated
        # constructor) need: they import nothing
        "retrograd._autograd.state", "retrograd._autograd.hooks", "retrograd._autograd.frames",
        # the one door from this layer and the autograd core to the ops (imported when called)
        "retrograd._autograd.op_seam",
        "retrograd.version", "retrograd.torch_version",  # build facts: import nothing
    ]),
    ("autograd core", ["retrograd._autograd"]),
    ("ops", ["retrograd._ops", "retrograd.linalg", "retrograd._VF", "retrograd.ops",
             "retrograd.special"]),
    ("autograd API", ["retrograd.autograd", "retrograd.profiler", "retrograd._C",
                      "retrograd._logging", "retrograd.overrides"]),
    ("libraries", [
        "retrograd.nn", "retrograd.optim", "retrograd.utils", "retrograd.amp", "retrograd.testing",
        "retrograd.cuda", "retrograd.cpu", "retrograd.serialization",
        "retrograd._torch_checkpoint", "retrograd.hub", "retrograd._checkpoint_io",
        "retrograd.backends", "retrograd.mps",
        "retrograd.onnx", "retrograd.accelerator", "retrograd.xpu", "retrograd._lobpcg",
        "retrograd._lowrank",
        "retrograd.distributions", "retrograd.library", "retrograd.futures",
        "retrograd.jit",  # torch.jit's names, run eagerly (script and trace return their input)
        "retrograd._functorch", "retrograd.func",  # the function transforms (vmap, grad, ...)
        "retrograd._vmap_internals",  # torch's legacy name for vmap
        "retrograd.random", "retrograd._global_api",  # top-level settings and flags
        "retrograd.signal",  # window functions written on the public namespace, as torch's
        "retrograd._legacy_storage",  # FloatStorage, ...: convert data as tensor() does
        "retrograd.multiprocessing",  # tensors sent between processes through shared memory
        "retrograd.types",  # torch.types' annotation aliases
        "retrograd.quasirandom",  # SobolEngine
        "retrograd._streams",  # the device-generic Stream and Event, and get_device_module
        "retrograd._higher_order_ops",  # cond and while_loop, run eagerly
    ]),
    ("graph capture", ["retrograd.fx"]),
    ("compiler", ["retrograd._compiler", "retrograd.compiler",
                  "retrograd._dynamo",  # torch._dynamo's marks of dynamic dimensions
                  "retrograd._inductor",  # torch._inductor.config's knobs (no effect here)
                  "retrograd.export"]),  # ExportedProgram: a module traced with fx
    ("applications", [
        "retrograd.distributed", "retrograd.train", "retrograd.__main__", "retrograd._stubgen",
        "retrograd.distributed.optim",  # optimizers sharded over the process group
        "retrograd.codegen", "retrograd._compile",
        "retrograd.functional",  # torch.functional's names, from the namespace
        "retrograd._einops_support",  # einops' backend for retrograd tensors
        "retrograd",  # the package namespace gathers everything (this module only)
    ]),
]

# (importer prefix, imported prefix): (when the import runs, why this upward edge is there).
# "called": only inside functions (or for type checking), so importing the module never
# imports the layer above; "import": at module level.
ALLOWED = {
    ("retrograd._ops", "retrograd.fx"): ("called",
        "_ops.array_formulas traces Tensor formulas with make_fx to generate array formulas"),
    ("retrograd._autograd.op_seam", "retrograd._ops"): ("called",
        "the autograd core and Tensor reach the few ops they need (sum_to, copies) through it"),
    ("retrograd._tensor", "retrograd._autograd"): ("called",
        "Tensor's hook and view methods call the autograd core"),
    ("retrograd._tensor", "retrograd.autograd"): ("called",
        "Tensor.backward is autograd.backward"),
    ("retrograd._tensor", "retrograd._legacy_storage"): ("called",
        "Tensor.storage_type() names the legacy storage class of its dtype"),
    ("retrograd.storage", "retrograd._autograd"): ("called",
        "a storage offset is read relative to the view chain"),
    ("retrograd._ops", "retrograd.autograd"): ("called",
        "out= under grad mode copies with no_grad; ops.profiler is the profiler's record ops"),
    ("retrograd._ops", "retrograd"): ("called",
        "a few composite functions call ops through the namespace"),
    ("retrograd.autograd", "retrograd.utils"): ("import",
        "dispatch modes live in utils._python_dispatch, where torch has them"),
    ("retrograd.autograd", "retrograd"): ("import",
        "gradcheck is written as user code, on the public namespace"),
    ("retrograd.autograd", "retrograd.func"): ("called",
        "gradcheck's batched checks run vmap over backward and forward-mode passes, as torch's"),
    ("retrograd.autograd", "retrograd._vmap_internals"): ("called",
        "is_grads_batched runs the backward under the legacy vmap, None passed through, as "
        "torch's does"),
    ("retrograd.autograd", "retrograd.nn"): ("called",
        "the profiler swaps ranged versions into nn.functional while it runs"),
    ("retrograd._VF", "retrograd"): ("called",
        "_VF.lstm and the other recurrences are written on nn's cells; found in the namespace"),
    ("retrograd.nn", "retrograd"): ("import",
        "modules call ops through the public namespace (`retrograd.matmul`), as torch code does"),
    ("retrograd.distributions", "retrograd"): ("import",
        "distributions are written as user code on the public namespace, as torch's are"),
    ("retrograd.signal", "retrograd"): ("import",
        "the signal windows are written on the public namespace, as torch's are"),
    ("retrograd.overrides", "retrograd"): ("called",
        "get_ignored_functions names functions of the namespace (is_tensor, typename, ...)"),
    ("retrograd._lobpcg", "retrograd"): ("called",
        "lobpcg's backward is written as user code on the public namespace"),
    ("retrograd._lowrank", "retrograd"): ("called",
        "svd_lowrank/pca_lowrank are composed of public ops (randn, matmul, linalg.qr/svd)"),
    ("retrograd.optim", "retrograd"): ("called",
        "L-BFGS flattens parameters with the namespace's cat"),
    ("retrograd.ops", "retrograd.autograd"): ("called",
        "ops.profiler holds record_function's enter/exit ops; loaded on first use"),
    ("retrograd.fx", "retrograd"): ("import",
        "generated code runs on the public namespace (`retrograd.relu`, `retrograd.ops.aten`)"),
    ("retrograd.nn", "retrograd._compile"): ("called",
        "Module.compile() compiles the module in place, as torch's does"),
    ("retrograd.nn", "retrograd.distributed"): ("import",
        "nn.parallel.DistributedDataParallel sits where torch has it and runs on the process "
        "group; utils.data.distributed.DistributedSampler asks it for rank and world size"),
    ("retrograd.utils", "retrograd.distributed"): ("called",
        "DistributedSampler reads the default group's rank and world size when not given"),
    ("retrograd.compiler", "retrograd._compile"): ("called",
        "torch.compiler.compile is torch.compile"),
    ("retrograd._compiler", "retrograd"): ("called",
        "cached compiled code is keyed by retrograd.__version__; read when caching"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted((SRC / "retrograd").rglob("*.py"))}


def _resolve(t: str) -> str:
    while t not in MODULES:
        t = t.rsplit(".", 1)[0]
    return t


def _string_import(node: ast.Call) -> str | None:
    """The module named by importlib.import_module("retrograd.x") (or an f-string starting so;
    its constant head counts), else None."""
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
    if name not in ("import_module", "__import__") or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        arg = arg.values[0]
    if not isinstance(arg, ast.Constant) or not isinstance(arg.value, str):
        return None
    return arg.value.rstrip(".")


def _imports(name: str, path: Path) -> list:
    """[(imported module, line, deferred)] for every retrograd import; `from m import x` counts
    as an import of m.x when that is a module. `deferred`: inside a function or under
    `if TYPE_CHECKING:`, so it does not run when the module is imported."""
    out = []
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

    def visit(node: ast.AST, deferred: bool) -> None:
        targets: list = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        elif isinstance(node, ast.Call):
            target = _string_import(node)
            targets = [target] if target else []
        for t in targets:
            if t == "retrograd" or t.startswith("retrograd."):
                out.append((_resolve(t), node.lineno, deferred))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            deferred = True
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, deferred)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, deferred)

    visit(ast.parse(path.read_text()), False)
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
    """[(importer prefix, imported prefix, deferred, where)]"""
    edges = []
    for name, path in MODULES.items():
        src_layer, src_prefix = _layer(name)
        for target, line, deferred in _imports(name, path):
            dst_layer, dst_prefix = _layer(target)
            if dst_layer > src_layer:
                edges.append((src_prefix, dst_prefix, deferred, f"{name}:{line} imports {target}"))
    return edges


def test_every_module_is_in_a_layer():
    for name in MODULES:
        _layer(name)


def test_no_unlisted_upward_import():
    bad = [where for src, dst, _, where in _upward_edges() if (src, dst) not in ALLOWED]
    assert not bad, "upward imports (see ARCHITECTURE.md, Layers):\n" + "\n".join(bad)


def test_deferred_edges_stay_deferred():
    bad = [where for src, dst, deferred, where in _upward_edges()
           if (src, dst) in ALLOWED and ALLOWED[src, dst][0] == "called" and not deferred]
    assert not bad, "upward imports that must be inside functions:\n" + "\n".join(bad)


def test_every_allowed_edge_is_used():
    used = {(src, dst) for src, dst, _, _ in _upward_edges()}
    assert not set(ALLOWED) - used, f"stale entries in ALLOWED: {set(ALLOWED) - used}"
    at_import = {(src, dst) for src, dst, deferred, _ in _upward_edges() if not deferred}
    loose = {k for k, (when, _) in ALLOWED.items() if when == "import"} - at_import
    assert not loose, f"edges listed as 'import' whose imports are all deferred: {loose}"


def test_the_ops_are_reached_from_below_through_one_seam():
    below = [n for n in MODULES if _layer(n)[0] < _layer("retrograd._ops")[0]]
    reach = sorted({n for n in below for t, _, _ in _imports(n, MODULES[n])
                    if t.startswith("retrograd._ops")})
    assert reach == ["retrograd._autograd.op_seam"]


@pytest.mark.parametrize("name", [n for n in MODULES if n.startswith("retrograd._ops")])
def test_ops_do_not_import_nn(name):
    bad = [t for t, _, _ in _imports(name, MODULES[name]) if t.startswith("retrograd.nn")]
    assert not bad, f"{name} imports {bad}: nn is built on _ops, not the other way"


def test_the_import_reader():
    imports = {t: deferred for t, _, deferred in
               _imports("retrograd._ops.loss", MODULES["retrograd._ops.loss"])}
    assert imports["retrograd._ops.registry"] is False and "retrograd._tensor" in imports
    assert imports["retrograd"] is True  # `import retrograd` inside a function
    assert _layer("retrograd._autograd.engine")[0] > _layer("retrograd._autograd.state")[0]
    seam = {t: deferred for t, _, deferred in
            _imports("retrograd._autograd.op_seam", MODULES["retrograd._autograd.op_seam"])}
    assert seam["retrograd._ops.copy"] is True
    call = ast.parse('importlib.import_module(f"retrograd.nn.{name}")').body[0].value
    assert _string_import(call) == "retrograd.nn"
    assert all(when in ("called", "import") and reason for when, reason in ALLOWED.values())



# ARCHITECTURE.md ("How to add an op"): a kernel module under _ops/kernels
# works on NumPy arrays and Python numbers, so it is unit-tested without Tensor or autograd
KERNELS = [n for n in MODULES if n.startswith("retrograd._ops.kernels.")]


def _loaded_with(name: str) -> set:
    """The retrograd modules that importing `name` imports: its module-level imports, followed
    (a package's __init__ aside)."""
    seen: set = set()
    todo = [name]
    while todo:
        current = todo.pop()
        for target, _, deferred in _imports(current, MODULES[current]):
            if not deferred and target not in seen and target != "retrograd":
                seen.add(target)
                todo.append(target)
    return seen


def test_there_are_kernel_modules():
    assert {"retrograd._ops.kernels.shape", "retrograd._ops.kernels.linalg",
            "retrograd._ops.kernels.conv"} <= set(KERNELS)


@pytest.mark.parametrize("name", KERNELS)
def test_kernels_import_no_tensor(name):
    every = {t for t, _, _ in _imports(name, MODULES[name])}  # deferred imports too
    bad = {t for t in every if t in ("retrograd._tensor", "retrograd._ops.registry")
           or (t.startswith("retrograd._ops.") and not t.startswith("retrograd._ops.kernels")
               and t != "retrograd._ops.layout")}
    assert not bad, f"{name} imports {bad}: kernels work on arrays, declarations import them"
    assert "retrograd._tensor" not in _loaded_with(name)
    assert "Tensor" not in {n.id for n in ast.walk(ast.parse(MODULES[name].read_text()))
                            if isinstance(n, ast.Name)}
