"""Run under mpiexec -n 4 by tests/distributed/test_pipeline_mpi.py.

argv: schedule name, then "fail" to make rank 2 raise in microbatch 3's forward.
Each rank checks its stages' gradients against a single-process run of the same microbatches
(bitwise) and against torch's full-batch gradients (rtol 1e-5) when torch is installed.
"""

import sys

import numpy as np
from tests.distributed.pipeline_model import LinearTanh, batch, mse, reference_grads

import retrograd.distributed as dist
from retrograd.distributed.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleavedZeroBubble,
    ScheduleZBVZeroBubble,
)

SCHEDULES = {"gpipe": (ScheduleGPipe, 4), "1f1b": (Schedule1F1B, 4),
             "zbh1": (ScheduleInterleavedZeroBubble, 4), "zbv": (ScheduleZBVZeroBubble, 8)}
M = 8

name = sys.argv[1]
fail = len(sys.argv) > 2 and sys.argv[2] == "fail"
cls, n_stages = SCHEDULES[name]
dist.init_process_group("mpi")
rank, world = dist.get_rank(), dist.get_world_size()
layers = [LinearTanh(seed=i) for i in range(n_stages)]
x, y = batch()
ref, ref_losses = reference_grads(layers, x, y, M)


class Failing:
    def __init__(self, layer):
        self.layer, self.calls = layer, 0

    def __call__(self, h):
        self.calls += 1
        if self.calls == 4:
            raise ValueError("injected failure")
        return self.layer(h)

    def parameters(self):
        return self.layer.parameters()


mine = [i for i in range(n_stages) if (i if n_stages == world else
                                       (i if i < world else 2 * world - 1 - i)) == rank]
local = [PipelineStage(Failing(layers[i]) if fail and i == 2 else layers[i], i, n_stages)
         for i in mine]
sched = cls(local if len(local) > 1 else local[0], M, loss_fn=mse)
losses = []
try:
    sched.step(x if 0 in mine else None, target=y if n_stages - 1 in mine else None,
               losses=losses)
except Exception as e:  # noqa: BLE001
    print(f"rank {rank} stopped: {type(e).__name__}: {e}", flush=True)
    dist.destroy_process_group()
    sys.exit(1)

index = {(i, j): k for k, (i, j) in enumerate((i, j) for i in range(n_stages) for j in range(2))}
for i in mine:
    for j, p in enumerate(layers[i].parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), ref[index[(i, j)]])
if n_stages - 1 in mine:
    assert [loss.item() for loss in losses] == ref_losses
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    h = torch.tensor(x.numpy())
    params = [[torch.tensor(p.detach().numpy(), requires_grad=True) for p in layer.parameters()]
              for layer in layers]
    for w, b in params:
        h = torch.tanh(h @ w + b)
    torch.nn.functional.mse_loss(h, torch.tensor(y.numpy())).backward()
    for i in mine:
        for j, p in enumerate(layers[i].parameters()):
            np.testing.assert_allclose(p.grad.numpy(), params[i][j].grad.numpy(), rtol=1e-5,
                                       atol=1e-12)
print(f"rank {rank} ok {name} stages {mine}", flush=True)
dist.destroy_process_group()
