"""Which batched gradient checks torch's OpInfos leave off, for the ops the samples call.

The generated op tests (tests/test_ops_generated.py) run gradcheck with check_batched_grad,
check_forward_ad and check_batched_forward_grad for every sample, as torch's
test_ops_gradients does for its OpInfos, except where torch's OpInfo of the same name (its
first variant) switches the check off: those names are listed here. The lists were read from
torch 2.13's `torch.testing._internal.common_methods_invocations.op_db` (OpInfo fields
check_batched_grad, supports_forward_ad and check_batched_forward_grad).
"""

from __future__ import annotations

# check_batched_grad=False
NO_BATCHED_GRAD = frozenset({
    "take",
    "unique",
    "unique_consecutive",
})

# supports_forward_ad=False (so no forward-mode checks at all)
NO_FORWARD_AD = frozenset({
    "index_reduce",
    "nn.functional.one_hot",
    "nn.functional.pdist",
    "nn.functional.scaled_dot_product_attention",
    "segment_reduce",
    "unique",
    "unique_consecutive",
})

# supports_forward_ad=True, check_batched_forward_grad=False
NO_BATCHED_FORWARD_GRAD = frozenset({
    "amax",
    "amin",
    "atleast_2d",
    "atleast_3d",
    "cat",
    "concat",
    "concatenate",
    "diag",
    "diagflat",
    "dstack",
    "einsum",
    "flatten",
    "ger",
    "index_add",
    "index_put",
    "masked_fill",
    "matmul",
    "moveaxis",
    "movedim",
    "nansum",
    "nn.functional.alpha_dropout",
    "nn.functional.dropout",
    "nn.functional.linear",
    "nn.functional.max_pool1d",
    "nn.functional.max_pool2d",
    "norm",
    "outer",
    "ravel",
    "squeeze",
    "std",
    "std_mean",
    "t",
    "take_along_dim",
    "tensordot",
    "unfold",
    "unsafe_split",
    "unsqueeze",
    "var",
    "var_mean",
})
