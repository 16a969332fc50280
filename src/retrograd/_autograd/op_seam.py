"""The one door from the layers below the ops (Tensor, the autograd core) to the ops.

The engine sums broadcast gradients back to their shape, CopySlices builds and replays nodes
and copies into strided buffers, Tensor.type() parses dtype names as .to() does: a handful of
ops, reached as `op_seam.sum_to(...)` with `from retrograd._autograd import op_seam` at the top
of the module. The ops import Tensor and the autograd core, so this module imports them only
when a name is first read (module __getattr__), then keeps the function as a plain module
attribute: later reads cost a dict lookup, no import statement. tests/test_layers.py lists this
module as the one upward edge into `retrograd._ops` from below.
"""

from __future__ import annotations

from typing import Any

# name here -> (module in retrograd._ops, name there)
_WHERE = {
    "copy_into_new": ("copy", "copy_into_new"),
    "strided_like": ("copy", "strided_like"),
    "buffer_strided": ("copy", "buffer_strided"),
    "dtype_arg": ("copy", "_dtype_arg"),
    "build_node": ("registry", "_build_node"),
    "run": ("registry", "run"),
    "sum_to": ("reduction_helpers", "sum_to"),
    "broadcast_error": ("layout", "broadcast_error"),
    "c_name": ("metadata_inplace", "_c_name"),
    "to_numpy_array": ("creation", "to_numpy_array"),
    "empty_strided_array": ("creation", "empty_strided_array"),
    "mode_stack": ("dispatch", "mode_stack"),
    "shallow_copy": ("subclass", "shallow_copy"),
    "detach_wrapper": ("subclass", "detach_wrapper"),
    "item_wrapper": ("subclass", "item_wrapper"),
    "forward_ad_levels": ("forward_ad", "levels"),
    "drop_tangents": ("forward_ad", "drop_tangents"),
    "data_dependent": ("dispatch", "data_dependent"),
}


def _module(name: str) -> Any:
    # spelled out, so the import graph (tests/test_layers.py) sees each edge
    if name == "copy":
        from retrograd._ops import copy
        return copy
    if name == "registry":
        from retrograd._ops import registry
        return registry
    if name == "reduction_helpers":
        from retrograd._ops import reduction_helpers
        return reduction_helpers
    if name == "layout":
        from retrograd._ops import layout
        return layout
    if name == "forward_ad":
        from retrograd._ops import forward_ad
        return forward_ad
    if name == "subclass":
        from retrograd._ops import subclass
        return subclass
    if name == "dispatch":
        from retrograd._ops import dispatch
        return dispatch
    if name == "metadata_inplace":
        from retrograd._ops import metadata_inplace
        return metadata_inplace
    from retrograd._ops import creation
    return creation


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_module(where[0]), where[1])
    globals()[name] = value
    return value
