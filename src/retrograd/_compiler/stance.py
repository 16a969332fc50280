"""torch.compiler.set_stance: what compiled functions do when they are called, process-wide.

"default" compiles as usual; "force_eager" runs every compiled function eagerly;
"eager_on_recompile" runs a compiled variant that fits the call and eagerly where a new one would
be needed (the first call too); "fail_on_recompile" raises where a new variant would be needed;
"eager_then_compile" (and "aot_eager_then_compile") runs a function's first call eagerly and
compiles from its second. As in torch, an unknown stance is reported by the next compiled call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from retrograd.autograd.grad_mode import _DecoratorContextManager

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
           "eager_then_compile", "aot_eager_then_compile")


@dataclasses.dataclass
class DynamoStance:
    stance: str = "default"
    skip_guard_eval_unsafe: bool = False
    backend: str | Callable[..., Any] | None = None


_stance = DynamoStance()


def current() -> DynamoStance:
    return _stance


def _set(stance: DynamoStance) -> DynamoStance:
    global _stance
    from retrograd._compiler.tracing import is_compiling, refuse

    if is_compiling():  # (torch refuses to trace it; so does capture: the call runs eagerly)
        refuse("set_stance called in a compiled function")
    prior, _stance = _stance, stance
    return prior


def check(stance: DynamoStance) -> None:
    if stance.stance not in STANCES:
        raise RuntimeError(f"invalid torch.compile stance '{stance}'")


class set_stance(_DecoratorContextManager):
    """Set the stance now (as a call), for a block (as a context manager) or for the calls of a
    function (as a decorator). `skip_guard_eval_unsafe` is accepted: retrograd always evaluates
    its guards, which that flag only permits skipping. `force_backend` is recorded (retrograd
    has one backend)."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend: str | Callable[..., Any] | None = None) -> None:
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = DynamoStance(stance, skip_guard_eval_unsafe, force_backend)
        self.prev = _set(self.stance)

    def __call__(self, fn: Any) -> Any:
        _set(self.prev)  # as a decorator, the stance holds only while fn runs
        return super().__call__(fn)

    def __enter__(self) -> None:
        _set(self.stance)

    def __exit__(self, *exc: Any) -> None:
        _set(self.prev)

    def clone(self) -> set_stance:
        return self.__class__(self.stance.stance, force_backend=self.stance.backend)
