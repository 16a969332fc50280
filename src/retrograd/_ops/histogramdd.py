"""histogramdd: torch's three overloads (a bin count for every dimension, a bin count for each,
or the edges of each) and the ops they call, _histogramdd_bin_edges,
_histogramdd_from_bin_cts and _histogramdd_from_bin_tensors.

None has a derivative in torch: each records torch's NotImplemented node when a float argument
requires grad (backward through it raises). Evenly spaced edges are torch's linspace in the
input's dtype. The NumPy kernels are in kernels/histogramdd.py.
"""

from __future__ import annotations

from retrograd import _config
from retrograd import _dtype as D
from retrograd._ops.creation import _linspace_values
from retrograd._ops.histograms import _no_forward_ad
from retrograd._ops.kernels import histogramdd as K
from retrograd._ops.overloads import BIND_EACH, RETURN_TYPES, composite
from retrograd._ops.pointwise import _no_derivative, _not_implemented_node
from retrograd._ops.reduction import _return_type, return_types
from retrograd._ops.registry import op

return_types.histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))
RETURN_TYPES.update(histogramdd=return_types.histogramdd)


def _edges_forward(a, bins, range, weight, density) -> list:
    K.check_points(a)
    lows, highs = K.outer_edges(a, range)
    edges = []
    for low, high, count in zip(lows, highs, bins):
        if count + 1 < 0:
            raise RuntimeError("number of steps must be non-negative")
        edges.append(_linspace_values(low, high, count + 1, D.from_numpy_dtype(a.dtype))
                     .astype(a.dtype))
    return edges


def _from_bin_cts_forward(a, bins, range, weight, density):
    edges = _edges_forward(a, bins, range, weight, density)
    K.check_operands(a, edges, weight)
    return K.histogramdd(a, edges, weight, density, False, _config.get_num_threads())


def _from_bin_tensors_forward(a, bins, weight, density):
    K.check_operands(a, list(bins), weight)
    return K.histogramdd(a, list(bins), weight, density, True, _config.get_num_threads())


_histogramdd_bin_edges = _not_implemented_node(op(
    "_histogramdd_bin_edges(Tensor self, int[] bins, *, float[]? range=None, "
    "Tensor? weight=None, bool density=False) -> Tensor[]", _edges_forward,
    grads={"self, weight": _no_derivative("_histogramdd_bin_edges")},
    jvp=_no_forward_ad("_histogramdd_bin_edges"), method=False))
_histogramdd_from_bin_cts = _not_implemented_node(op(
    "_histogramdd_from_bin_cts(Tensor self, int[] bins, *, float[]? range=None, "
    "Tensor? weight=None, bool density=False) -> Tensor", _from_bin_cts_forward,
    grads={"self, weight": _no_derivative("_histogramdd_from_bin_cts")},
    jvp=_no_forward_ad("_histogramdd_from_bin_cts"), method=False))
_histogramdd_from_bin_tensors = _not_implemented_node(op(
    "_histogramdd_from_bin_tensors(Tensor self, Tensor[] bins, *, Tensor? weight=None, "
    "bool density=False) -> Tensor", _from_bin_tensors_forward,
    grads={"self, bins, weight": _no_derivative("_histogramdd_from_bin_tensors")},
    jvp=_no_forward_ad("_histogramdd_from_bin_tensors"), method=False))


def _counts_each(self, bins, range=None, weight=None, density=False) -> tuple:
    K.check_points(self._data)
    K.check_bin_count_length(self._data, bins)
    edges = _histogramdd_bin_edges(self, bins, range=range, weight=weight, density=density)
    hist = _histogramdd_from_bin_cts(self, bins, range=range, weight=weight, density=density)
    return return_types.histogramdd((hist, tuple(edges)))


def _count_all(self, bins, range=None, weight=None, density=False) -> tuple:
    if self.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    return _counts_each(self, [bins] * self.shape[-1], range, weight, density)


def _edges_each(self, bins, range=None, weight=None, density=False) -> tuple:
    # torch's edge overload takes range and ignores it; its edges are the given tensors
    hist = _histogramdd_from_bin_tensors(self, list(bins), weight=weight, density=density)
    return return_types.histogramdd((hist, tuple(bins)))


_RETURNS = "-> (Tensor hist, Tensor[] bin_edges)"
composite("histogramdd(Tensor self, int[] bins, float[]? range=None, Tensor? weight=None, "
          f"bool density=False) {_RETURNS}", _counts_each, method=False)
composite("histogramdd.int_bins(Tensor self, int bins, float[]? range=None, Tensor? weight=None, "
          f"bool density=False) {_RETURNS}", _count_all, method=False)
composite("histogramdd.TensorList_bins(Tensor self, Tensor[] bins, float[]? range=None, "
          f"Tensor? weight=None, bool density=False) {_RETURNS}", _edges_each, method=False)
# torch's parser checks every argument of each overload (a float or a Tensor is no bins); this
# dispatcher returns what the overload gives, so the composites make the named tuple
BIND_EACH.add("histogramdd")
