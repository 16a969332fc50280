"""autograd.grad(..., is_grads_batched=True): dim 0 of every grad_output is a batch dimension,
and each gradient comes back with the same leading dimension.

As torch does, the backward pass runs once, under vmap over the grad_outputs: every formula
computes with batched gradients (NOTE [Batching rules]), so a batch of 64 costs about one pass,
not 64. An unused input's gradient is the same None for every member: it passes through the
vmap as torch's does (`_vmap_internals._vmap(allow_none_pass_through=True)`) and comes back as
None (or one unbatched zero with materialize_grads).
A graph of wrapper subclasses (LoggingTensor-style) still runs one pass per member: batched
values inside another class's dispatch do not give torch's values yet.
"""

from __future__ import annotations

import retrograd
from retrograd import _errors as E
from retrograd._tensor import Tensor, _is_wrapper

BATCH_SHAPE_MISMATCH = (
    "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the "
    "batch dimension. The sizes of the remaining dimensions are expected to match the shape of "
    "corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of {g} and "
    "output[{i}] has a shape of {o}. If you only want some tensors in `grad_output` to be "
    "considered batched, consider using vmap.")


def _size(shape) -> str:
    return f"torch.Size({list(shape)})"


def batched_grad(outputs, inputs, grad_outputs, retain_graph: bool | None, create_graph: bool,
                 allow_unused: bool | None, materialize_grads: bool):
    from retrograd.autograd import _as_tuple, grad

    outs = _as_tuple(outputs)
    gouts = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outs)
    for i, (o, g) in enumerate(zip(outs, gouts)):
        if isinstance(o, Tensor) and isinstance(g, Tensor) and g.shape[1:] != o.shape:
            # torch's message drops the batch dimension twice: it names shape[2:]
            raise RuntimeError(BATCH_SHAPE_MISMATCH.format(i=i, g=_size(g.shape[2:]),
                                                           o=_size(o.shape)))
    sizes = [g.shape[0] for g in gouts if isinstance(g, Tensor) and g.dim() > 0]
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    if not sizes:  # nothing is batched: one ordinary pass
        return grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                    allow_unused=allow_unused, materialize_grads=materialize_grads)
    n = sizes[0]
    if n == 0:
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
    if retain_graph is None:
        retain_graph = create_graph
    ins = tuple(inputs.values()) if isinstance(inputs, dict) else _as_tuple(inputs)
    if any(_is_wrapper_tensor(t) for t in (*outs, *gouts, *ins)):
        cols = _member_by_member(grad, outputs, inputs, gouts, n, retain_graph, create_graph)
    else:
        cols = _under_vmap(grad, outputs, inputs, gouts, retain_graph, create_graph)
    final: list[Tensor | None] = []
    for i, (col, t) in enumerate(zip(cols, ins)):
        if col is None:  # unused by every member
            if materialize_grads:
                # one unbatched zero, as a single batched pass gives
                final.append(retrograd.zeros_like(t, requires_grad=create_graph))
                continue
            if not allow_unused:
                raise RuntimeError(E.UNUSED_INPUT.format(i))
            final.append(None)
            continue
        final.append(col)
    if isinstance(inputs, dict):
        return dict(zip(inputs, final))
    return tuple(final)


def _is_wrapper_tensor(t) -> bool:
    return isinstance(t, Tensor) and t.__class__ is not Tensor and _is_wrapper(t)


def _under_vmap(grad, outputs, inputs, gouts: tuple, retain_graph: bool,
                create_graph: bool) -> list:
    """One backward pass over the batch: the gradient per input, None where unused."""
    from retrograd._vmap_internals import _vmap

    def one_member(*member):
        got = grad(outputs, inputs, member, retain_graph=retain_graph,
                   create_graph=create_graph, allow_unused=True)
        return tuple(got.values()) if isinstance(got, dict) else tuple(got)

    in_dims = tuple(0 if isinstance(g, Tensor) and g.dim() > 0 else None for g in gouts)
    return list(_vmap(one_member, in_dims, 0, allow_none_pass_through=True)(*gouts))


def _member_by_member(grad, outputs, inputs, gouts: tuple, n: int, retain_graph: bool,
                      create_graph: bool) -> list:
    """One backward pass per batch member, stacked (None where unused): for graphs of wrapper
    subclasses, whose own dispatch vmap's batched values would have to pass through."""
    rows = []
    for k in range(n):
        member = tuple(g[k] if isinstance(g, Tensor) else g for g in gouts)
        got = grad(outputs, inputs, member, retain_graph=retain_graph or k < n - 1,
                   create_graph=create_graph, allow_unused=True)
        rows.append(list(got.values()) if isinstance(got, dict) else list(got))
    cols: list[Tensor | None] = []
    for col in zip(*rows):
        if all(g is None for g in col):
            cols.append(None)
            continue
        ref = next(g for g in col if g is not None)
        cols.append(retrograd.stack([retrograd.zeros_like(ref) if g is None else g
                                     for g in col]))
    return cols
