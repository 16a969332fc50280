"""The *_copy functions: each view op's result as a new contiguous tensor (torch's functional
variants of the views), differentiated by the view's own formula under torch's node name with
a "_copy" suffix (PermuteBackward0_copy, ...)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from retrograd._ops import shape as _shape  # declares the views copied here
from retrograd._ops import windows as _windows  # noqa: F401
from retrograd._ops.histograms import _no_forward_ad
from retrograd._ops.layout import c_layout
from retrograd._ops.overloads import overloaded
from retrograd._ops.pointwise import _no_derivative, _not_implemented_node
from retrograd._ops.registry import OPS, op, register
from retrograd._tensor import Tensor


def _fresh(a: np.ndarray) -> np.ndarray:
    return c_layout(np.array(a, copy=True))


def _copy_forward(view_forward: Callable, multi: bool) -> Callable:
    if multi:
        return lambda *args: [_fresh(a) for a in view_forward(*args)]
    return lambda *args: _fresh(view_forward(*args))


def _declare(view: str, schema: str, node: str, function: bool = True) -> Callable:
    src = OPS[view]
    tensors = [src.arg_names[i] for i in src.tensor_idx]
    grads = {", ".join(tensors[j] for j in f.inputs): f.fn for f in src.formulas}
    return op(schema, _copy_forward(src.forward, src.multi), grads=grads, node=node,
              method=False, function=function)


_declare("view", "view_copy(Tensor self, SymInt[] size) -> Tensor", "ViewBackward0_copy")
_declare("permute", "permute_copy(Tensor self, int[] dims) -> Tensor", "PermuteBackward0_copy")
_declare("transpose.int", "transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor",
         "TransposeBackward0_copy")
_declare("t", "t_copy(Tensor self) -> Tensor", "TBackward0_copy")
_declare("expand", "expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor",
         "ExpandBackward0_copy")
_declare("select.int", "select_copy.int(Tensor self, int dim, SymInt index) -> Tensor",
         "SelectBackward0_copy")
_declare("slice.Tensor", "slice_copy.Tensor(Tensor self, int dim=0, SymInt? start=None, "
         "SymInt? end=None, SymInt step=1) -> Tensor", "SliceBackward0_copy")
_declare("squeeze", "squeeze_copy(Tensor self) -> Tensor", "SqueezeBackward0_copy")
_declare("squeeze.dim", "squeeze_copy.dim(Tensor self, int dim) -> Tensor",
         "SqueezeBackward1_copy")
_declare("squeeze.dims", "squeeze_copy.dims(Tensor self, int[] dim) -> Tensor",
         "SqueezeBackward2_copy")
_declare("unsqueeze", "unsqueeze_copy(Tensor self, int dim) -> Tensor",
         "UnsqueezeBackward0_copy")
_declare("unbind.int", "unbind_copy.int(Tensor self, int dim=0) -> Tensor[]",
         "UnbindBackward0_copy")
_declare("split.Tensor", "split_copy.Tensor(Tensor self, SymInt split_size, int dim=0) -> "
         "Tensor[]", "SplitBackward0_copy")
_declare("split_with_sizes", "split_with_sizes_copy(Tensor self, SymInt[] split_sizes, "
         "int dim=0) -> Tensor[]", "SplitWithSizesBackward0_copy")
_declare("unfold", "unfold_copy(Tensor self, int dimension, int size, int step) -> Tensor",
         "UnfoldBackward0_copy")
_declare("alias", "alias_copy(Tensor self) -> Tensor", "AliasBackward0_copy")

_as_strided_rel_copy = _declare(
    "_as_strided_rel", "_as_strided_rel_copy(Tensor self, int[] size, int[] stride, int delta, "
    "int? storage_offset=None) -> Tensor", "AsStridedBackward0_copy", function=False)


def as_strided_copy(input: Tensor, size, stride, storage_offset: int | None = None, *,
                    out: Tensor | None = None) -> Tensor:
    """torch.as_strided_copy: as_strided's view as a new contiguous tensor."""
    size, stride, delta = _shape.as_strided_geometry(input, size, stride, storage_offset)
    if out is not None:
        from retrograd._ops.out_variant import run_with_out

        return run_with_out(OPS["_as_strided_rel_copy"],
                            (input, size, stride, delta, storage_offset), out)
    return _as_strided_rel_copy(input, size, stride, delta, storage_offset)


register("as_strided_copy", as_strided_copy)

# torch differentiates detach_copy by a node that refuses (torch::autograd::NotImplemented):
# the result requires grad when the input does, and backward through it raises
detach_copy = _not_implemented_node(op(
    "detach_copy(Tensor self) -> Tensor", _fresh,
    grads={"self": _no_derivative("detach_copy")}, jvp=_no_forward_ad("detach_copy"),
    method=False))

squeeze_copy = overloaded("squeeze_copy")
register("squeeze_copy", squeeze_copy)
