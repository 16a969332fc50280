"""Run by tests/distributed/test_ddp_join.py on torch (gloo) and on retrograd (MPI), 2 or 3
ranks: DDP training with uneven inputs inside ddp.join() (rank r has 2 + 2 r batches). Each
rank writes to <out dir>/<library>_<rank>.txt one line per case with the final parameters, the
errors of throw_on_early_termination and what leaves the block; the test compares the files
of the two libraries."""

import sys

import numpy as np

if sys.argv[1] == "torch":
    import torch
    backend = "gloo"
else:
    import retrograd as torch
    backend = "mpi"

dist = torch.distributed
dist.init_process_group(backend)
DDP = torch.nn.parallel.DistributedDataParallel

r, n = dist.get_rank(), dist.get_world_size()
out = open(f"{sys.argv[2]}/{sys.argv[1]}_{r}.txt", "w")


def report(line):
    out.write(line + "\n")
    out.flush()



class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 8, dtype=torch.float64)
        self.b = torch.nn.Linear(8, 2, dtype=torch.float64)
        self.register_buffer("seen", torch.zeros(1, dtype=torch.float64))

    def forward(self, x):
        if self.training:
            self.seen += x.shape[0]  # a buffer that differs by rank
        return self.b(torch.tanh(self.a(x)))


def make():
    net = Net()
    rng = np.random.default_rng(1)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.5))
    return net


def batches(rank):
    rng = np.random.default_rng(10 + rank)
    return [(torch.from_numpy(rng.standard_normal((3, 4))),
             torch.from_numpy(rng.standard_normal((3, 2)))) for _ in range(2 + 2 * rank)]


def train(case, **join_kwargs):
    ddp = DDP(make(), **case.get("ddp", {}))
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    with ddp.join(**join_kwargs):
        for i, (x, y) in enumerate(batches(r)):
            if case.get("no_sync_first") and i == 0:
                with ddp.no_sync():
                    ((ddp(x) - y) ** 2).mean().backward()
                continue
            opt.zero_grad()
            ((ddp(x) - y) ** 2).mean().backward()
            opt.step()
    flat = np.concatenate([p.detach().numpy().ravel() for p in ddp.module.parameters()])
    seen = float(ddp.module.seen.item())
    report(f"case {case['name']}: " + " ".join(f"{v:.12e}" for v in flat) + f" seen {seen}")


train({"name": "default"})
train({"name": "undivided"}, divide_by_initial_world_size=False)
train({"name": "no_buffer_sync", "ddp": {"forward_sync_buffers": False}})
train({"name": "no_buffer_broadcast", "ddp": {"broadcast_buffers": False}})
train({"name": "small_buckets", "ddp": {"bucket_cap_mb": 0.0001}})
train({"name": "no_sync_first"})

ddp = DDP(make())
try:
    with ddp.join(throw_on_early_termination=True):
        for x, y in batches(r):
            ((ddp(x) - y) ** 2).mean().backward()
    report("throw: no error")
except RuntimeError as e:
    report(f"throw: {e}")

try:
    with ddp.join(enable=True):
        raise KeyError("inside")
except KeyError as e:
    report(f"exception: {e!r}")
dist.barrier()
report("done")
out.close()
del ddp
dist.destroy_process_group()  # (torch's gloo threads may abort the exit otherwise)
