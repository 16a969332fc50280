"""ARCHITECTURE.md's `python` blocks run, in order, in one fresh interpreter (a subprocess: the
"how to add an op" block declares an op, which must not leak into the test process)."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^( *)```python\n(.*?)^\1```", re.S | re.M)


def _blocks() -> list:
    text = (ROOT / "ARCHITECTURE.md").read_text()
    out = []
    for indent, body in BLOCK.findall(text):
        out.append("\n".join(line[len(indent):] for line in body.splitlines()))
    return out


def test_doc_has_code():
    assert len(_blocks()) >= 8


def test_architecture_code_blocks_run():
    code = "\n\n".join(_blocks())
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
