"""aten._new_zeros_with_same_feature_meta against torch: sizes, strides, storage offset and
storage size of the result, for contiguous, permuted and offset targets and batch dims."""

import pytest
import torch

import retrograd


def _cases(lib):
    return [
        (lib.randn(5, dtype=lib.float32), lib.randn(2, 3, 4, dtype=lib.float64)),
        (lib.randn(2, 3, 4).transpose(0, 1).contiguous().transpose(0, 1), lib.randn(2, 3, 4)),
        (lib.randn(5).narrow(0, 1, 2), lib.randn(2)),
    ]


def _meta(r):
    return (tuple(r.shape), tuple(r.stride()), r.storage_offset(), r.untyped_storage().nbytes(),
            r.is_contiguous(), str(r.dtype).split(".")[-1], bool((r == 0).all()))


@pytest.mark.parametrize("case", range(3))
@pytest.mark.parametrize("swap", [False, True])
def test_same_layout_as_torch(case, swap):
    got, want = [], []
    for lib, out in ((retrograd, got), (torch, want)):
        lib.manual_seed(0)
        a, b = _cases(lib)[case]
        if swap:
            a, b = b, a
        fn = lib.ops.aten._new_zeros_with_same_feature_meta
        for nb in range(a.dim()):
            out.append(_meta(fn(a, b, self_num_batch_dims=nb)))
    assert got == want
