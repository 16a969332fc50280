"""The op library. Importing it declares every op and installs Tensor methods and operators."""

from retrograd._ops import registry
from retrograd._ops import random
from retrograd._ops import pointwise, activation, comparison, reduction, shape, indexing
from retrograd._ops import linalg, conv, pooling, normalization, loss, dropout, embedding, padding
from retrograd._ops import attention, copy, creation, distance
from retrograd._ops import sorting, diagonals, scatter_reduce, index_reduce, bucketize, unique
from retrograd._ops import special_digamma, special_gamma
from retrograd._ops import windows, im2col, upsample, pixel_shuffle, broadcasting
from retrograd._ops import slice_inverse, view_func, subclass, tangent_meta
from retrograd._ops import operators
from retrograd._ops import metadata_inplace, memory_methods
from retrograd._ops import foreach
from retrograd._ops import forward_ad_fast

operators.install()
forward_ad_fast.install()
registry.install_methods()

# torch.special's names for some of the ops, as retrograd.special (a module of the ops layer)
from retrograd import special  # noqa: E402
