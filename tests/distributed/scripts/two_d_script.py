"""Run under the launcher with 4 ranks by tests/distributed/test_two_d.py.

2-D parallelism: 2 pipeline stages x 2 data-parallel replicas. Ranks {0, 1} run replica 0's
pipeline (stage 0 on rank 0, stage 1 on rank 1), ranks {2, 3} replica 1's; each replica takes
half of the global batch. Each stage's module is wrapped in DistributedDataParallel over its
data-parallel group ([0, 2] for stage 0, [1, 3] for stage 1): the stage runs all but its last
backward of a step under no_sync and arms the reducer for the last one (NOTE [Pipeline stage
under DDP]), so the replicas' accumulated gradients are averaged once per step.

argv: schedule name (gpipe or 1f1b). Two SGD steps; after each, every rank's stage gradients
must equal those of a single-process full-batch computation of the same model (rtol 1e-10), and
the two replicas of each stage must hold bitwise-equal parameters after the update.
"""

import copy
import sys

import numpy as np

import retrograd as torch
import retrograd.nn as nn
from retrograd.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe
from retrograd.nn.parallel import DistributedDataParallel as DDP

dist = torch.distributed
SCHEDULES = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}
N_STAGES, N_REPLICAS, MICROBATCHES, LR = 2, 2, 4, 0.1

name = sys.argv[1]
dist.init_process_group("mpi")
rank = dist.get_rank()
assert dist.get_world_size() == N_STAGES * N_REPLICAS
replica, stage_index = divmod(rank, N_STAGES)
# every rank creates every group, in the same order
pipe_groups = [dist.new_group([r * N_STAGES + s for s in range(N_STAGES)])
               for r in range(N_REPLICAS)]
dp_groups = [dist.new_group([r * N_STAGES + s for r in range(N_REPLICAS)])
             for s in range(N_STAGES)]
pipe_group, dp_group = pipe_groups[replica], dp_groups[stage_index]
assert dist.get_rank(pipe_group) == stage_index and dist.get_rank(dp_group) == replica

torch.manual_seed(0)
full = nn.Sequential(
    nn.Sequential(nn.Linear(6, 16, dtype=torch.float64), nn.Tanh()),
    nn.Sequential(nn.Linear(16, 16, dtype=torch.float64), nn.Tanh(),
                  nn.Linear(16, 3, dtype=torch.float64)))
rng = np.random.default_rng(1)
X = torch.from_numpy(rng.standard_normal((16, 6)))
Y = torch.from_numpy(rng.standard_normal((16, 3)))
half = slice(8 * replica, 8 * (replica + 1))


def mse(out, target):
    return ((out - target) ** 2).mean()


module = copy.deepcopy(full[stage_index])  # this rank's stage, a private copy
stage = PipelineStage(DDP(module, process_group=dp_group), stage_index, N_STAGES,
                      group=pipe_group)
schedule = SCHEDULES[name](stage, MICROBATCHES, loss_fn=mse)
opt = torch.optim.SGD(module.parameters(), lr=LR)
ref_opt = torch.optim.SGD(full.parameters(), lr=LR)

for step in range(2):
    opt.zero_grad()
    losses: list = []
    schedule.step(X[half] if stage.is_first else None,
                  target=Y[half] if stage.is_last else None, losses=losses)
    ref_opt.zero_grad()
    mse(full(X), Y).backward()  # single process, full batch
    for (k, p), q in zip(module.named_parameters(), full[stage_index].parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-14,
                                   err_msg=f"step {step} stage {stage_index} {k}")
    opt.step()
    ref_opt.step()
    flat = np.concatenate([p.detach().numpy().ravel() for p in module.parameters()])
    replicas: list = [None] * N_REPLICAS
    dist.all_gather_object(replicas, flat, group=dp_group)
    assert all(np.array_equal(other, flat) for other in replicas), "replicas differ"
    np.testing.assert_allclose(
        flat, np.concatenate([q.detach().numpy().ravel()
                              for q in full[stage_index].parameters()]), rtol=1e-10)

print(f"rank {rank} two-d ok {name} replica {replica} stage {stage_index}", flush=True)
dist.destroy_process_group()
