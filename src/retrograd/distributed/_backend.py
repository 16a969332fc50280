"""torch.distributed's backend names (Backend, is_backend_available, ...) as retrograd has them:
every process group runs over MPI, and init_process_group also takes "gloo" (for programs
written for torch on the CPU) and runs it over MPI."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

__all__ = ["Backend", "get_default_backend_for_device", "get_node_local_rank",
           "is_backend_available"]


class Backend(str):
    """torch's enum-like backend names: `Backend("GLOO")` is "gloo", `Backend.MPI` is "mpi"."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]
    # what programs read to pick a backend for their device; retrograd's is MPI
    default_device_backend_map: dict[str, str] = {"cpu": MPI}
    backend_capability: dict[str, list[str]] = {MPI: ["cpu"], GLOO: ["cpu"]}

    def __new__(cls, name: str) -> Any:  # (a plain lowercase str, as torch's)
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        return name.lower() if value == Backend.UNDEFINED else value

    @classmethod
    def register_backend(cls, name: str, func: Callable, extended_api: bool = False,
                         devices: Any = None) -> None:
        raise RuntimeError("retrograd.distributed runs every process group over MPI; other "
                           f"backends ({name!r}) cannot be registered")


def is_backend_available(backend: str) -> bool:
    """Whether init_process_group can start `backend` here: "mpi" when mpi4py is installed."""
    from retrograd.distributed._core import is_available

    return backend.lower() == Backend.MPI and is_available()


def get_default_backend_for_device(device: Any) -> str:
    """The backend for a device: MPI for the CPU (the only device here)."""
    from retrograd._device import device as make_device

    make_device(device if isinstance(device, str) else str(device))  # other devices: refused
    return Backend.MPI


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its machine (LOCAL_RANK, which retrograd.distributed.run sets)."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
        "and want the code to run locally instead.")
