"""The alpha-beta model and the step simulation of bench/ddp.py, on hand-computed cases."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "ddp.py"
spec = importlib.util.spec_from_file_location("bench_ddp", BENCH)
assert spec is not None and spec.loader is not None
ddp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ddp)

MB = 2 ** 20


def test_ring_model():
    assert ddp.ring_time(1000, 1, 1.0, 1.0) == 0.0
    # 2(N-1) steps of alpha + n/N beta
    assert ddp.ring_time(800, 4, 2.0, 0.5) == pytest.approx(6 * (2.0 + 200 * 0.5))
    assert ddp.ring_bytes_sent(800, 4) == 1200
    assert ddp.ring_bytes_sent(800, 2) == 800


def test_buckets_close_at_1mb_then_25mb_in_ready_order():
    ready = [5.0, 4.0, 3.0, 2.0, 1.0]  # the model's order; backward readies the last first
    sizes = [10 * MB, 20 * MB, 10 * MB, MB // 2, MB // 2]
    assert ddp.make_buckets(ready, sizes) == [(2.0, MB), (4.0, 30 * MB), (5.0, 10 * MB)]


def test_simulated_step():
    job = {"forward": 1.0, "backward": 10.0, "optimizer": 0.5, "ready": [2.0, 9.0],
           "bytes": [100, 300]}
    # 2 ranks, alpha 0, beta 0.01 s/byte: an all-reduce of n bytes takes 2 * n/2 * 0.01
    t = {s: ddp.simulate_step(job, 2, 0.0, 0.01, s) for s in ddp.STRATEGIES}
    assert t["flat after"] == pytest.approx(1.0 + 10.0 + 4.0 + 0.5)
    assert t["per-param after"] == pytest.approx(1.0 + 10.0 + 1.0 + 3.0 + 0.5)
    # the first starts at 2 and ends at 3; the second starts when ready (9) and ends at 12
    assert t["per-param overlap"] == pytest.approx(1.0 + 12.0 + 0.5)
    # both fit in the first bucket, ready at 9
    assert t["buckets overlap"] == pytest.approx(1.0 + 9.0 + 4.0 + 0.5)
    assert t["buckets after"] == t["flat after"]
