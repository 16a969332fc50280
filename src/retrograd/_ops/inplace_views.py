"""In-place view ops: transpose_, t_, swapdims_, swapaxes_, squeeze_, unsqueeze_.

They change a tensor's shape and strides, not its values: the tensor keeps its memory and its
version counter, the version is bumped as for any in-place op (views made of it before see the
change, NOTE [View creation meta]), and with grad its history gets one more node under torch's
name for the in-place form (TransposeBackward1, ...). A view keeps its base: the op is added to
its replay chain.
"""

from __future__ import annotations

from retrograd._autograd.state import state
from retrograd._autograd.tensor_hooks import move_retains_grad
from retrograd._ops import shape as S
from retrograd._ops.inplace import bump_version, check_inplace
from retrograd._ops.registry import op, register_method
from retrograd._tensor import Tensor


def _reshaped(grad, self_shape):
    return grad.reshape(self_shape)


# the nodes: ops outside the namespace whose forwards are the view ops' forwards
_transpose_node = op("_transpose_inplace(Tensor self, int dim0, int dim1) -> Tensor",
                     S._transpose_forward, node="TransposeBackward1",
                     grads={"self": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)},
                     function=False, method=False)
_t_node = op("_t_inplace(Tensor self) -> Tensor", S._t_forward, node="TBackward1",
             grads={"self": lambda grad: grad.t()}, function=False, method=False)
_squeeze_node = op("_squeeze_inplace(Tensor self) -> Tensor", S._squeeze.opdef.forward,
                   node="SqueezeBackward3", grads={"self": _reshaped},
                   function=False, method=False)
_squeeze_dim_node = op("_squeeze_inplace.dim(Tensor self, int dim) -> Tensor",
                       S._squeeze_dim.opdef.forward, node="SqueezeBackward4",
                       grads={"self": _reshaped}, function=False, method=False)
_squeeze_dims_node = op("_squeeze_inplace.dims(Tensor self, int[] dim) -> Tensor",
                        S._squeeze_dims.opdef.forward, node="SqueezeBackward5",
                        grads={"self": _reshaped}, function=False, method=False)
_unsqueeze_node = op("_unsqueeze_inplace(Tensor self, int dim) -> Tensor",
                     S.unsqueeze.opdef.forward, node="UnsqueezeBackward1",
                     grads={"self": _reshaped}, function=False, method=False)


def _apply(self: Tensor, node_op, view_op, args: tuple, name: str) -> Tensor:
    check_inplace(self, False)
    if state.grad_enabled and self._requires_grad:
        out = node_op(self, *args)
        fn = out._grad_fn
    else:
        out = node_op.opdef.forward(self._data, *args)
        fn = None
    data = out._data if isinstance(out, Tensor) else out
    info = self._view
    if info is not None:
        info.replay = info.replay + ((view_op.opdef, args),)
    self._data = data
    bump_version(self, name, 3)
    if fn is not None:
        move_retains_grad(self, self._grad_fn, fn)
        self._grad_fn = fn
        self._output_nr = 0
        if info is not None:  # the new node already reads from the view's history
            info.version = self._version_counter.version
    return self


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return _apply(self, _transpose_node, S.transpose, (dim0, dim1), "transpose_")


def t_(self: Tensor) -> Tensor:
    return _apply(self, _t_node, S.t, (), "t_")


def squeeze_(self: Tensor, dim=None) -> Tensor:
    if dim is None:
        return _apply(self, _squeeze_node, S._squeeze, (), "squeeze_")
    if isinstance(dim, (list, tuple)):
        return _apply(self, _squeeze_dims_node, S._squeeze_dims, (dim,), "squeeze_")
    return _apply(self, _squeeze_dim_node, S._squeeze_dim, (dim,), "squeeze_")


def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    return _apply(self, _unsqueeze_node, S.unsqueeze, (dim,), "unsqueeze_")


for _name, _fn in (("transpose_", transpose_), ("swapdims_", transpose_),
                   ("swapaxes_", transpose_), ("t_", t_), ("squeeze_", squeeze_),
                   ("unsqueeze_", unsqueeze_)):
    register_method(_name, _fn)
