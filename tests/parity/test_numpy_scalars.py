"""NumPy scalars in tensor expressions keep torch's dtypes (NumPy 2 would upcast; NEP 50)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import both

SCALARS = [np.float64(0.5), np.float32(0.5), np.int64(3), np.float16(2.0)]


@pytest.mark.parametrize("scalar", SCALARS, ids=lambda s: type(s).__name__)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
def test_tensor_op_numpy_scalar(dtype, scalar):
    def prog(lib):
        x = lib.ones(3, dtype=getattr(lib, dtype))
        return [(x * scalar).dtype, (x + scalar).dtype, (scalar * x).dtype, (x - scalar).dtype,
                (x / scalar).dtype, lib.maximum(x, lib.tensor(1, dtype=x.dtype)).dtype]

    both(prog)


def test_scaled_attention_scores_stay_float32():
    def prog(lib):
        q = lib.ones(2, 4, 8)
        att = (q @ q.transpose(-2, -1)) * (1.0 / np.sqrt(8))
        return att.dtype, (lib.nn.functional.softmax(att, dim=-1) @ q).dtype

    both(prog)
