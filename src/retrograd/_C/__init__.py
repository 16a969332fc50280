"""Where torch keeps its compiled internals, retrograd keeps the few names user code reaches for
there when it works with the autograd graph: the node classes (`_C._functions`), the saved-tensor
type (`_C._autograd`), and functions that ask which backward is running and whether a node runs
in it."""

from __future__ import annotations

from retrograd._C import _autograd, _functions  # noqa: F401
from retrograd._autograd.accumulate_grad import AccumulateGrad
from retrograd._autograd.node import Node
from retrograd._autograd.state import state
from retrograd._ops import torch_function as _torch_function  # NOTE [Torch function]
from retrograd._ops.torch_function import DisableTorchFunction, DisableTorchFunctionSubclass

_disabled_torch_function_impl = _torch_function.disabled_torch_function_impl
_is_torch_function_enabled = _torch_function.enabled
_is_torch_function_all_disabled = _torch_function.all_disabled

__all__ = ["_autograd", "_functions", "_set_fwd_grad_enabled", "_is_fwd_grad_enabled",
           "_current_autograd_node", "_current_graph_task_id",
           "_will_engine_execute_node", "has_lapack", "DisableTorchFunction",
           "DisableTorchFunctionSubclass", "_disabled_torch_function_impl",
           "_is_torch_function_enabled", "_is_torch_function_all_disabled",
           "_is_torch_function_mode_enabled", "_len_torch_function_stack"]


def _is_torch_function_mode_enabled() -> bool:
    return bool(_torch_function.mode_stack()) and not _torch_function.all_disabled()


def _len_torch_function_stack() -> int:
    return len(_torch_function.mode_stack())

# the LAPACK-backed ops retrograd has (linalg.qr) run on NumPy's LAPACK, always present
has_lapack = True


def _current_graph_task_id() -> int:
    """An id of the running backward call (-1 outside backward)."""
    task = state.graph_task
    return -1 if task is None else task.id


def _current_autograd_node() -> Node | None:
    """The node backward is running now (None outside backward)."""
    task = state.graph_task
    return None if task is None else task.current_node


def _will_engine_execute_node(node: Node) -> bool:
    """Whether the running backward will execute `node`."""
    if not isinstance(node, Node):
        raise RuntimeError("_will_engine_execute_node expects an grad_fn, but got "
                           f"{type(node).__name__}")
    task = state.graph_task
    if task is None:
        raise RuntimeError("_get_should_execute_nodes should only be called during the backward "
                           "pass")
    if task.captures is not None and isinstance(node, AccumulateGrad):
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are "
                           "currently running autograd.grad(). This is currently not supported.")
    return task.will_execute(node)


def _set_fwd_grad_enabled(mode: bool) -> None:
    """Turn forward-mode AD's tangent propagation on or off (torch's private switch)."""
    from retrograd._ops import forward_ad

    forward_ad._enabled[0] = bool(mode)


def _is_fwd_grad_enabled() -> bool:
    from retrograd._ops import forward_ad

    return forward_ad._enabled[0]


class _WeakTensorRef:
    """A weak reference to a tensor that only tells whether the tensor is gone (as torch's)."""

    __slots__ = ("_ref",)

    def __init__(self, t: object) -> None:
        import weakref

        self._ref = weakref.ref(t)

    def expired(self) -> bool:
        return self._ref() is None
