"""The one interception point every op passes through: a stack of dispatch modes.

A mode (retrograd.utils._python_dispatch.TorchDispatchMode) sees each op before it runs, as
`__torch_dispatch__(func, types, args, kwargs)`, and decides what to return; tracers, loggers,
FLOP counters and allow_mutation_on_saved_tensors are modes. With no mode active the runner pays
one truth test of `mode_stack`.
"""

from __future__ import annotations

mode_stack: list = []

# NOTE [Autocast composites]
# retrograd.amp's autocast is a dispatch mode, so it sees the ops that functions are made of.
# torch's autocast sees some of those functions whole (linear, matmul, convNd, cross_entropy and
# the other composite losses) and casts their inputs once at entry. While CPU autocast is on,
# `autocast` is its mode, and those functions start with
#     if dispatch.autocast is not None: a, b = dispatch.autocast.cast("lower", a, b)
# ("lower" for the lower-precision list, "fp32" for the float32 list); otherwise it is None and
# costs that one test.
autocast = None


def dispatch(op, args: tuple):
    from retrograd._ops.registry import run_eager

    mode = mode_stack.pop()
    try:
        return mode.__torch_dispatch__(OpOverload(op), (), args, {})
    finally:
        mode_stack.append(mode)
    return run_eager(op, args)


class OpOverload:
    """What a mode receives as `func`: callable, with the op's schema and name."""

    __slots__ = ("_op",)

    def __init__(self, op) -> None:
        self._op = op

    @property
    def _schema(self):
        return self._op.schema

    @property
    def __name__(self) -> str:
        return self._op.name

    def name(self) -> str:
        return self._op.name

    def __call__(self, *args, **kwargs):
        from retrograd._ops.registry import run

        if kwargs:
            names = self._op.arg_names
            full = list(args) + [None] * (len(names) - len(args))
            for i, a in enumerate(self._op.schema.args):
                if i >= len(args):
                    full[i] = kwargs.get(a.name, a.default)
            args = tuple(full)
        return run(self._op, tuple(args))

    def __repr__(self) -> str:
        return f"retrograd.ops.aten.{self._op.name}"

    def __eq__(self, other) -> bool:
        return isinstance(other, OpOverload) and other._op is self._op

    def __hash__(self) -> int:
        return hash(self._op.name)
