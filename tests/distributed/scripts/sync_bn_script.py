"""Run by tests/distributed/test_sync_batchnorm.py under the launcher: SyncBatchNorm on each
rank's part of a batch (ranks hold different numbers of rows) against BatchNorm on the whole
batch in one process (float64): outputs, input gradients, the summed weight and bias
gradients, running statistics over two steps, and under DDP. Prints `rank <r> syncbn ok`."""

import copy

import numpy as np

import retrograd as torch

dist = torch.distributed
dist.init_process_group("mpi")
r, n = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(0)
sizes = [2 + k for k in range(n)]  # uneven parts
starts = np.cumsum([0] + sizes)
X = [torch.from_numpy(rng.standard_normal((int(starts[-1]), 3, 5)) * 2 + 1) for _ in range(2)]
G = [torch.from_numpy(rng.standard_normal((int(starts[-1]), 3, 5))) for _ in range(2)]
mine = slice(int(starts[r]), int(starts[r + 1]))

ref = torch.nn.BatchNorm1d(3, dtype=torch.float64)
with torch.no_grad():
    ref.weight.copy_(torch.tensor([1.5, -0.5, 2.0], dtype=torch.float64))
    ref.bias.copy_(torch.tensor([0.1, 0.2, -0.3], dtype=torch.float64))
sync = torch.nn.SyncBatchNorm.convert_sync_batchnorm(copy.deepcopy(ref))
assert type(sync).__name__ == "SyncBatchNorm"

for step in range(2):
    xa = X[step].clone().requires_grad_(True)
    ya = ref(xa)
    (ya * G[step]).sum().backward()
    xs = X[step][mine].clone().requires_grad_(True)
    ys = sync(xs)
    (ys * G[step][mine]).sum().backward()
    assert np.allclose(ys.detach().numpy(), ya.detach().numpy()[mine], atol=1e-12), step
    assert np.allclose(xs.grad.numpy(), xa.grad.numpy()[mine], atol=1e-12), step
    for name in ("running_mean", "running_var"):
        assert np.allclose(getattr(sync, name).numpy(), getattr(ref, name).numpy(),
                           atol=1e-12), (step, name)
    assert int(sync.num_batches_tracked) == step + 1

# weight and bias gradients are per rank (DDP sums or averages them): their sum is the
# whole batch's
for p, q in ((sync.weight, ref.weight), (sync.bias, ref.bias)):
    total = p.grad.clone()
    dist.all_reduce(total)
    assert np.allclose(total.numpy(), q.grad.numpy(), atol=1e-10)

# eval mode uses the running statistics, without communication
sync.eval()
ref.eval()
assert np.allclose(sync(X[0][mine]).detach().numpy(), ref(X[0][mine]).detach().numpy())

# inside DDP: the averaged gradients are the whole batch's mean-loss gradients
model = torch.nn.Sequential(torch.nn.Conv1d(3, 3, 1, dtype=torch.float64),
                            torch.nn.BatchNorm1d(3, dtype=torch.float64))
single = copy.deepcopy(model)
ddp = torch.nn.parallel.DistributedDataParallel(
    torch.nn.SyncBatchNorm.convert_sync_batchnorm(model))
out = ddp(X[0][mine])
(out * G[0][mine]).sum().backward()
(single(X[0]) * G[0]).sum().backward()
for (name, p), q in zip(ddp.module.named_parameters(), single.parameters()):
    assert np.allclose(p.grad.numpy() * n, q.grad.numpy(), atol=1e-10), name
print(f"rank {r} syncbn ok", flush=True)
