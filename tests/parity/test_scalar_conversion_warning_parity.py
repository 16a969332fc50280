"""float() of a tensor that requires grad warns once per process, as torch 2.13 does, and every
time under set_warn_always; each program runs in a fresh interpreter so that the once-only state
starts empty for both libraries."""

import json
import subprocess
import sys

import pytest

from tests.parity.harness import torch_or_skip

PROGRAM = r"""
import json, math, sys, warnings
lib = __import__(sys.argv[1])
warnings.simplefilter("always")
x = lib.tensor(2.0, requires_grad=True)
y = x * 2
steps = {
    "float leaf": lambda: float(x),
    "float again": lambda: float(y),
    "detached": lambda: float(y.detach()),
    "int": lambda: int(y),
    "item": lambda: y.item(),
    "format spec": lambda: f"{y:.2f}",
    "percent": lambda: "%f" % y,
    "floor": lambda: math.floor(y),
    "two elements": lambda: float(lib.ones(2, requires_grad=True)),
    "format spec 1-d": lambda: format(lib.ones(2), ".2f"),
}
if sys.argv[2] == "always":
    lib.set_warn_always(True)
report = []
for name, step in steps.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            step()
            error = None
        except Exception as e:
            error = [type(e).__name__, str(e)]
    messages = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    files = sorted({w.filename for w in caught})
    report.append([name, messages, files, error])
print(json.dumps(report))
"""


def _run(lib: str, mode: str) -> list:
    out = subprocess.run([sys.executable, "-c", PROGRAM, lib, mode], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("mode", ["once", "always"])
def test_float_of_requires_grad_warns_like_torch(mode):
    torch_or_skip()
    ours, theirs = _run("retrograd", mode), _run("torch", mode)
    assert ours == theirs
    warned = [name for name, messages, _, _ in ours if messages]
    if mode == "once":
        assert warned == ["float leaf"]
    else:
        assert warned == ["float leaf", "float again", "percent", "floor", "two elements"]
    # the warning points at the user's line, not into the library
    assert ours[0][2] == ["<string>"]
    assert ours[0][1] == ["Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first."]
