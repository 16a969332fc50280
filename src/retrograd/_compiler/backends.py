"""The backend names retrograd.compile accepts. retrograd has one backend, "numpy" (generated
Python calling NumPy); torch's backend names are accepted for programs written for
torch.compile and mean the same generator. A callable backend is accepted as well and not
called (NOTE in README, "Deliberate differences"). Any other name is torch's InvalidBackend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# torch 2.13's registered backends (torch._dynamo.list_backends(exclude_tags=()))
TORCH_NAMES = frozenset({
    "aot_eager", "aot_eager_decomp_partition", "aot_eager_decomp_partition_crossref",
    "aot_eager_decomp_partition_with_mode", "aot_eager_default_partitioner", "aot_ts",
    "cudagraphs", "eager", "eager_debug", "eager_noexcept", "inductor", "invoke_subgraph",
    "openxla", "openxla_eval", "pre_dispatch_eager", "ts", "tvm"})
OWN = "numpy"

_default: str | Callable[..., Any] = OWN


def check(backend: Any) -> None:
    """Raise InvalidBackend for a name retrograd does not know."""
    if backend is None or callable(backend) or backend == OWN or backend in TORCH_NAMES:
        return
    from retrograd._dynamo.exc import InvalidBackend

    raise InvalidBackend(backend)


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """The names that select retrograd's own backend (torch's names are aliases of it)."""
    return [OWN]


def set_default_backend(backend: str | Callable[..., Any] | None) -> None:
    """The backend retrograd.compile uses when given backend=None; None resets it."""
    global _default
    check(backend)
    _default = OWN if backend is None else backend


def get_default_backend() -> str | Callable[..., Any]:
    return _default
