"""Launcher: `python -m retrograd.distributed.run --nproc-per-node N script.py [args]`.

Starts N processes with the venv's `mpiexec` and sets RANK, LOCAL_RANK and WORLD_SIZE in each,
as torchrun does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path


def find_mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    if here.exists():
        return str(here)
    found = shutil.which("mpiexec")
    if found is None:
        sys.exit("mpiexec not found: pip install mpi4py mpich")
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m retrograd.distributed.run")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1)
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    cmd = [find_mpiexec(), "-n", str(args.nproc_per_node), sys.executable, "-m",
           "retrograd.distributed._bootstrap", args.script, *args.args]
    env = dict(os.environ, WORLD_SIZE=str(args.nproc_per_node))
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
