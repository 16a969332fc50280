"""torch._vmap_internals: the vmap torch's autograd used before torch.func existed, still called
by its tests and by older programs as `torch._vmap_internals._vmap`. Here it is
retrograd.func.vmap, plus the one option the old API had: None outputs passed through."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd._functorch.vmap import vmap


def _vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error",
          allow_none_pass_through: bool = False) -> Callable:
    """func mapped over dimension in_dims of its inputs; with allow_none_pass_through, an output
    that is None (for every batch member) comes back as None."""
    if not allow_none_pass_through:
        return vmap(func, in_dims, out_dims, randomness)
    nones: list[bool] = []

    def marked(*args: Any, **kwargs: Any) -> Any:
        out = func(*args, **kwargs)
        if not isinstance(out, tuple):
            nones[:] = [out is None]
            return _marker() if out is None else out
        nones[:] = [o is None for o in out]
        return tuple(_marker() if o is None else o for o in out)

    mapped = vmap(marked, in_dims, out_dims, randomness)

    def run(*args: Any, **kwargs: Any) -> Any:
        out = mapped(*args, **kwargs)
        if not isinstance(out, tuple):
            return None if nones[0] else out
        return tuple(None if none else o for o, none in zip(out, nones))

    return run


def _marker() -> Any:
    """What stands for a None output inside the vmap (vmap returns only tensors)."""
    from retrograd._ops.creation import zeros

    return zeros(())
