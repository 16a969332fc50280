"""Tensor.view(dtype) against torch: shapes, strides, storage offsets and values of the
reinterpreted memory, torch's refusals in its order, and its autograd facts (shared version
counter, no grad, no autograd view)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

# (source builder over lib, target dtype name)
CASES = {
    "float_as_int_same_size": (lambda L: L.tensor([[1.5, -2.0], [0.25, 8.0]]), "int32"),
    "float_as_bytes": (lambda L: L.tensor([[1.5, -2.0], [0.25, 8.0]]), "uint8"),
    "float_as_half_pairs": (lambda L: L.tensor([[1.5, -2.0], [0.25, 8.0]]), "float16"),
    "float_as_bfloat16": (lambda L: L.tensor([1.0, 3.0]), "bfloat16"),
    "float_as_double": (lambda L: L.tensor([[1.5, -2.0], [0.25, 8.0]]), "float64"),
    "bytes_as_float": (lambda L: L.arange(16, dtype=L.uint8).reshape(2, 8), "float32"),
    "bytes_as_int16_sliced": (lambda L: L.arange(16, dtype=L.uint8).reshape(4, 4)[1:, 2:],
                              "int16"),
    "int64_as_int32_offset": (lambda L: L.arange(10)[3:7], "int32"),
    "int32_as_int64_even_offset": (lambda L: L.arange(12, dtype=L.int32)[2:10], "int64"),
    "transposed_same_size": (lambda L: L.arange(6, dtype=L.int32).reshape(2, 3).t(), "float32"),
    "column_of_transposed": (lambda L: L.zeros(3, 1).t(), "uint8"),
    "strided_rows_upsized": (lambda L: L.arange(32, dtype=L.uint8).reshape(4, 8)[::2], "int32"),
    "scalar_same_size": (lambda L: L.tensor(1.0), "int32"),
    "bool_as_uint8": (lambda L: L.tensor([True, False, True]), "uint8"),
    "uint8_as_bool": (lambda L: L.tensor([0, 1, 1], dtype=L.uint8), "bool"),
    "empty": (lambda L: L.zeros(0, 4), "uint8"),
    "wide_unsigned": (lambda L: L.tensor([1, 2], dtype=L.uint32), "float32"),
    # refused, in torch's order of checks
    "scalar_resized": (lambda L: L.tensor(1.0), "uint8"),
    "downsized_strided": (lambda L: L.zeros(3, 2).t(), "uint8"),
    "size_not_divisible": (lambda L: L.arange(6, dtype=L.uint8), "float32"),
    "offset_not_divisible": (lambda L: L.arange(12, dtype=L.uint8)[1:9], "float32"),
    "last_stride_not_one": (lambda L: L.arange(16, dtype=L.uint8).reshape(4, 4).t(), "int16"),
    "stride_not_divisible": (lambda L: L.arange(24, dtype=L.uint8).reshape(4, 6)[:, :4],
                             "int32"),
}


def _outcome(lib, case):
    build, name = CASES[case]
    src = build(lib)
    try:
        out = src.view(getattr(lib, name))
    except RuntimeError as e:
        return ("error", str(e))
    data = out.float() if name in ("bfloat16", "float16") else out
    return (str(out.dtype).rsplit(".", 1)[-1], tuple(out.shape), out.stride(),
            out.storage_offset(), np.asarray(data.numpy()).tolist(),
            out.numel() == 0 or
            out.untyped_storage().data_ptr() == src.untyped_storage().data_ptr())


@pytest.mark.parametrize("case", sorted(CASES))
def test_view_dtype_matches_torch(case):
    assert _outcome(retrograd, case) == _outcome(torch, case)


@pytest.mark.parametrize("lib_name", ["torch", "retrograd"])
def test_view_dtype_autograd_facts(lib_name):
    lib = torch if lib_name == "torch" else retrograd
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for name in ("int32", "float32"):  # its own dtype too: never differentiable
        y = x.view(getattr(lib, name))
        assert not y.requires_grad and y.grad_fn is None
        assert not y._is_view() and y._base is None
    h = x * 2
    loss = (h * h).sum()  # saves h
    bits = h.view(lib.int32)
    bits.zero_()  # writes through the reinterpreted view: h's version moves
    assert h._version == 1 and h.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_view_dtype_reads_float_bits():
    x = retrograd.tensor([1.0, -0.0, 2.0])
    assert x.view(retrograd.int32).tolist() == [0x3F800000, -(2**31), 0x40000000]
    x.view(retrograd.int32)[0] = 0x40400000  # the memory is shared both ways
    assert x.tolist() == [3.0, -0.0, 2.0]


def test_view_dtype_under_compile_runs_eagerly():
    def f(x):
        return (x.view(retrograd.int32) & 0x7FFFFFFF).view(retrograd.float32) * 2

    compiled = retrograd.compile(f)
    for values in ([-1.5, 2.0], [3.0, -0.25]):
        x = retrograd.tensor(values)
        assert compiled(x).tolist() == [abs(v) * 2 for v in values]


def test_view_dtype_is_refused_by_a_full_graph():
    compiled = retrograd.compile(lambda x: x.view(retrograd.int32) + 1, fullgraph=True)
    with pytest.raises(RuntimeError, match=r"Tensor.view\(dtype\) is not captured"):
        compiled(retrograd.tensor([1.0]))
