"""Run by tests/distributed/test_collectives.py under the launcher (2 or 4 ranks) or plain
mpiexec: every collective against the same computation done in NumPy on each rank's data.

argv: the init method ("default" or "env"). Prints `rank <r> collectives ok` at the end.
"""

import sys

import ml_dtypes
import numpy as np

import retrograd as torch

dist = torch.distributed  # reachable without importing retrograd.distributed
init = sys.argv[1] if len(sys.argv) > 1 else "default"
if init == "env":
    dist.init_process_group(backend="mpi", init_method="env://")
else:
    dist.init_process_group("mpi")
r, n = dist.get_rank(), dist.get_world_size()


def data(rank, shape=(2, 3), dtype=np.float64):
    """Rank `rank`'s input: small integers, exact in every dtype used here."""
    vals = (np.arange(np.prod(shape)).reshape(shape) % 5 + rank + 1)
    return vals.astype(dtype)


def every(shape=(2, 3), dtype=np.float64):
    return np.stack([data(k, shape, dtype) for k in range(n)])


def same(t, expected):
    got = t._data
    assert got.dtype == np.asarray(expected).dtype, (got.dtype, np.asarray(expected).dtype)
    assert np.array_equal(got.astype(np.float64), np.asarray(expected).astype(np.float64)), \
        (got, expected)


# all_reduce: every op, several dtypes, in place, async
reducers = {dist.ReduceOp.SUM: lambda a: a.sum(0), dist.ReduceOp.PRODUCT: lambda a: a.prod(0),
            dist.ReduceOp.MIN: lambda a: a.min(0), dist.ReduceOp.MAX: lambda a: a.max(0),
            dist.ReduceOp.AVG: lambda a: a.sum(0) / n}
for dtype in (np.float64, np.float32, ml_dtypes.bfloat16, np.int64):
    for op, fn in reducers.items():
        if op is dist.ReduceOp.AVG and dtype is np.int64:
            continue
        t = torch.from_numpy(data(r, dtype=dtype).copy())
        assert dist.all_reduce(t, op=op) is None
        expected = fn(every(dtype=np.float64))
        same(t, expected.astype(dtype))
t = torch.from_numpy(data(r, dtype=np.float16))
work = dist.all_reduce(t, async_op=True)
assert isinstance(work, dist.Work)
work.wait()
assert work.is_completed()
same(t, every().sum(0).astype(np.float16))
f8 = torch.tensor([1.0, 2.0]).to(torch.float8_e4m3fn)
dist.all_reduce(f8, op=dist.ReduceOp.MAX)
assert f8.float().tolist() == [1.0, 2.0]
# a Work's future holds the output tensors
t = torch.from_numpy(data(r))
fut = dist.all_reduce(t, async_op=True).get_future()
assert fut.wait()[0] is t
same(t, every().sum(0))
bt = torch.tensor([r == 0, False, True])
dist.all_reduce(bt)
assert bt.tolist() == [True, False, True]

# broadcast from the last rank, bfloat16 too
for dtype in (np.float64, ml_dtypes.bfloat16):
    t = torch.from_numpy(data(r, dtype=dtype).copy())
    dist.broadcast(t, src=n - 1)
    same(t, data(n - 1, dtype=dtype))
# reduce to rank 1
t = torch.from_numpy(data(r))
dist.reduce(t, dst=1, op=dist.ReduceOp.MAX)
same(t, every().max(0) if r == 1 else data(r))

# all_gather (list and into one tensor)
outs = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)]
dist.all_gather(outs, torch.from_numpy(data(r)))
for k in range(n):
    same(outs[k], data(k))
big = torch.zeros(2 * n, 3, dtype=torch.bfloat16)
w = dist.all_gather_into_tensor(big, torch.from_numpy(data(r, dtype=ml_dtypes.bfloat16)),
                                async_op=True)
w.wait()
same(big, every(dtype=ml_dtypes.bfloat16).reshape(2 * n, 3))

# reduce_scatter: rank r gets the sum of everyone's r-th chunk
chunks = [torch.from_numpy(data(r + 10 * j)) for j in range(n)]
out = torch.zeros(2, 3, dtype=torch.float64)
dist.reduce_scatter(out, chunks, op=dist.ReduceOp.SUM)
same(out, sum(data(k + 10 * r) for k in range(n)))
whole = torch.from_numpy(np.concatenate([data(r + 10 * j) for j in range(n)]))
out = torch.zeros(2, 3, dtype=torch.float64)
dist.reduce_scatter_tensor(out, whole, op=dist.ReduceOp.AVG)
same(out, sum(data(k + 10 * r) for k in range(n)) / n)

# gather / scatter with root 0
lst = [torch.zeros(2, 3, dtype=torch.float64) for _ in range(n)] if r == 0 else None
dist.gather(torch.from_numpy(data(r)), lst, dst=0)
if r == 0:
    for k in range(n):
        same(lst[k], data(k))
out = torch.zeros(2, 3, dtype=torch.float64)
dist.scatter(out, [torch.from_numpy(data(100 + k)) for k in range(n)] if r == 0 else None,
             src=0)
same(out, data(100 + r))

# all_to_all: rank r sends k+1 rows of value 10r+k to rank k
ins = [torch.full((k + 1, 2), float(10 * r + k)) for k in range(n)]
outs = [torch.zeros(r + 1, 2) for _ in range(n)]
dist.all_to_all(outs, ins)
for k in range(n):
    same(outs[k], np.full((r + 1, 2), float(10 * k + r), np.float32))
inp = torch.arange(n * 2, dtype=torch.float64) + 100 * r
out = torch.zeros(n * 2, dtype=torch.float64)
dist.all_to_all_single(out, inp)
same(out, np.concatenate([np.arange(2 * r, 2 * r + 2) + 100.0 * k for k in range(n)]))

# object collectives
objs = [None] * n
dist.all_gather_object(objs, {"rank": r, "name": "x" * r})
assert objs == [{"rank": k, "name": "x" * k} for k in range(n)], objs
lst = [f"from {r}", r, [r]] if r == 1 else [None, None, None]
dist.broadcast_object_list(lst, src=1)
assert lst == ["from 1", 1, [1]], lst

# subgroups: the even ranks and the odd ranks
evens, odds = dist.new_group([k for k in range(n) if k % 2 == 0]), \
    dist.new_group([k for k in range(n) if k % 2 == 1])
mine = evens if r % 2 == 0 else odds
other = odds if r % 2 == 0 else evens
assert other is dist.GroupMember.NON_GROUP_MEMBER
assert dist.get_rank(mine) == r // 2 and dist.get_world_size(mine) == (n + 1 - r % 2) // 2
assert dist.get_rank(other) == -1
members = [k for k in range(n) if k % 2 == r % 2]
t = torch.from_numpy(data(r))
dist.all_reduce(t, group=mine)
same(t, sum(data(k) for k in members))
assert dist.all_reduce(torch.zeros(1), group=other) is None
t = torch.from_numpy(data(r))
dist.broadcast(t, src=members[-1], group=mine)  # src is a global rank, as in torch
same(t, data(members[-1]))
objs = [None] * len(members)
dist.all_gather_object(objs, r, group=mine)
assert objs == members
dist.barrier(group=mine)
dist.destroy_process_group(mine)

# mismatched calls raise on every rank, and the group keeps working after
for bad, label in ((lambda: dist.all_reduce(torch.zeros(2 + (r == 1)))), "shape"), \
                  ((lambda: dist.all_reduce(torch.zeros(2, dtype=torch.float32
                                                        if r else torch.float64))), "dtype"), \
                  ((lambda: dist.broadcast(torch.zeros(2), src=0)
                    if r else dist.all_reduce(torch.zeros(2))), "op"):
    try:
        bad()
    except RuntimeError as e:
        assert "Detected mismatch between collectives on ranks. Rank 0 is running collective: " \
               "CollectiveFingerPrint(OpType=" in str(e), e
        assert "but Rank 1 is running collective" in str(e), e
    else:
        raise AssertionError(f"no error for a {label} mismatch")
try:
    # rank 0 sends two rows to rank 1, which expects one
    dist.all_to_all_single(torch.zeros(n), torch.zeros(n + (r == 0)), [1] * n,
                           [1, 2] + [1] * (n - 2) if r == 0 else [1] * n)
except RuntimeError as e:
    assert "Detected mismatch between collectives on ranks" in str(e), e
else:
    raise AssertionError("no error for mismatched all_to_all splits")
t = torch.ones(3)
dist.all_reduce(t)
assert t.tolist() == [float(n)] * 3

dist.barrier()
works = [dist.all_reduce(torch.ones(4), async_op=True) for _ in range(3)]
barrier_work = dist.barrier(async_op=True)
for w in works:
    w.wait()
barrier_work.wait()
print(f"rank {r} collectives ok", flush=True)
dist.destroy_process_group()
assert not dist.is_initialized()
