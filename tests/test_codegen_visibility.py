"""Generated op code is visible (NOTE [Visible generated code]): tracebacks show its lines,
inspect finds its source, op functions have docstrings, `python -m retrograd.codegen` prints it,
and the plain-Python reference backward (NOTE [Reference backward]) gives the same gradients."""

from __future__ import annotations

import inspect
import linecache
import os
import pickle
import re
import subprocess
import sys
import textwrap
import traceback
from pathlib import Path

import numpy as np
import pytest

import retrograd
from retrograd._autograd.frames import GENERATED_PREFIX, is_internal
from retrograd._ops import reference_backward, registry
from retrograd._ops.schema import parse_schema
from retrograd.codegen import main as codegen_main

ROOT = Path(__file__).resolve().parents[1]
SRC = Path(retrograd.__file__).resolve().parents[1]


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("RETROGRAD_REFERENCE_BACKWARD", None)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(ROOT)])
    env.update(extra)
    return env


def _boom():
    raise ZeroDivisionError("formula failed")


def _exploding_op():
    """An op (kept out of the registry's table) whose derivative formula raises."""
    schema = parse_schema("explode(Tensor self) -> Tensor")
    return registry.OpDef(schema, lambda a: a * 2, {"self": lambda grad, self: grad * _boom()},
                          None, None, None)


def test_failing_formula_shows_the_generated_line():
    opdef = _exploding_op()
    y = registry.run(opdef, (retrograd.ones(3, requires_grad=True),))
    try:
        y.sum().backward()
    except ZeroDivisionError:
        text = traceback.format_exc()
    else:
        pytest.fail("the formula did not raise")
    # the frame, then the generated line that called the formula (a repeated run of this
    # test declares the op again: its functions get filenames ending " #2", ...)
    frame = re.escape(f'File "{GENERATED_PREFIX} explode ExplodeBackward0.backward mask=(1,)')
    assert re.search(frame + r'( #\d+)?>", line \d+, in backward\n    r0 = f0\(g, v0\)\n', text)


def test_version_error_raised_inside_generated_backward_shows_its_line():
    x = retrograd.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.sum().backward()
    text = "".join(traceback.format_exception(info.value))
    assert "ExpBackward0.backward" in text
    assert "s0.unpack(node)" in text  # the line of the generated backward that unpacked


def test_getsource_of_entry_point_save_and_backward():
    src = inspect.getsource(retrograd.exp)
    assert src.startswith("def exp(input, *, out=None):")
    assert src == retrograd.exp.__retrograd_source__
    assert inspect.getsource(retrograd.Tensor.mul).startswith("def mul(self, other):")
    y = retrograd.ones(2, requires_grad=True) * retrograd.ones(2)
    plan = y.grad_fn._plan
    assert inspect.getsource(plan.backward).startswith("def backward(node, grads, release,")
    assert inspect.getsource(plan.save).startswith("def save(args, outs):")
    assert plan.backward.__qualname__ == "MulBackward0.backward"
    assert plan.save.__qualname__ == "mul.Tensor.save"
    assert plan.backward.__code__.co_filename == \
        f"{GENERATED_PREFIX} mul.Tensor MulBackward0.backward mask=(1, 0)>"


def test_names_and_filenames():
    assert retrograd.exp.__qualname__ == "exp"
    assert retrograd.Tensor.exp.__qualname__ == "Tensor.exp"
    assert retrograd.exp.__code__.co_filename == f"{GENERATED_PREFIX} exp entry>"
    assert retrograd.Tensor.exp.__code__.co_filename == f"{GENERATED_PREFIX} exp method entry>"
    from retrograd._ops.codegen import GENERATED

    # one filename per generated function
    names = [fn.__code__.co_filename for fn in GENERATED.values()]
    assert len(names) == len(set(names)) == len(GENERATED)


def test_linecache_entries_survive_checkcache():
    filename = retrograd.exp.__code__.co_filename
    linecache.checkcache()
    linecache.checkcache(filename)
    assert linecache.getline(filename, 1) == "def exp(input, *, out=None):\n"
    assert inspect.getsource(retrograd.exp) == retrograd.exp.__retrograd_source__


def test_docstrings_from_schema_and_formulas():
    doc = retrograd.exp.__doc__
    assert doc == ("exp(Tensor self) -> Tensor\n\nDerivatives (ExpBackward0):\n"
                   "  self: grad * result")
    assert retrograd.Tensor.exp.__doc__ == doc
    mul = retrograd.mul.__doc__
    assert mul.startswith("mul.Tensor(Tensor self, Tensor other) -> Tensor\n")
    assert "  self: grad * other\n  other: grad * self" in mul
    # an overload dispatcher gets every overload's text
    assert "pow.Tensor_Scalar(Tensor self, Scalar exponent)" in retrograd.pow.__doc__
    assert "pow.Tensor_Tensor(Tensor self, Tensor exponent)" in retrograd.pow.__doc__
    assert retrograd.eq.__doc__.endswith("Derivatives: none")


def test_formula_text_of_multiline_lambda_and_named_function():
    from retrograd._ops.op_doc import formula_text

    def named(grad, self):
        return grad

    f = (lambda grad, self: (grad
                             * self).sum())
    assert formula_text(f) == "(grad * self).sum()"
    assert formula_text(named) == "named(grad, self)"


@pytest.mark.parametrize("name", ["mul", "exp"])
def test_codegen_cli_prints_everything_generated(name, capsys):
    assert codegen_main([name]) == 0
    out = capsys.readouterr().out
    node = {"mul": "MulBackward0", "exp": "ExpBackward0"}[name]
    full = {"mul": "mul.Tensor", "exp": "exp"}[name]
    masks = ["(1, 1)", "(1, 0)", "(0, 1)"] if name == "mul" else ["(1,)"]
    assert f"# ==== {full} ====" in out
    assert f"<retrograd: {full} entry>" in out and f"<retrograd: {full} method entry>" in out
    assert f"def {name}(input" in out and f"def {name}(self" in out
    for m in masks:
        assert f"<retrograd: {full} save mask={m}>" in out
        assert f"<retrograd: {full} {node}.backward mask={m}>" in out
        assert f"<retrograd: {full} {node}.backward_array mask={m}>" in out
    # the CLI prints every overload of the name (mul.Scalar too): count within this one's part
    part = out.split(f"# ==== {full} ====")[1].split("# ==== ")[0]
    assert part.count("def backward(node, grads, release, needed):") == 2 * len(masks)
    assert part.count("def save(args, outs):") == len(masks)


def test_codegen_cli_as_module_and_unknown_op():
    run = subprocess.run([sys.executable, "-m", "retrograd.codegen", "exp", "--mask", "1"],
                         capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "<retrograd: exp ExpBackward0.backward mask=(1,)>" in run.stdout
    assert codegen_main(["mull"]) == 2


def test_internal_frames_are_the_package_and_generated_code():
    assert is_internal(retrograd.__file__)
    assert is_internal(registry.__file__)
    assert is_internal(retrograd.exp.__code__.co_filename)
    assert not is_internal("/home/someone/retrograd/train.py")
    assert not is_internal(os.path.dirname(retrograd.__file__) + "_extra/train.py")
    assert not is_internal("<stdin>")


def test_version_error_names_a_user_script_in_a_folder_named_retrograd(tmp_path):
    folder = tmp_path / "retrograd"
    folder.mkdir()
    script = folder / "script.py"
    script.write_text(textwrap.dedent("""\
        import retrograd
        x = retrograd.ones(3, requires_grad=True)
        y = x.exp()
        y.add_(1)
        try:
            y.sum().backward()
        except RuntimeError as e:
            print(e)
        """))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=_env(), cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert f"the last in-place change was add_ at {script}:4)" in run.stdout


# --- the reference backward gives the generated backward's gradients, bit for bit -----------

def _grads_of_samples() -> dict:
    """For every non-random op sample in float64: first gradients (the array formulas where an
    op has them), the same with create_graph (the Tensor formulas), and second gradients."""
    from tests.op_harness import call, tensor_outputs
    from tests.op_samples import all_samples

    def arrays(gs):
        return [None if g is None else np.array(g.detach()._data, copy=True) for g in gs]

    out, seen = {}, set()
    for k, sample in enumerate(all_samples()):
        # the first sample of each op call (a representative set at half the cost)
        if sample.random or not sample.gradcheck or str(sample.op) in seen:
            continue
        seen.add(str(sample.op))
        key = f"{k}:{sample.id}"
        try:
            res, leaves, _, _ = call(retrograd, sample)
            outs = [o for o in tensor_outputs(res) if o.requires_grad]
            if not leaves or not outs:
                continue
            rng = np.random.default_rng(k)
            ws = [retrograd.tensor(rng.standard_normal(o.shape)).to(o.dtype) for o in outs]
            first = retrograd.autograd.grad(outs, leaves, ws, retain_graph=True,
                                            allow_unused=True)
            again = retrograd.autograd.grad(outs, leaves, ws, create_graph=True,
                                            allow_unused=True)
            used = [(g, leaf) for g, leaf in zip(again, leaves) if g is not None]
            total = sum((g * g).sum() for g, _ in used if g.requires_grad) if used else None
            second = [] if not isinstance(total, retrograd.Tensor) else retrograd.autograd.grad(
                total, [leaf for _, leaf in used], allow_unused=True)
            out[key] = (arrays(first), arrays(again), arrays(second))
        except Exception as e:  # noqa: BLE001 - an op's own error must match on both paths
            out[key] = f"{type(e).__name__}: {e}"
    return out


def _dump(path: str) -> None:
    """Run in a child process: the gradients, and which backward implementation ran."""
    y = retrograd.ones(2, requires_grad=True).exp()
    generated = hasattr(y.grad_fn._plan.backward, "__retrograd_source__")
    with open(path, "wb") as f:
        pickle.dump((generated, _grads_of_samples()), f)


def _start_child(tmp_path, reference: bool) -> tuple:
    path = tmp_path / f"grads_{int(reference)}.pkl"
    env = _env(RETROGRAD_REFERENCE_BACKWARD="1") if reference else _env()
    code = f"from tests.test_codegen_visibility import _dump; _dump({str(path)!r})"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    return proc, path


def _result(child: tuple) -> tuple:
    proc, path = child
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    with open(path, "rb") as f:
        return pickle.load(f)


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def test_reference_backward_matches_generated_backward_exactly(tmp_path):
    child = _start_child(tmp_path, reference=True)
    if reference_backward.ENABLED:
        gen_generated, gen = _result(_start_child(tmp_path, reference=False))
    else:
        gen_generated, gen = True, _grads_of_samples()
    ref_generated, ref = _result(child)
    assert gen_generated and not ref_generated  # the child really ran the reference backward
    assert ref.keys() == gen.keys()
    assert sum(not isinstance(v, str) for v in gen.values()) > 200  # most samples ran
    for key in gen:
        a, b = gen[key], ref[key]
        if isinstance(a, str) or isinstance(b, str):
            assert a == b, key
            continue
        for kind, xs, ys in zip(("first", "create_graph", "second"), a, b):
            assert len(xs) == len(ys), (key, kind)
            for i, (x, y) in enumerate(zip(xs, ys)):
                assert _same(x, y), (key, kind, i)
