"""checkpoint(debug=True): log the ops of the forward and of the recomputation, with where each
was called from, and put both logs in the error when the recomputation does not match."""

from __future__ import annotations

import sys
from collections.abc import Callable

from retrograd._autograd.frames import is_internal
from retrograd._tensor import Tensor
from retrograd.utils._python_dispatch import TorchDispatchMode

ERROR_TEMPLATE = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+
(Scroll up to correlate stack traces with each operation listed below. This
 helps identify their source in the code.)

IMPORTANT: Differences in "detach" calls between the original forward and the
           recomputation are expected. They are introduced by the checkpointing
           mechanism and can be ignored.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""

_SHORT_DTYPES = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
                 "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
                 "bool": "b8", "complex64": "c64", "complex128": "c128"}
def _describe(t: Tensor) -> str:
    name = str(t.dtype).rpartition(".")[2]
    return f"{_SHORT_DTYPES.get(name, name)}[{', '.join(str(s) for s in t.shape)}]"


class _OpLogMode(TorchDispatchMode):
    """Record each op as `$out: type = torch._ops.aten.op($in, ...)` and the user frames that
    called it (innermost first); tensors are numbered in the order they are first seen."""

    def __init__(self) -> None:
        self.logs: list = []
        self.traces: list = []
        self._names: dict = {}  # id(tensor) -> number, alive only while logging

    def _name(self, t: Tensor) -> str:
        n = self._names.get(id(t))
        if n is None:
            n = self._names[id(t)] = len(self._names)
        return f"${n}"

    def _arg(self, a) -> str:
        if isinstance(a, Tensor):
            return self._name(a)
        if isinstance(a, (list, tuple)):
            return "[" + ", ".join(self._arg(x) for x in a) + "]"
        return repr(a)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        ins = ", ".join(self._arg(a) for a in args)
        out = func(*args, **(kwargs or {}))
        outs = out if isinstance(out, (list, tuple)) else (out,)
        lhs = ", ".join(f"{self._name(o)}: {_describe(o)}" for o in outs if isinstance(o, Tensor))
        self.logs.append(f"{lhs} = torch._ops.{func}({ins})")
        self.traces.append(_user_frames())
        return out

    def __enter__(self) -> _OpLogMode:
        self.logs, self.traces = [], []  # the latest run only
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        self._names = {}
        super().__exit__(*exc)


def _user_frames() -> list:
    frames = []
    f = sys._getframe(2)
    while f is not None:
        path = f.f_code.co_filename
        if not is_internal(path):  # retrograd's modules and generated op code
            frames.append(f"{path}:{f.f_lineno}:{f.f_code.co_name}")
        f = f.f_back
    return frames


def _traces(label: str, mode: _OpLogMode) -> str:
    out = ""
    total = len(mode.logs)
    for i, (log, frames) in enumerate(zip(mode.logs, mode.traces)):
        out += f"{log}   ({i + 1} of {total} in {label})\n\n"
        out += "".join(line + "\n" for line in frames)
        out += "\n\n"
    return out


def debug_context_and_callback() -> tuple[Callable, Callable]:
    """(context_fn, unpack_error_cb) for a checkpoint run with debug=True."""
    from retrograd.utils._checkpoint_frame import CheckpointError

    forward_log, recompute_log = _OpLogMode(), _OpLogMode()

    def context_fn():
        return forward_log, recompute_log

    def unpack_error_cb(e: Exception):
        raise CheckpointError(ERROR_TEMPLATE.format(
            forward_traces=_traces("original", forward_log),
            recompute_traces=_traces("recompute", recompute_log),
            forward_ops="\n".join(forward_log.logs),
            recompute_ops="\n".join(recompute_log.logs))) from e

    return context_fn, unpack_error_cb
