"""retrograd.autograd: backward(), grad(), grad modes, Function, gradcheck."""

from __future__ import annotations

import warnings
from retrograd import _warning_site as _ws
from collections.abc import Mapping
from typing import Any

import numpy as np

from retrograd import _errors as E
from retrograd._autograd.accumulate_grad import gradient_edge
from retrograd._autograd.engine import run_backward
from retrograd._autograd.node import Identity
from retrograd._memory_format import preserve_format as _preserve
from retrograd._ops import creation as _creation
from retrograd._ops import dispatch as _dispatch
from retrograd._tensor import Tensor, _is_wrapper, _wrap
from retrograd.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from retrograd.autograd.variable import Variable

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
)


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor) or _is_edge(x):
        return (x,)
    return tuple(x)


def _is_edge(x) -> bool:
    return isinstance(x, _graph.GradientEdge)


def _output_edge(t, i: int) -> tuple:
    if _is_edge(t):
        return (t.node, t.output_nr)
    if not t._requires_grad:
        raise RuntimeError(E.NO_GRAD_FN.format(i))
    return gradient_edge(t)


def _make_grads(outputs: tuple, grads: tuple) -> list:
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if _is_edge(t):
            shape, np_dtype = t.node._output_meta[t.output_nr]
            if np_dtype is None:  # a leaf whose grad_dtype is None: its own dtype
                np_dtype = t.node.variable._data.dtype
            if g is None:
                if any(s != 1 for s in shape):
                    raise RuntimeError(E.NOT_SCALAR)
                if np_dtype.kind not in "fV":
                    raise RuntimeError(E.NOT_FLOAT_IMPLICIT.format(np_dtype))
                out.append(_wrap(np.ones(shape, np_dtype)))
                continue
            if g._data.shape != shape:
                raise RuntimeError(E.GRAD_SHAPE_MISMATCH.format(i, g.shape, i, list(shape)))
            out.append(g)
            continue
        if g is None:
            if t._requires_grad:
                if t._data.size != 1:
                    raise RuntimeError(E.NOT_SCALAR)
                if not t.is_floating_point():
                    raise RuntimeError(E.NOT_FLOAT_IMPLICIT.format(t.dtype))
                if t.__class__ is not Tensor and _is_wrapper(t):
                    from retrograd._ops.subclass import ones_like_wrapper

                    out.append(ones_like_wrapper(t))  # a wrapper subclass makes its own ones
                elif _dispatch.mode_stack:
                    # an op, so a mode (a compiler's tracer) sees where the ones came from
                    out.append(_creation.ones_like(t, memory_format=_preserve))
                else:
                    out.append(_wrap(np.ones_like(t._data, order="K")))
            else:
                out.append(None)
            continue
        if not isinstance(g, Tensor):
            from retrograd._ops.creation import tensor

            g = tensor(g, dtype=t.dtype)
        if g._data.shape != t._data.shape:
            raise RuntimeError(E.GRAD_SHAPE_MISMATCH.format(i, g.shape, i, t.shape))
        if g.dtype.category != t.dtype.category:
            # as in torch, an integer or bool grad_output is taken in the output's dtype (torch
            # refuses only a complex/real mix, and retrograd has no complex dtypes)
            g = g.to(t.dtype)
        out.append(g)
    return out


def _input_edge(t) -> tuple:
    if _is_edge(t):
        return (t.node, t.output_nr)
    if not isinstance(t, Tensor):
        raise TypeError(f"expected Tensor or GradientEdge as inputs, got {type(t).__name__}")
    if not t._requires_grad:
        raise RuntimeError(E.INPUT_NO_GRAD)
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    ref = t._grad_acc
    acc = ref() if ref is not None else None
    # a leaf never used in a graph has no AccumulateGrad: give it a node backward never reaches
    return (acc, 0) if acc is not None else (Identity(), 0)


def _run_logged(outputs, roots, grads, retain_graph, create_graph, input_edges, accumulate):
    """Run the engine; with the graph logger at DEBUG, log every node it executes."""
    graph = _graph
    if not graph._logging_enabled():
        return run_backward(roots, grads, retain_graph, create_graph, input_edges, accumulate)
    unregister = graph.register_logging_hooks_on_whole_graph(list(outputs))
    try:
        return run_backward(roots, grads, retain_graph, create_graph, input_edges, accumulate)
    finally:
        unregister()


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables=None, inputs=None) -> None:
    """Accumulate gradients of `tensors` into the .grad of the leaves (or of `inputs`).

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> torch.autograd.backward((x * x).sum())
    >>> x.grad.tolist()
    [2.0, 4.0]
    >>> y = x * 3  # a non-scalar output needs its gradient
    >>> torch.autograd.backward(y, grad_tensors=torch.ones(2), inputs=[x])
    >>> x.grad.tolist()
    [5.0, 7.0]
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _as_tuple(tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError(E.BACKWARD_EMPTY_INPUTS)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(E.LEN_MISMATCH.format(len(outputs), len(grads)))
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_output_edge(t, i) for i, t in enumerate(outputs)]
    grads = _make_grads(outputs, grads)
    if create_graph:
        _ws.warn(CREATE_GRAPH_WARNING, UserWarning, stacklevel=3)
    input_edges = None
    if inputs is not None:
        input_edges = []
        for t in inputs:
            if isinstance(t, Tensor) and t._requires_grad and t.grad_fn is not None:
                t.retain_grad()
            input_edges.append(_input_edge(t))
    _run_logged(outputs, roots, grads, retain_graph, create_graph, input_edges, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """Gradients of `outputs` with respect to `inputs`, returned (nothing is accumulated).

    >>> import retrograd as torch
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> (g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    >>> g.tolist()
    [3.0, 12.0]
    >>> torch.autograd.grad(g.sum(), x)[0].tolist()  # second derivative: 6x
    [6.0, 12.0]
    >>> x.grad is None
    True
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if is_grads_batched:
        from retrograd.autograd._batched_grad import batched_grad

        return batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                            allow_unused, materialize_grads)
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _as_tuple(outputs)
    names = None
    if type(inputs) is dict:
        names = tuple(inputs)
        inputs = tuple(inputs.values())
    elif isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `grad()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError(E.OUTPUTS_INPUTS_EMPTY)
    if not only_inputs:
        _ws.warn("only_inputs argument is deprecated and is ignored now (defaults to True). "
                 "To accumulate gradient for other parts of the graph, please use "
                 "torch.autograd.backward.", FutureWarning, stacklevel=2)
    gouts = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outs)
    if len(gouts) != len(outs):
        raise RuntimeError(E.LEN_MISMATCH.format(len(outs), len(gouts)))
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_output_edge(t, i) for i, t in enumerate(outs)]
    grads = _make_grads(outs, gouts)
    result = _run_logged(outs, roots, grads, retain_graph, create_graph,
                         [_input_edge(t) for t in ins], False)
    if materialize_grads and any(g is None and not isinstance(t, Tensor)
                                 for t, g in zip(ins, result)):
        raise RuntimeError("materialize_grads cannot be used when the given input is a "
                           "GradientEdge")
    final = []
    for i, (t, g) in enumerate(zip(ins, result)):
        if g is None:
            if materialize_grads:
                from retrograd._ops.creation import zeros_like

                # as in torch: a zero that takes part in further differentiation
                g = zeros_like(t, requires_grad=create_graph)
            elif not allow_unused:
                raise RuntimeError(E.UNUSED_INPUT.format(i))
        final.append(g)
    if names is not None:
        return dict(zip(names, final))
    return tuple(final)


def __getattr__(name: str) -> Any:
    # heavier parts load on first use, keeping `import retrograd` light and acyclic
    if name in ("Function", "once_differentiable", "FunctionCtx"):
        from retrograd.autograd import function

        return getattr(function, name)
    if name in ("graph", "functional", "forward_ad", "anomaly_mode", "function", "profiler",
                "profiler_util", "_functions"):
        import importlib

        return importlib.import_module(f"retrograd.autograd.{name}")
    if name == "DeviceType":
        from retrograd.autograd import profiler_util

        return profiler_util.DeviceType
    if name in ("kineto_available", "_profiler_enabled"):
        from retrograd.autograd import profiler

        return getattr(profiler, name)
    if name in ("_force_original_view_tracking", "is_view_replay_enabled"):
        from retrograd.autograd import view_tracking

        return getattr(view_tracking, name)
    if name == "SavedTensor":
        from retrograd._autograd.saved import SavedTensor

        return SavedTensor
    if name in ("detect_anomaly", "set_detect_anomaly"):
        from retrograd.autograd import anomaly_mode

        return getattr(anomaly_mode, name)
    if name == "torch":
        # torch.autograd.torch is torch itself (autograd imports it); some programs reach it so
        import retrograd

        return retrograd
    raise AttributeError(f"module 'retrograd.autograd' has no attribute '{name}'")


# the functions shadow their module's name, as in torch
from retrograd.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402

# bound last: graph imports this package; its names are read only when gradients are asked for
from retrograd.autograd import graph as _graph  # noqa: E402

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "backward", "grad", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "Variable",
           "set_multithreading_enabled", "is_multithreading_enabled",
           "inference_mode", "is_inference_mode_enabled"]
