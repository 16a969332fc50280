"""The committed type stubs are what retrograd._stubgen makes now (NOTE [Stubs]), and torch-style
user code type-checks against them."""

import subprocess
import sys
from pathlib import Path

import pytest

from retrograd import _stubgen

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("path", sorted(_stubgen.generate()), ids=lambda p: p.name)
def test_stub_is_up_to_date(path):
    text = _stubgen.generate()[path]
    assert path.exists(), f"{path} missing: run python -m retrograd._stubgen"
    assert path.read_text() == text, f"{path} is stale: run python -m retrograd._stubgen"


def test_generation_is_deterministic():
    assert _stubgen.generate() == _stubgen.generate()


def test_stubs_declare_the_runtime_names():
    import retrograd
    from retrograd._ops.registry import _FUNCTIONAL, _NAMESPACE

    stub = (ROOT / "src/retrograd/__init__.pyi").read_text()
    for name in _NAMESPACE:
        assert f"def {name}(" in stub or f" as {name}\n" in stub or f"{name}: " in stub, name
    functional = (ROOT / "src/retrograd/nn/functional.pyi").read_text()
    for name in _FUNCTIONAL:
        assert f"def {name}(" in functional, name
    tensor = (ROOT / "src/retrograd/_tensor.pyi").read_text()
    for name in ("exp", "__mul__", "__rmul__", "__matmul__", "backward", "grad", "sum", "view"):
        assert f"def {name}(" in tensor, name
    assert "def exp(input: Tensor, *, out: Tensor | None = ...) -> Tensor: ..." in stub
    assert retrograd.exp.__name__ == "exp"


def test_schema_types():
    assert _stubgen._schema_type("int[]?") == "_int | Sequence[_int] | None"
    assert _stubgen._schema_type("ScalarType?") == "_DType | None"
    assert _stubgen._schema_type("Tensor?[]") == "Sequence[Tensor | None]"
    assert _stubgen._schema_type("Layout?") == "Any"


def test_sample_user_code_runs():
    subprocess.run([sys.executable, str(ROOT / "tests/typing_sample/user_code.py")], check=True)


def test_sample_user_code_type_checks():
    pytest.importorskip("mypy")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "tests/typing_sample"],
        cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_op_found_without_the_generated_globals():
    # the schema lookup by name and parameters agrees with the op a method's code runs
    from retrograd._ops.registry import _METHODS

    checked = 0
    for fn in _METHODS.values():
        op = getattr(fn, "__globals__", {}).get("_op")
        if op is None:
            continue
        bare = type(fn)(fn.__code__, {}, fn.__name__, fn.__defaults__, fn.__closure__)
        bare.__module__, bare.__kwdefaults__ = fn.__module__, fn.__kwdefaults__
        assert _stubgen._opdef_of(bare) is op, fn.__name__
        checked += 1
    assert checked > 100
