"""Counting ops: bincount, histc and histogram.

None of them has a derivative in torch. bincount and histogram record torch's NotImplemented
node when a float argument requires grad (backward through it raises); histc's result never
requires grad. histc's and histogram's evenly spaced edges are torch's linspace in the input's
dtype, so bins agree with torch's at their edges too. The NumPy kernels are in
kernels/histograms.py.
"""

from __future__ import annotations

import numpy as np

from retrograd import _dtype as D
from retrograd._ops.creation import _linspace_values
from retrograd._ops.kernels import histograms as K
from retrograd._ops.overloads import RETURN_TYPES
from retrograd._ops.pointwise import _no_derivative, _not_implemented_node
from retrograd._ops.reduction import _return_type, return_types
from retrograd._ops.registry import op

return_types.histogram = _return_type("histogram", ("hist", "bin_edges"))
return_types.histogram_out = _return_type("histogram_out", ("hist", "bin_edges"))
RETURN_TYPES.update(histogram=return_types.histogram, histogram_out=return_types.histogram_out)


def _no_forward_ad(name: str):
    """A forward derivative that refuses, in torch's words (its ops without a derivative
    refuse tangents too)."""
    def jvp():
        raise NotImplementedError(
            f"Trying to use forward AD with aten::{name} that does not support it.")

    return jvp


bincount = _not_implemented_node(op(
    "bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor", K.bincount,
    grads={"weights": _no_derivative("bincount")}, jvp=_no_forward_ad("bincount")))


def _even_edges(a: np.ndarray, low: float, high: float, bins: int) -> np.ndarray:
    return _linspace_values(low, high, bins + 1, D.from_numpy_dtype(a.dtype)).astype(a.dtype)


def _histc_forward(a: np.ndarray, bins: int, min, max) -> np.ndarray:
    K.check_float_input(a, "histogram_cpu")
    K.check_bins(bins)
    low, high = K.histc_range(a, float(min), float(max))
    return K.bin_counts(a, None, _even_edges(a, low, high, bins), False, "linear")


# its result never requires grad, and takes no tangent (a zero one, as torch's)
histc = op("histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor",
           _histc_forward, differentiable_outputs=(False,))


def _histogram_edges_forward(a, bins, weight, density) -> tuple:
    K.check_float_input(a, "histogram_cpu")
    K.check_edges(a, bins)
    K.check_histogram_operands(a, weight)
    return K.bin_counts(a, weight, bins, density, "search"), bins.copy()


def _histogram_count_forward(a, bins, range, weight, density) -> tuple:
    K.check_float_input(a, "histogramdd")
    K.check_bins(bins)
    low, high = K.histogram_range(a, range)
    K.check_histogram_operands(a, weight)
    edges = _even_edges(a, low, high, bins)
    return K.bin_counts(a, weight, edges, density, "checked"), edges


_not_implemented_node(op(
    "histogram.bins_tensor(Tensor self, Tensor bins, *, Tensor? weight=None, "
    "bool density=False) -> (Tensor hist, Tensor bin_edges)", _histogram_edges_forward,
    grads={"self, bins, weight": _no_derivative("histogram")}, jvp=_no_forward_ad("histogram")))
_not_implemented_node(op(
    "histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None, "
    "bool density=False) -> (Tensor hist, Tensor bin_edges)", _histogram_count_forward,
    grads={"self, weight": _no_derivative("histogram")}, jvp=_no_forward_ad("histogram")))
