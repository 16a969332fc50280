"""Samples for torch.special's Bessel and Airy functions. torch declares no derivative for
them (their results never require grad), so there is no gradcheck: the parity runs compare
values, dtypes, layouts and that neither library's result requires grad although the input
does. Values over wide ranges and at the special points are in tests/test_special_bessel.py."""

from tests.op_samples import Sample, arr, pos

_F64 = {"parity_dtype": "float64", "parity_rtol": 1e-12, "parity_atol": 1e-15}
# on these ranges torch's float32 kernels stay within a few ulps of the true value
_F32 = {"parity_rtol": 2e-6, "parity_atol": 1e-6}

_WHOLE_LINE = ("bessel_j0", "bessel_j1", "modified_bessel_i0", "modified_bessel_i1",
               "spherical_bessel_j0", "airy_ai")
_POSITIVE = ("bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
             "scaled_modified_bessel_k0", "scaled_modified_bessel_k1")

SAMPLES = [
    *(Sample(f"special.{name}", (arr(4, 5, low=-12.0, high=12.0),), gradcheck=False,
             name="float64", **_F64) for name in _WHOLE_LINE),
    *(Sample(f"special.{name}", (pos(4, 5, low=0.05, high=12.0),), gradcheck=False,
             name="float64", **_F64) for name in _POSITIVE),
    *(Sample(f"special.{name}", (arr(3, 4, low=-4.0, high=4.0, noncontig=True),),
             gradcheck=False, name="noncontig", **_F32) for name in _WHOLE_LINE),
    *(Sample(f"special.{name}", (pos(3, 4, low=0.1, high=4.0, noncontig=True),),
             gradcheck=False, name="noncontig", **_F32) for name in _POSITIVE),
    Sample("ops.aten.special_bessel_j0", (arr(2, 3, low=-8.0, high=8.0),), gradcheck=False,
           **_F64),
    Sample("ops.aten.special_airy_ai", (arr(2, 3, low=-8.0, high=8.0),), gradcheck=False,
           **_F64),
    Sample("ops.aten.special_modified_bessel_k1", (pos(5, low=0.5, high=3.0),),
           gradcheck=False, **_F64),
    Sample("special.bessel_y1", (arr(3, low=1.0, high=9.0, dtype="int64"),), gradcheck=False,
           name="int64", **_F32),
    Sample("special.modified_bessel_i1", (arr(2, low=0, high=2, dtype="bool"),),
           gradcheck=False, name="bool", **_F32),
]
