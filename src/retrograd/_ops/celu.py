"""celu: elu with alpha scaling the input too, max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

torch gives it nodes of its own (CeluBackward0, CeluBackward1 for celu_) with elu's formulas at
scale 1 and input_scale 1 / alpha; retrograd reuses elu's kernel and formulas the same way.
"""

from __future__ import annotations

from retrograd._ops.activation import _elu_grad, _elu_result_grad
from retrograd._ops.kernels.activation import _elu, _float_only
from retrograd._ops.layout import inplace_forward, label_entry_points
from retrograd._ops.registry import op, register_functional
from retrograd._tensor import Tensor

_CELU_ZERO_ALPHA = "ZeroDivisionError: alpha cannot be 0 for CELU"


def _celu_kernel(a, alpha):
    return _elu(a, alpha, 1.0, 1.0 / alpha)


_elu_cpu = _float_only("elu_cpu", _celu_kernel)


def _celu_forward(a, alpha):
    if alpha == 0:  # checked before the dtype, as torch does
        raise RuntimeError(_CELU_ZERO_ALPHA)
    return _elu_cpu(a, alpha)

celu = op("celu(Tensor self, Scalar alpha=1.0) -> Tensor", _celu_forward,
          grads={"self": lambda grad, self, alpha: _elu_grad(grad, self, alpha, 1.0,
                                                             1.0 / alpha)},
          method=False)

celu_ = op("celu_(Tensor(a!) self, Scalar alpha=1.0) -> Tensor(a!)",
           inplace_forward(_celu_forward), node="CeluBackward1",
           grads={"self": lambda grad, result, alpha: _elu_result_grad(grad, result, alpha, 1.0,
                                                                       1.0 / alpha)},
           method=False)


def _f_celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return celu_(input, alpha) if inplace else celu(input, alpha)


def _f_celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu_(input, alpha)


register_functional("celu", _f_celu)
register_functional("celu_", _f_celu_)
label_entry_points([celu, celu_])
