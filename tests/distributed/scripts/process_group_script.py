"""Run under mpiexec by tests/distributed/test_process_group.py (3 ranks)."""

import os

import retrograd as rg
import retrograd.distributed as dist

dist.init_process_group("mpi")
r, n = dist.get_rank(), dist.get_world_size()
assert os.environ["RANK"] == str(r) and os.environ["WORLD_SIZE"] == str(n)
t = rg.tensor([float(r + 1)] * 3)
dist.all_reduce(t)
print(f"rank {r} all_reduce {t.tolist()}")
b = rg.tensor([float(r)] * 2)
dist.broadcast(b, src=2)
print(f"rank {r} broadcast {b.tolist()}")
buf = rg.zeros(3)
if r == 0:
    dist.send(rg.tensor([7.0, 8.0, 9.0]), 1)
elif r == 1:
    dist.recv(buf, 0)
    print(f"rank {r} recv {buf.tolist()}")
incoming = rg.zeros(1)
works = dist.batch_isend_irecv([dist.P2POp(dist.isend, rg.tensor([float(r)]), (r + 1) % n),
                                dist.P2POp(dist.irecv, incoming, (r - 1) % n)])
for w in works:
    w.wait()
print(f"rank {r} ring {incoming.item()}")
dist.barrier()
if r == 1:
    dist.abort("boom at F(3)")
else:
    try:
        dist.irecv(rg.zeros(1), 1, tag=5).wait(timeout=20)
    except dist.RankFailure as e:
        print(f"rank {r} saw: {e}")
dist.destroy_process_group()
