"""Samples for F.interpolate's resampling ops (nearest, nearest-exact, linear, bilinear,
bicubic, trilinear) and their backward ops (through double backward)."""

from tests.op_samples import Sample, arr

I = "nn.functional.interpolate"

SAMPLES = [
    Sample(I, (arr(1, 2, 5),), {"scale_factor": 2.5}, name="nearest1d_scale"),
    Sample(I, (arr(2, 1, 3, 4),), {"size": (5, 3)}, name="nearest2d_size"),
    Sample(I, (arr(1, 1, 2, 3, 2),), {"scale_factor": (1.5, 1, 2)}, name="nearest3d"),
    Sample(I, (arr(1, 2, 5),), {"size": 7, "mode": "nearest-exact"}, name="nearest_exact1d"),
    Sample(I, (arr(1, 1, 4, 3),), {"scale_factor": 0.6, "mode": "nearest-exact"},
           name="nearest_exact2d_down"),
    Sample(I, (arr(1, 1, 2, 2, 3),), {"size": 3, "mode": "nearest-exact"},
           name="nearest_exact3d"),
    Sample(I, (arr(2, 2, 4),), {"scale_factor": 1.7, "mode": "linear"}, name="linear"),
    Sample(I, (arr(1, 2, 4),), {"size": 7, "mode": "linear", "align_corners": True},
           name="linear_align"),
    Sample(I, (arr(1, 2, 3, 4, noncontig=True),), {"scale_factor": (2, 1.5), "mode": "bilinear"},
           name="bilinear_noncontig"),
    Sample(I, (arr(1, 1, 3, 4),), {"size": (5, 2), "mode": "bilinear", "align_corners": True},
           name="bilinear_align"),
    Sample(I, (arr(1, 1, 3, 4),), {"scale_factor": 1.3, "mode": "bilinear",
                                   "recompute_scale_factor": True}, name="bilinear_recompute"),
    Sample(I, (arr(1, 1, 4, 5),), {"size": (7, 3), "mode": "bicubic"}, name="bicubic"),
    Sample(I, (arr(1, 1, 3, 3),), {"scale_factor": 2.2, "mode": "bicubic",
                                   "align_corners": True}, name="bicubic_align"),
    Sample(I, (arr(1, 1, 2, 3, 2),), {"scale_factor": 2, "mode": "trilinear"},
           name="trilinear"),
    Sample(I, (arr(1, 1, 2, 2, 3),), {"size": (3, 1, 2), "mode": "trilinear",
                                      "align_corners": True}, name="trilinear_align"),
    Sample(I, (arr(1, 2, 4, 6),), {"size": (2, 3), "mode": "area"}, name="area"),
    Sample("nn.functional.upsample_bilinear", (arr(1, 1, 2, 3),), {"scale_factor": 2}),
    Sample("nn.functional.upsample_nearest", (arr(1, 1, 2, 3),), {"size": 4}),
]
