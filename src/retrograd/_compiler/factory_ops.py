"""Factories in compiled graphs.

NOTE [Factories in compiled graphs]
zeros, ones, full, empty and their *_like forms (without out= or requires_grad) make their array
in a kernel of plain values (retrograd._ops.creation.FACTORY_KERNELS) and report it to the
thread's dispatch modes (dispatch.tensor_made). The compiler's tracer records a graph node whose
target calls the same kernel with the same arguments, so the generated code makes a fresh array
at every call, as eager does, and the function may write it in place: an in-place sampler on a
fresh tensor (`empty_like(x).normal_()`, `zeros(n).bernoulli_(p)`) is recorded as an op on a
value of the graph, drawing at every call (NOTE [Random draws in compiled graphs]). Before, the
array made during capture was read as a tensor from outside, which the function may not write.
The targets are named helpers the disk cache can name again (HELPERS below).
"""

from __future__ import annotations

from typing import Any

from retrograd._compiler.helpers import Helper
from retrograd._ops.creation import FACTORY_KERNELS

HELPERS = tuple(Helper(f"retrograd.{k.__name__.strip('_')}", k,
                       f"_made{k.__name__.removesuffix('_kernel')}") for k in FACTORY_KERNELS)
_BY_KERNEL = {h.kernel: h for h in HELPERS}


def record(tracer: Any, kernel: Any, args: tuple, out: Any) -> None:
    """Add the factory kernel(*args) -> out to the tracer's graph and bind its result."""
    node = tracer.graph.call_function(_BY_KERNEL[kernel], tuple(args), val=out)
    tracer.bind(out, node)
