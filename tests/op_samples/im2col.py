"""Samples for F.unfold (im2col) and F.fold (col2im)."""

from tests.op_samples import Sample, arr

F = "nn.functional."


def fold_of_unfold(lib, x):
    # overlapping blocks summed back: each pixel times the number of blocks covering it
    return lib.nn.functional.fold(lib.nn.functional.unfold(x, 2), (3, 4), 2)


SAMPLES = [
    Sample(F + "unfold", (arr(2, 2, 3, 4), 2)),
    Sample(F + "unfold", (arr(1, 2, 4, 5), (2, 3)),
           {"dilation": (2, 1), "padding": 1, "stride": (1, 2)}, name="all_params"),
    Sample(F + "unfold", (arr(2, 3, 3, noncontig=True), 3), {"padding": 1}, name="unbatched"),
    Sample(F + "fold", (arr(2, 8, 6), (3, 4), 2), name="overlapping"),
    Sample(F + "fold", (arr(1, 12, 12), (4, 5), (2, 3)),
           {"dilation": (2, 1), "padding": 1, "stride": (1, 2)}, name="all_params"),
    Sample(F + "fold", (arr(4, 4), 4, 2), {"stride": 2}, name="unbatched_disjoint"),
    Sample(fold_of_unfold, (arr(1, 1, 3, 4),)),
]
