"""Run by tests/distributed/test_p2p_objects.py under the launcher: object and tensor
point-to-point messages (any-source receives report their sender), group ranks, the backend
names, and monitored_barrier. Prints `rank <r> p2p ok` at the end.

argv: "ok", or "late" (the last rank reaches monitored_barrier after its timeout), or
"late_all" (the same with wait_all_ranks=True).
"""

import importlib
import sys
import time
from datetime import timedelta

import numpy as np

import retrograd as torch

dist = torch.distributed
mode = sys.argv[1]
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()

if mode != "ok":
    dist.barrier()  # all ranks start together: only the last one is late
    if r == n - 1:
        time.sleep(5)
    dist.monitored_barrier(timeout=timedelta(seconds=2), wait_all_ranks=mode == "late_all")
    print(f"rank {r} passed", flush=True)
    sys.exit(0)

# objects from every other rank to rank 0, received from any source
if r != 0:
    dist.send_object_list([{"from": r}, "x" * r, None], dst=0)
else:
    got = {}
    for _ in range(n - 1):
        objs = [None, None, None]
        sender = dist.recv_object_list(objs)
        assert objs == [{"from": sender}, "x" * sender, None], (sender, objs)
        got[sender] = objs
    assert sorted(got) == list(range(1, n))

# (an any-source receive takes whichever message comes first: the next phase waits)
dist.barrier()

# a tensor from any source: recv returns the sender
if r == 1:
    dist.send(torch.tensor([7.0]), dst=0)
elif r == 0:
    t = torch.zeros(1)
    assert dist.recv(t) == 1 and t.item() == 7.0

# group ranks on a subgroup of the last two ranks
sub = dist.new_group([n - 2, n - 1])
if r == n - 2:
    dist.send_object_list([("hello", r)], group=sub, group_dst=1)
elif r == n - 1:
    objs = [None]
    assert dist.recv_object_list(objs, group=sub, group_src=0) == n - 2
    assert objs == [("hello", n - 2)]

# errors as torch's
for call, message in (
        (lambda: dist.send(torch.zeros(1), dst=r), "Invalid destination rank: destination rank "
         "should not be the same as the rank of the current process."),
        (lambda: dist.send(torch.zeros(1), dst=0, group_dst=0),
         "Can't specify both group_rank and global_rank"),
        (lambda: dist.send(torch.zeros(1)), "Must specify global_rank or group_rank")):
    try:
        call()
        raise AssertionError("no error")
    except ValueError as e:
        assert str(e) == message, str(e)

assert dist.Backend("GLOO") == "gloo" and dist.Backend.MPI == "mpi"
assert dist.Backend("Custom") == "custom" and type(dist.Backend("mpi")) is str
assert dist.is_backend_available("mpi") and not dist.is_backend_available("nccl")
assert dist.get_default_backend_for_device("cpu") == "mpi"
assert dist.get_node_local_rank() == r  # one machine: the local rank is the rank

# several subgroups in one call, and the c10d module path
c10d = importlib.import_module("retrograd.distributed.distributed_c10d")
assert c10d._get_default_group() is dist.group.WORLD and not c10d._rank_not_in_group(None)
lists = [list(range(0, n - 1)), [n - 1]]
mine, subgroups = dist.new_subgroups_by_enumeration(lists)
assert len(subgroups) == 2 and dist.get_process_group_ranks(mine) == lists[0 if r < n - 1 else 1]
total = torch.tensor([float(r)])
dist.all_reduce(total, group=mine)
assert total.item() == sum(lists[0 if r < n - 1 else 1]), total
single, singles = dist.new_subgroups(group_size=1)
assert len(singles) == n and dist.get_world_size(single) == 1
for call, message in ((lambda: dist.new_subgroups(), "The arg 'group_size' (0) must be positive"),
                      (lambda: dist.new_subgroups(group_size=n + 1),
                       f"The arg 'group_size' ({n + 1}) must not exceed the world size ({n})"),
                      (lambda: dist.new_subgroups_by_enumeration([[0, 1], [1]]),
                       "Rank 1 has appeared in both subgroup [0, 1] and [1]")):
    try:
        call()
        raise AssertionError("no error")
    except ValueError as e:
        assert str(e) == message, str(e)

dist.monitored_barrier(timeout=timedelta(seconds=30))
dist.monitored_barrier(wait_all_ranks=True)
np.testing.assert_array_equal(np.arange(2), np.arange(2))
print(f"rank {r} p2p ok", flush=True)
dist.destroy_process_group()
