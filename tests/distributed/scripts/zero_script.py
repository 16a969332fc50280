"""Run under the launcher by tests/distributed/test_zero.py (2 ranks).

Every rank computes the same gradients, steps a ZeroRedundancyOptimizer and, on the side, an
unsharded optimizer on a copy of the model; each check prints "rank R ok NAME" or raises.
"""

import logging

import numpy as np

import retrograd as rg
import retrograd.distributed as dist
from retrograd.distributed.optim import ZeroRedundancyOptimizer

dist.init_process_group("mpi", timeout=60)
rank, world = dist.get_rank(), dist.get_world_size()
SHAPES = [(7, 5), (5,), (5, 3), (3,), (4, 4), (2,)]


def make_params(seed=0):
    g = np.random.default_rng(seed)
    return [rg.tensor(g.standard_normal(s), dtype=rg.float64, requires_grad=True)
            for s in SHAPES]


def set_grads(params, step):
    g = np.random.default_rng(100 + step)  # same on every rank, new each step
    for p in params:
        p.grad = rg.tensor(g.standard_normal(tuple(p.shape)), dtype=rg.float64)


def close(a, b):
    return all(np.allclose(x.detach().numpy(), y.detach().numpy(), rtol=0, atol=1e-12)
               for x, y in zip(a, b))


def ok(name):
    print(f"rank {rank} ok {name}", flush=True)


def trajectory(optim_class, bucket_view=False, steps=5, **kw):
    params, ref = make_params(), make_params()
    zero = ZeroRedundancyOptimizer(params, optim_class, parameters_as_bucket_view=bucket_view,
                                   **kw)
    plain = optim_class(ref, **kw)
    for s in range(steps):
        set_grads(params, s)
        set_grads(ref, s)
        zero.step()
        plain.step()
        assert close(params, ref), (optim_class.__name__, s)
    return params, zero, plain


# --- same trajectory as the unsharded optimizer --------------------------------------------
for cls, kw in ((rg.optim.Adam, {"lr": 0.1}), (rg.optim.SGD, {"lr": 0.05, "momentum": 0.9}),
                (rg.optim.AdamW, {"lr": 0.01, "weight_decay": 0.1})):
    for view in (False, True):
        trajectory(cls, view, **kw)
        ok(f"trajectory {cls.__name__} bucket_view={view}")

# --- the partition: greedy by size, state only for this rank's shard -------------------------
params, zero, plain = trajectory(rg.optim.Adam, lr=0.1)
owner = zero._param_to_rank
sizes = [0] * world
for p in sorted(params, key=lambda t: t.numel(), reverse=True):
    r = sizes.index(min(sizes))
    assert owner[p] == r
    sizes[r] += p.numel()
assert [owner[p] for p in params] == [0, 1, 1, 0, 1, 1], [owner[p] for p in params]
mine = {id(p) for p in params if owner[p] == rank}
assert {id(p) for p in zero.optim.state} == mine
assert len(zero.state) == 0  # the wrapper itself keeps none
for p in params:
    if owner[p] == rank:
        assert set(zero.optim.state[p]) == {"step", "exp_avg", "exp_avg_sq"}
ok("shard")

# --- state_dict needs consolidate_state_dict first ------------------------------------------
try:
    zero.state_dict()
    raise AssertionError("no error")
except RuntimeError as e:
    assert str(e) == ("Optimizer state has not been consolidated on this rank. Please call "
                      f"`consolidate_state_dict(to={rank})` on all ranks beforehand if you "
                      "meant to save the global state."), str(e)
ok("state_dict before consolidate")

# --- consolidate on rank 0: the unsharded optimizer's state_dict ------------------------------
zero.consolidate_state_dict(to=0)
if rank == 0:
    sd, ref_sd = zero.state_dict(), plain.state_dict()
    assert sorted(sd["state"]) == sorted(ref_sd["state"]) == list(range(len(params)))
    for i, st in ref_sd["state"].items():
        assert set(sd["state"][i]) == set(st)
        for k in st:
            assert np.array_equal(sd["state"][i][k].numpy(), st[k].numpy()), (i, k)
    groups = [{k: v for k, v in g.items()} for g in sd["param_groups"]]
    assert groups == ref_sd["param_groups"], (groups, ref_sd["param_groups"])
else:
    try:
        zero.state_dict()
        raise AssertionError("no error")
    except RuntimeError as e:
        assert "consolidate_state_dict(to=1)" in str(e)
ok("consolidate")

# --- round trip: rank 0's consolidated state, sent to all, loaded into fresh optimizers -------
obj = [zero.state_dict() if rank == 0 else None]
from retrograd.distributed.optim.zero_redundancy_optimizer import _broadcast_object  # noqa: E402

sd = _broadcast_object(obj[0], 0, None)
params2 = [p.detach().clone().requires_grad_(True) for p in params]
zero2 = ZeroRedundancyOptimizer(params2, rg.optim.Adam, lr=0.5)  # lr comes from the state
zero2.load_state_dict(sd)
assert zero2.param_groups[0]["lr"] == 0.1 and zero2.optim.param_groups[0]["lr"] == 0.1
assert {id(p) for p in zero2.optim.state} == {id(p) for p in params2 if zero2._param_to_rank[p]
                                             == rank}
for s in range(5, 8):
    set_grads(params, s)
    set_grads(params2, s)
    zero.step()
    zero2.step()
    assert close(params, params2)
ok("round trip")

# --- add_param_group: old parameters keep their owners, the trajectory still matches ---------
params, ref = make_params(), make_params()
zero = ZeroRedundancyOptimizer(params[:4], rg.optim.Adam, lr=0.1)
plain = rg.optim.Adam(ref[:4], lr=0.1)
before = dict(zero._param_to_rank)
zero.add_param_group({"params": params[4:], "lr": 0.2})
plain.add_param_group({"params": ref[4:], "lr": 0.2})
assert all(zero._param_to_rank[p] == r for p, r in before.items())
assert len(zero.param_groups) == 2
for s in range(4):
    set_grads(params, s)
    set_grads(ref, s)
    zero.step()
    plain.step()
    assert close(params, ref)
zero.zero_grad()
assert all(p.grad is None for p in params)
ok("add_param_group")

# --- closure and lr changes on the exposed groups reach the local optimizer --------------------
params, ref = make_params(), make_params()
zero = ZeroRedundancyOptimizer(params, rg.optim.SGD, lr=0.1)
plain = rg.optim.SGD(ref, lr=0.1)
zero.param_groups[0]["lr"] = 0.3
plain.param_groups[0]["lr"] = 0.3


def closure():
    set_grads(params, 0)
    return 1.5


set_grads(ref, 0)
assert zero.step(closure) == 1.5
plain.step()
assert close(params, ref) and zero.optim.param_groups[0]["lr"] == 0.3
ok("closure and lr")


# --- errors ------------------------------------------------------------------------------------
def raises(exc, message, fn):
    try:
        fn()
    except exc as e:
        assert str(e) == message, str(e)
        return
    raise AssertionError(f"no {exc.__name__}: {message}")


p64 = make_params()
raises(ValueError, "ZeroRedundancyOptimizer got an empty parameter list",
       lambda: ZeroRedundancyOptimizer([], rg.optim.SGD, lr=0.1))
raises(TypeError, "`params` argument should be an iterable of Tensors, but got "
       "retrograd.DoubleTensor", lambda: ZeroRedundancyOptimizer(p64[0], rg.optim.SGD, lr=0.1))
raises(TypeError, "`params` argument should be an iterable of Tensors or dicts, but got int",
       lambda: ZeroRedundancyOptimizer(3, rg.optim.SGD, lr=0.1))
raises(TypeError, "`params` argument should be an iterable of Tensors or dicts",
       lambda: ZeroRedundancyOptimizer([p64[0], {"params": p64[1:]}], rg.optim.SGD, lr=0.1))
raises(ValueError, "Each parameter group passed-in via `params` must have a 'params' key "
       "mapping to the parameters in the group",
       lambda: ZeroRedundancyOptimizer([{"lr": 0.1}], rg.optim.SGD, lr=0.1))
raises(ValueError, "ZeroRedundancyOptimizer only supports using the same dense type for all "
       "parameters but got both retrograd.DoubleTensor and retrograd.FloatTensor",
       lambda: ZeroRedundancyOptimizer([p64[0], rg.zeros(2, requires_grad=True)], rg.optim.SGD,
                                       lr=0.1))
ok("errors")

# --- overlap_with_ddp: nothing runs until DDP has initialized it ------------------------------
records = []
handler = logging.Handler()
handler.emit = records.append
logging.getLogger("retrograd.distributed.optim.zero_redundancy_optimizer").addHandler(handler)
params = make_params()
zero = ZeroRedundancyOptimizer(params, rg.optim.SGD, overlap_with_ddp=True, lr=0.1)
set_grads(params, 0)
before = [p.detach().clone() for p in params]
assert zero.step() is None and close(params, before)
assert records[-1].getMessage() == ("`step()` should not be included in the training loop when "
                                    "`overlap_with_ddp=True`")
not_ready = ("This method should not be called until this ZeroRedundancyOptimizer instance has "
             "been fully initialized")
raises(RuntimeError, not_ready, zero.consolidate_state_dict)
raises(RuntimeError, not_ready, zero.state_dict)
raises(RuntimeError, "ZeroRedundancyOptimizer with `overlap_with_ddp=True` only supports a "
       "single parameter group", lambda: zero.add_param_group({"params": make_params(1)}))
ok("overlap_with_ddp")

# --- parity with torch's ZeroRedundancyOptimizer over a gloo group of the same two ranks -------
import os  # noqa: E402
import socket  # noqa: E402

import torch  # noqa: E402
import torch.distributed as tdist  # noqa: E402
from torch.distributed.optim import ZeroRedundancyOptimizer as TorchZero  # noqa: E402

port = rg.tensor([0], dtype=rg.int64)
if rank == 0:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port.fill_(s.getsockname()[1])
dist.broadcast(port, 0)
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(int(port.item())))
tdist.init_process_group("gloo", rank=rank, world_size=world)
params = make_params()
tparams = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in params]
zero = ZeroRedundancyOptimizer(params, rg.optim.Adam, lr=0.1, weight_decay=0.01)
tzero = TorchZero(tparams, torch.optim.Adam, lr=0.1, weight_decay=0.01)
assert [zero._param_to_rank[p] for p in params] == [tzero._param_to_rank[p] for p in tparams]
for s in range(4):
    set_grads(params, s)
    for p, t in zip(params, tparams):
        t.grad = torch.tensor(p.grad.numpy())
    zero.step()
    tzero.step()
    assert all(np.allclose(p.detach().numpy(), t.detach().numpy(), rtol=0, atol=1e-12)
               for p, t in zip(params, tparams)), s
zero.consolidate_state_dict(to=1)
tzero.consolidate_state_dict(to=1)
if rank == 1:
    sd, tsd = zero.state_dict(), tzero.state_dict()
    assert list(sd["state"]) == list(tsd["state"])
    for i, st in tsd["state"].items():
        assert list(sd["state"][i]) == list(st)
        for k, v in st.items():
            assert np.allclose(sd["state"][i][k].numpy(), v.numpy(), rtol=0, atol=1e-12)
    assert sd["param_groups"] == tsd["param_groups"], (sd["param_groups"], tsd["param_groups"])
if rank == 0:  # consolidated on rank 1 only: both refuse here, with the same words
    try:
        tzero.state_dict()
        raise AssertionError("torch returned a state")
    except RuntimeError as e:
        raises(RuntimeError, str(e), zero.state_dict)
for name, fn, tfn in (
        ("empty", lambda: ZeroRedundancyOptimizer([], rg.optim.SGD, lr=0.1),
         lambda: TorchZero([], torch.optim.SGD, lr=0.1)),
        ("no params key", lambda: ZeroRedundancyOptimizer([{"lr": 0.1}], rg.optim.SGD, lr=0.1),
         lambda: TorchZero([{"lr": 0.1}], torch.optim.SGD, lr=0.1)),
        ("mixed", lambda: ZeroRedundancyOptimizer([params[0], {"params": params[1:]}],
                                                  rg.optim.SGD, lr=0.1),
         lambda: TorchZero([tparams[0], {"params": tparams[1:]}], torch.optim.SGD, lr=0.1))):
    try:
        tfn()
        raise AssertionError("torch accepted " + name)
    except (TypeError, ValueError) as e:
        expected = (type(e), str(e))
    try:
        fn()
        raise AssertionError("accepted " + name)
    except (TypeError, ValueError) as e:
        assert (type(e), str(e)) == expected, ((type(e), str(e)), expected)
# a group added later, with bucket views: same owners and trajectory as torch's
params = make_params(3)
tparams = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in params]
zero = ZeroRedundancyOptimizer(params[:3], rg.optim.SGD, parameters_as_bucket_view=True, lr=0.1,
                               momentum=0.9)
tzero = TorchZero(tparams[:3], torch.optim.SGD, parameters_as_bucket_view=True, lr=0.1,
                  momentum=0.9)
zero.add_param_group({"params": params[3:], "lr": 0.3})
tzero.add_param_group({"params": tparams[3:], "lr": 0.3})
assert [zero._param_to_rank[p] for p in params] == [tzero._param_to_rank[p] for p in tparams]
for s in range(3):
    set_grads(params, s)
    for p, t in zip(params, tparams):
        t.grad = torch.tensor(p.grad.numpy())
    zero.step()
    tzero.step()
    assert all(np.allclose(p.detach().numpy(), t.detach().numpy(), rtol=0, atol=1e-12)
               for p, t in zip(params, tparams)), s
tdist.destroy_process_group()
ok("torch parity")
dist.barrier()
