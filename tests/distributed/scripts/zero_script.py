"""Run by tests/distributed/test_zero.py under the launcher: ZeroRedundancyOptimizer(Adam)
with DDP follows plain single-process Adam; its state is sharded; consolidate_state_dict gives
plain Adam's state dict; load_state_dict restores the shards. Prints `rank <r> zero ok`."""

import copy

import numpy as np

import retrograd as torch
import retrograd.nn as nn
from retrograd.distributed.optim import ZeroRedundancyOptimizer
from retrograd.nn.parallel import DistributedDataParallel as DDP

dist = torch.distributed
dist.init_process_group("mpi")
r, n = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(1)
X = torch.from_numpy(rng.standard_normal((4 * n, 6)))
Y = torch.from_numpy(rng.standard_normal((4 * n, 2)))
mine = slice(4 * r, 4 * (r + 1))
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 8, dtype=torch.float64), nn.Tanh(),
                    nn.Linear(8, 8, dtype=torch.float64), nn.Tanh(),
                    nn.Linear(8, 2, dtype=torch.float64))
plain = copy.deepcopy(net)
ddp = DDP(net)
zero = ZeroRedundancyOptimizer(ddp.parameters(), torch.optim.Adam, lr=0.05)
adam = torch.optim.Adam(plain.parameters(), lr=0.05)
owned = sum(len(g["params"]) for g in zero.optim.param_groups)
counts = [None] * n
dist.all_gather_object(counts, owned)
assert sum(counts) == 6 and max(counts) < 6, counts  # every parameter has exactly one owner
for _step in range(4):
    zero.zero_grad()
    ((ddp(X[mine]) - Y[mine]) ** 2).mean().backward()
    zero.step()
    adam.zero_grad()
    ((plain(X) - Y) ** 2).mean().backward()
    adam.step()
    for p, q in zip(net.parameters(), plain.parameters()):
        assert np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)

try:
    zero.state_dict()
except RuntimeError as e:
    assert "Optimizer state has not been consolidated on this rank" in str(e)
else:
    raise AssertionError("state_dict before consolidate_state_dict")
zero.consolidate_state_dict(to=0)
if r == 0:
    full, ref = zero.state_dict(), adam.state_dict()
    assert sorted(full["state"]) == sorted(ref["state"])
    for i, s in ref["state"].items():
        for k, v in s.items():
            got = full["state"][i][k]
            assert np.allclose(np.asarray(got), np.asarray(v), rtol=1e-10), (i, k)
    assert full["param_groups"][0]["params"] == ref["param_groups"][0]["params"]
    assert full["param_groups"][0]["lr"] == 0.05
# restore the state on every rank (rank 0's full state dict), then keep stepping in step
objs = [zero.state_dict() if r == 0 else None]
dist.broadcast_object_list(objs, src=0)
zero2 = ZeroRedundancyOptimizer(ddp.parameters(), torch.optim.Adam, lr=0.05)
zero2.load_state_dict(objs[0])
zero2.zero_grad()
((ddp(X[mine]) - Y[mine]) ** 2).mean().backward()
zero2.step()
adam.zero_grad()
((plain(X) - Y) ** 2).mean().backward()
adam.step()
for p, q in zip(net.parameters(), plain.parameters()):
    assert np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)
print(f"rank {r} zero ok", flush=True)
dist.destroy_process_group()
