"""Data-parallel training, written as a torch DDP script; only the import differs.

    python -m retrograd.distributed.run --nproc-per-node 2 examples/ddp_train.py
    mpiexec -n 2 python examples/ddp_train.py
"""

import retrograd as torch
import retrograd.distributed as dist
import retrograd.nn as nn
from retrograd.nn.parallel import DistributedDataParallel as DDP
from retrograd.utils.data import DataLoader, TensorDataset
from retrograd.utils.data.distributed import DistributedSampler


def main() -> None:
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    x = torch.randn(512, 10)
    y = (x @ torch.randn(10, 1)).tanh()
    data = TensorDataset(x, y)
    sampler = DistributedSampler(data, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    torch.manual_seed(rank)  # replicas start different: DDP broadcasts rank 0's weights
    model = DDP(nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        total = torch.zeros(1)
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(xb), yb)
            loss.backward()
            opt.step()
            total += loss.detach()
        dist.all_reduce(total, op=dist.ReduceOp.AVG)
        if rank == 0:
            print(f"epoch {epoch}: mean loss {total.item() / len(loader):.4f}", flush=True)
    weights = [None] * world
    dist.all_gather_object(weights, model.module[0].weight.detach().numpy())
    if rank == 0:
        print("replicas equal:", all((w == weights[0]).all() for w in weights))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
