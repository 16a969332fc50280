"""Samples for pdist (every p case of its gradient: 0, below 1, 1, below 2, 2, above 2, inf)."""

from tests.op_samples import Sample, arr

SAMPLES = [
    Sample("pdist", (arr(4, 3, seed=31),), name="p2"),
    Sample("pdist", (arr(5, 2, seed=32), 1.0), name="p1"),
    Sample("pdist", (arr(4, 3, seed=33), 0.5), name="p_half"),
    Sample("pdist", (arr(4, 3, seed=34), 1.5), name="p_1_5"),
    Sample("pdist", (arr(4, 3, seed=35),), {"p": 3.0}, name="p3"),
    Sample("pdist", (arr(4, 3, seed=36), float("inf")), name="p_inf"),
    Sample("pdist", (arr(3, 2, seed=37), 0.0), name="p0"),
    Sample("pdist", (arr(3, 4, seed=38, noncontig=True),), name="noncontig"),
    Sample("nn.functional.pdist", (arr(1, 3, seed=39),), name="one_row"),
]
