"""Samples for pixel_shuffle and pixel_unshuffle."""

from tests.op_samples import Sample, arr

F = "nn.functional."

SAMPLES = [
    Sample("pixel_shuffle", (arr(1, 8, 2, 3), 2)),
    Sample(F + "pixel_shuffle", (arr(9, 1, 2), 3), name="unbatched"),
    Sample("pixel_shuffle", (arr(2, 1, 4, 2, 2), 2), name="5d"),
    Sample("pixel_shuffle", (arr(1, 4, 2, 2, noncontig=True), 1), name="factor1"),
    Sample("pixel_unshuffle", (arr(1, 2, 4, 6), 2)),
    Sample(F + "pixel_unshuffle", (arr(1, 3, 3), 3), name="unbatched"),
    Sample("pixel_unshuffle", (arr(2, 1, 1, 4, 2, noncontig=True), 2), name="5d"),
]
