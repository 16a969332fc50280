"""Runs in each process started by retrograd.distributed.run: sets RANK, LOCAL_RANK,
WORLD_SIZE from the MPI launcher's environment, then runs the user's script as __main__."""

from __future__ import annotations

import os
import runpy
import sys


def _env_int(*names: str, default: int = 0) -> int:
    for n in names:
        if n in os.environ:
            return int(os.environ[n])
    return default


def main() -> None:
    rank = _env_int("PMI_RANK", "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID")
    size = _env_int("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "WORLD_SIZE", default=1)
    local = _env_int("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", default=rank)
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(size))
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
