"""`aten._new_zeros_with_same_feature_meta`: a zero tensor laid out like another one.

Forward-mode AD needs a tangent that matches its primal's layout exactly (sizes, strides,
storage offset and storage size), possibly with batch dimensions in front (vmap over tangents).
The result's storage holds one copy of `other`'s whole storage per batch element; batch strides
step over those copies, feature strides are `other`'s own.
"""

from __future__ import annotations

from retrograd._ops import dispatch
from retrograd._ops.subclass import MethodOverload
from retrograd._tensor import Tensor
from retrograd.storage import storage_nbytes


def storage_numel(t: Tensor) -> int:
    """How many elements t's storage holds (a view's storage is its base's)."""
    if type(t).untyped_storage is not Tensor.untyped_storage:  # a subclass answers itself
        return t.untyped_storage().nbytes() // t.element_size()
    return storage_nbytes(t) // t._data.itemsize


def new_zeros_with_same_feature_meta(self: Tensor, other: Tensor, *,
                                     self_num_batch_dims: int = 0) -> Tensor:
    """Zeros with the leading `self_num_batch_dims` sizes of `self` and the sizes, strides and
    storage offset of `other` after them, over a storage of (other's storage size) times the
    batch size elements, in `other`'s dtype."""
    import retrograd

    batch_sizes = list(self.shape[:self_num_batch_dims])
    batch_strides = [0] * self_num_batch_dims
    total = storage_numel(other)
    for i in range(self_num_batch_dims - 1, -1, -1):
        batch_strides[i] = total
        total *= batch_sizes[i]
    zeros = retrograd.zeros(total, dtype=other.dtype)
    return zeros.as_strided(batch_sizes + list(other.shape),
                            batch_strides + list(other.stride()), other.storage_offset())


dispatch.method_overloads["_new_zeros_with_same_feature_meta"] = {"default": MethodOverload(
    "_new_zeros_with_same_feature_meta(Tensor self, Tensor other, *, int self_num_batch_dims=0) "
    "-> Tensor", new_zeros_with_same_feature_meta)}
