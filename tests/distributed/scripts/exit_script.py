"""Run by tests/distributed/test_collectives.py (2 ranks): leaves without destroying the group,
with a subgroup, a collective nobody waited for, a large send nobody received and a receive
that never matched. MPI must print no warning at exit (pending references, mpool)."""

import retrograd as torch

dist = torch.distributed
dist.init_process_group("mpi")
r = dist.get_rank()
pair = dist.new_group([0, 1])
dist.all_reduce(torch.ones(100_000), async_op=True)
dist.all_reduce(torch.ones(10), group=pair, async_op=True)
if r == 0:
    dist.isend(torch.ones(3_000_000), 1, tag=3)  # rank 1 never receives it
dist.irecv(torch.zeros(4), 1 - r, tag=9)  # nobody sends it
print(f"rank {r} leaves", flush=True)
