"""The op library. Importing it declares every op and installs Tensor methods and operators."""

from retrograd._ops import registry
from retrograd._ops import torch_function
from retrograd._ops import random
from retrograd._ops import pointwise, activation, comparison, reduction, shape, indexing
from retrograd._ops import linalg, conv, pooling, normalization, loss, dropout, embedding, padding
from retrograd._ops import attention, copy, creation, distance
from retrograd._ops import sorting, diagonals, scatter_reduce, index_reduce, bucketize, unique
from retrograd._ops import special_digamma, special_gamma
from retrograd._ops import linalg_inverse, linalg_decompositions, linalg_lu, linalg_norms, linalg_products, linalg_cholesky_solve  # noqa: E501
from retrograd._ops import trigonometric, special_math, pointwise_math
from retrograd._ops import shrink, celu, prelu, rrelu, activation_composites
from retrograd._ops import pooling3d, adaptive_max_pool, lp_pool
from retrograd._ops import margin_losses, max_unpool, channel_shuffle, local_response_norm, ctc
from retrograd._ops import conv_tbc, rnn_layer
from retrograd._ops import fractional_max_pool, multi_head_attention
from retrograd._ops import gumbel_softmax, embedding_bag, grid_sample
from retrograd._ops import scans, statistics, histograms, cdist, renorm, weight_norm, householder
from retrograd._ops import histogramdd
from retrograd._ops import windows, im2col, upsample, pixel_shuffle, broadcasting
from retrograd._ops import slice_inverse, view_func, subclass, tangent_meta
from retrograd._ops import operators
from retrograd._ops import metadata_inplace, memory_methods
from retrograd._ops import foreach
from retrograd._ops import nonzero, combinations, differences, rotations, products, splits
from retrograd._ops import repeat_interleave, index_fill, masked_scatter, matrix_builders
from retrograd._ops import scatter_views, tensor_extras
from retrograd._ops import real_views, tensor_protocols, legacy_linalg, triangular_solve
from retrograd._ops import dtype_views
from retrograd._ops import spectral_windows, view_copies, scalar_overloads, numeric_composites
from retrograd._ops import inplace_functions, finite_differences, random_counts
from retrograd._ops import forward_ad_fast
from retrograd._ops import segment_reduce
from retrograd._ops import external_memory, dense_layout_methods

torch_function.install()  # before any module defines a Tensor subclass
operators.install()
forward_ad_fast.install()
registry.install_methods()

# torch.special's names for some of the ops, as retrograd.special (a module of the ops layer)
from retrograd import special  # noqa: E402
