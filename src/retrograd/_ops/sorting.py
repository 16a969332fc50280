"""Ordering ops: sort, argsort, msort, topk, kthvalue, and isin.

Every order is computed with NumPy's stable sort, which already puts NaN after every number
(torch treats NaN as the largest value). A descending order sorts the reversed row stably and
reverses the result, so equal values keep their original order there too. torch leaves the
order of ties unspecified for topk and kthvalue (and for sort with stable=False); retrograd
always gives the stable one, so its indices may pick another of several equal values than
torch's, never another value. topk and kthvalue on long rows find the k-th value with
np.partition and take the equal values of lowest index, which is that same stable choice.

The derivative of sort, topk and kthvalue places the gradient at the selected indices, as
torch's value_selecting_reduction_backward does, with the reduction helpers' select_scatter
(whose own derivative is a gather, for double backward).
"""

from __future__ import annotations

from retrograd import _dtype as D
from retrograd._ops import reduction_helpers as H
from retrograd._ops.kernels import sorting as K
from retrograd._ops.out_variant import store_outs
from retrograd._ops.overloads import RETURN_TYPES, composite
from retrograd._ops.reduction import return_types
from retrograd._ops.registry import op, register
from retrograd._tensor import Tensor

# sort, topk and kthvalue give retrograd.return_types.<name> (<name>_out when given out=)
RETURN_TYPES.update(sort=return_types.sort, sort_out=return_types.sort_out,
                    topk=return_types.topk, topk_out=return_types.topk_out,
                    kthvalue=return_types.kthvalue, kthvalue_out=return_types.kthvalue_out)


# --- sort, argsort, msort ----------------------------------------------------------------------


def _selected_grad(grad, dim, indices, self_shape):
    return H.select_scatter(grad, dim, indices, self_shape, True)


_sort = op("sort(Tensor self, int dim=-1, bool descending=False) -> "
           "(Tensor values, Tensor indices)", K.sort,
           grads={"self": _selected_grad}, differentiable_outputs=(True, False))
op("sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) "
   "-> (Tensor values, Tensor indices)", K.stable_sort, node="SortBackward1",
   grads={"self": _selected_grad}, differentiable_outputs=(True, False))

_argsort = op("argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) "
              "-> Tensor", K.argsort)


def _argsort_default(input: Tensor, dim: int = -1, descending: bool = False) -> Tensor:
    return _argsort(input, stable=False, dim=dim, descending=descending)


composite("argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor", _argsort_default)


def msort(input: Tensor, *, out=None) -> Tensor:
    """sort along dim 0, values only (a composite of sort, as in torch)."""
    if out is not None:
        return store_outs("msort", lambda: _sort(input, 0, False)[:1], (out,), (input,), 1)[0]
    return _sort(input, 0, False)[0]


register("msort", msort, method=True)


# --- topk, kthvalue ----------------------------------------------------------------------------


op("topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
   "(Tensor values, Tensor indices)", K.topk,
   grads={"self": _selected_grad}, differentiable_outputs=(True, False))


def _kth_grad(grad, dim, indices, self_shape, keepdim):
    return H.select_scatter(grad, dim, indices, self_shape, keepdim)


op("kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> "
   "(Tensor values, Tensor indices)", K.kthvalue,
   grads={"self": _kth_grad}, differentiable_outputs=(True, False))


# --- isin --------------------------------------------------------------------------------------


_isin = op("isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, "
           "bool invert=False) -> Tensor", K.isin, method=False)


def _as_tensor_like(value, other: Tensor) -> Tensor:
    """A number as a 0-d tensor of the two arguments' promoted dtype."""
    from retrograd._ops.creation import tensor

    return tensor(value, dtype=D.result_type(value, other))


def _isin_tensor_scalar(elements: Tensor, test_element, *, assume_unique: bool = False,
                        invert: bool = False, out=None) -> Tensor:
    test = _as_tensor_like(test_element, elements)
    return _isin(elements, test, assume_unique=assume_unique, invert=invert, out=out)


def _isin_scalar_tensor(element, test_elements: Tensor, *, assume_unique: bool = False,
                        invert: bool = False, out=None) -> Tensor:
    e = _as_tensor_like(element, test_elements)
    return _isin(e, test_elements, assume_unique=assume_unique, invert=invert, out=out)


composite("isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, "
          "bool invert=False) -> Tensor", _isin_tensor_scalar, method=False)
composite("isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, "
          "bool invert=False) -> Tensor", _isin_scalar_tensor, method=False)
