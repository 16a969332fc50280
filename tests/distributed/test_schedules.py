"""Pipeline schedules: their shape on a virtual clock, and training in one process."""

from __future__ import annotations

import numpy as np
import pytest

from retrograd.distributed.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
    ScheduleInterleavedZeroBubble,
    ScheduleZBVZeroBubble,
)
from retrograd.distributed.pipelining.schedules import DeadlockError, Layout
from retrograd.distributed.pipelining.schedules.actions import Action, from_csv
from retrograd.distributed.pipelining.schedules.plan import (
    add_communication,
    check_order,
    simulate,
)
from tests.distributed.pipeline_model import LinearTanh, batch, mse, reference_grads

P, M = 4, 8


def stages(n: int):
    layers = [LinearTanh(seed=i) for i in range(n)]
    return layers, [PipelineStage(layer, i, n) for i, layer in enumerate(layers)]


@pytest.mark.parametrize("cls,expected", [(Schedule1F1B, 33), (ScheduleInterleavedZeroBubble, 27),
                                          (ScheduleGPipe, 33)])
def test_virtual_clock_makespan_matches_the_paper(cls, expected):
    # 1F1B: m(F+B) + (p-1)(F+B) = 24 + 9; ZB-H1: m(F+B+W) + (p-1)(F+B-W) = 24 + 3
    _, sts = stages(P)
    assert cls(sts, M, loss_fn=mse).virtual_makespan == expected


@pytest.mark.parametrize("cls,n_stages", [(ScheduleGPipe, 4), (Schedule1F1B, 4),
                                          (ScheduleInterleavedZeroBubble, 4),
                                          (ScheduleInterleaved1F1B, 8),
                                          (ScheduleZBVZeroBubble, 8)])
def test_schedule_invariants(cls, n_stages):
    _, sts = stages(n_stages)
    sched = cls(sts, M, loss_fn=mse)
    check_order(sched.pipeline_order_with_comms)  # W after I, each action once
    for rank, peak in sched.peak_in_flight.items():
        assert peak <= sched.in_flight_bound[rank]
    if cls in (Schedule1F1B, ScheduleInterleavedZeroBubble):
        assert all(v <= P - r for r, v in sched.peak_in_flight.items())
    text = str(sched)
    assert "rank 0" in text and "0F0" in text


def test_csv_round_trip_and_deadlock_check(tmp_path):
    _, sts = stages(P)
    sched = Schedule1F1B(sts, M, loss_fn=mse)
    path = tmp_path / "schedule.csv"
    text = sched._export_csv(str(path))
    assert from_csv(text) == sched.pipeline_order
    assert Action.from_str("3I7") == Action(3, Action.from_str("3I7").computation_type, 7)
    bad = {r: list(a) for r, a in sched.pipeline_order.items()}
    # rank 1 insists on backward of microbatch 0 before its forward of microbatch 1 finishes
    # while rank 0 waits for it: swap two ranks' dependencies to make a cycle
    bad[0] = [Action(0, a.computation_type, a.microbatch_index) for a in reversed(bad[0])]
    lay = Layout(P, P)
    with pytest.raises((DeadlockError, RuntimeError)):
        simulate(lay, add_communication(lay, bad))


@pytest.mark.parametrize("cls,n_stages,kw", [(ScheduleGPipe, 4, {}), (Schedule1F1B, 4, {}),
                                             (ScheduleInterleavedZeroBubble, 4, {}),
                                             (ScheduleInterleaved1F1B, 8, {}),
                                             (ScheduleZBVZeroBubble, 8, {})])
def test_in_process_training_equals_sequential_bitwise(cls, n_stages, kw):
    layers, sts = stages(n_stages)
    x, y = batch()
    ref, ref_losses = reference_grads(layers, x, y, M)
    sched = cls(sts, M, loss_fn=mse, **kw)
    losses = []
    sched.step(x, target=y, losses=losses)
    got = [p.grad.numpy() for layer in layers for p in layer.parameters()]
    for g, r in zip(got, ref):
        np.testing.assert_array_equal(g, r)
    assert [loss.item() for loss in losses] == ref_losses


def test_pipeline_split_of_a_sequential_trains_like_the_whole_model():
    import retrograd as rg
    from retrograd import nn
    from retrograd.distributed.pipelining import pipeline, split_sequential

    rg.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(8, 8), nn.Tanh())]).double()
    parts = split_sequential(model, 4)
    assert [len(p) for p in parts] == [2, 2, 2, 2]
    x = rg.randn(16, 8, dtype=rg.float64)
    y = rg.randn(16, 8, dtype=rg.float64)
    loss_fn = nn.MSELoss()
    # reference: the same microbatches through the whole model
    for i in range(4):
        loss_fn(model(x[4 * i:4 * i + 4]), y[4 * i:4 * i + 4]).backward()
    ref = [p.grad.numpy() / 4 for p in model.parameters()]
    model.zero_grad()
    stages = pipeline(model, 4)
    assert [s.stage_index for s in stages] == [0, 1, 2, 3]
    ScheduleInterleavedZeroBubble(stages, 4, loss_fn=loss_fn).step(x, target=y)
    for got, want in zip([p.grad.numpy() for p in model.parameters()], ref):
        np.testing.assert_array_equal(got, want)
