"""Run by tests/distributed/test_ddp.py under the launcher (2 or 4 ranks): DDP's gradients
against the single-process full-batch gradients, computed on every rank with a private copy of
the model. Prints `rank <r> ddp ok` at the end."""

import copy

import numpy as np

import retrograd as torch
import retrograd.nn as nn
from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks
from retrograd.nn.parallel import DistributedDataParallel as DDP

dist = torch.distributed
dist.init_process_group("mpi")
r, n = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(0)
X = torch.from_numpy(rng.standard_normal((8 * n, 5)))
Y = torch.from_numpy(rng.standard_normal((8 * n, 3)))
mine = slice(8 * r, 8 * (r + 1))


class Net(nn.Module):
    def __init__(self, unused=False):
        super().__init__()
        self.a = nn.Linear(5, 16, dtype=torch.float64)
        self.b = nn.Linear(16, 16, dtype=torch.float64)
        self.c = nn.Linear(16, 3, dtype=torch.float64)
        self.register_buffer("scale", torch.ones(3, dtype=torch.float64))
        self.unused = nn.Linear(3, 3, dtype=torch.float64) if unused else None

    def forward(self, x):
        return self.c(torch.tanh(self.b(torch.tanh(self.a(x))))) * self.scale


def make(seed, unused=False):
    torch.manual_seed(seed)
    return Net(unused)


def loss_of(model, x, y):
    return ((model(x) - y) ** 2).mean()


def reference_grads(model, batches):
    """Full-batch gradients of a private copy: the sum over micro-batches of the mean losses."""
    ref = copy.deepcopy(model)
    for x, y in batches:
        loss_of(ref, x, y).backward()
    return {k: (None if p.grad is None else p.grad.numpy().copy())
            for k, p in ref.named_parameters()}


def check_grads(ddp, ref, tol=1e-10):
    for k, p in ddp.module.named_parameters():
        if ref[k] is None:
            assert p.grad is None, k
            continue
        assert np.allclose(p.grad.numpy(), ref[k], rtol=tol, atol=tol), \
            (k, np.abs(p.grad.numpy() - ref[k]).max())


# 1. construction broadcasts rank 0's parameters and buffers; bucket sizes; bucket views
for cap in (None, 1e-3, 2e-4):
    for as_view in (False, True):
        model = make(seed=r)  # every rank starts different
        model.scale.fill_(float(r + 1))
        ddp = DDP(model, bucket_cap_mb=cap, gradient_as_bucket_view=as_view)
        base = make(seed=0)
        for (k, p), q in zip(ddp.module.state_dict().items(), base.state_dict().values()):
            assert np.array_equal(p.numpy(), q.numpy()), k
        assert all(k.startswith("module.") for k in ddp.state_dict())
        assert len(ddp.reducer.buckets) == (1 if cap is None else 2 if cap == 1e-3 else 3), \
            (cap, len(ddp.reducer.buckets))
        ref = reference_grads(base, [(X, Y)])
        for _step in range(2):
            loss_of(ddp, X[mine], Y[mine]).backward()
            check_grads(ddp, ref)
            if as_view:
                for p in ddp.module.parameters():
                    b, k = ddp.reducer.where[[id(q) for q in ddp.reducer.params].index(id(p))]
                    assert np.shares_memory(p.grad._data, b.buffer._data)
                    assert p.grad is b.views[k]
            ddp.zero_grad(set_to_none=False)
            base.zero_grad()  # the reference does not change: the same step twice

# 2. several optimizer steps: every replica follows the single-process trajectory
model, base = make(0), make(0)
ddp = DDP(model, bucket_cap_mb=2e-4, gradient_as_bucket_view=True)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
opt_ref = torch.optim.SGD(base.parameters(), lr=0.1, momentum=0.9)
for _step in range(3):
    opt.zero_grad(set_to_none=False)
    loss_of(ddp, X[mine], Y[mine]).backward()
    opt.step()
    opt_ref.zero_grad()
    loss_of(base, X, Y).backward()
    opt_ref.step()
for p, q in zip(ddp.module.parameters(), base.parameters()):
    assert np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-10)

# 3. no_sync: the first micro-batch accumulates locally, the second synchronizes the sum
for as_view in (False, True):
    base = make(0)
    ddp = DDP(make(0), bucket_cap_mb=1e-3, gradient_as_bucket_view=as_view)
    half = [slice(8 * k, 8 * k + 4) for k in range(n)], [slice(8 * k + 4, 8 * k + 8)
                                                         for k in range(n)]
    with ddp.no_sync():
        loss_of(ddp, X[half[0][r]], Y[half[0][r]]).backward()
    grads_local = [p.grad.numpy().copy() for p in ddp.module.parameters()]
    loss_of(ddp, X[half[1][r]], Y[half[1][r]]).backward()
    first = torch.cat([X[s] for s in half[0]]), torch.cat([Y[s] for s in half[0]])
    second = torch.cat([X[s] for s in half[1]]), torch.cat([Y[s] for s in half[1]])
    check_grads(ddp, reference_grads(base, [first, second]))
    if n > 1:  # the no_sync gradients really were local (they differ between ranks)
        everyone = [None] * n
        dist.all_gather_object(everyone, grads_local[0])
        assert not np.allclose(everyone[0], everyone[1])

# 4. a parameter without gradient: torch's error at the next forward, unless
# find_unused_parameters (or static_graph) is set
ddp = DDP(make(0, unused=True), bucket_cap_mb=2e-4)
loss_of(ddp, X[mine], Y[mine]).backward()
try:
    ddp(X[mine])
except RuntimeError as e:
    msg = str(e)
    assert msg.startswith("Expected to have finished reduction in the prior iteration before "
                          "starting a new one. This error indicates that your module has "
                          "parameters that were not used in producing loss. You can enable "
                          "unused parameter detection by passing the keyword argument "
                          "`find_unused_parameters=True`"), msg
    assert f"Parameter indices which did not receive grad for rank {r}: 6, 7" in msg, msg
else:
    raise AssertionError("no error for a parameter without gradient")
for flag in ("find_unused_parameters", "static_graph"):
    for as_view in (False, True):
        base = make(0, unused=True)
        ddp = DDP(make(0, unused=True), bucket_cap_mb=2e-4, gradient_as_bucket_view=as_view,
                  **{flag: True})
        ref = reference_grads(base, [(X, Y)])
        for _step in range(2):
            loss_of(ddp, X[mine], Y[mine]).backward()
            check_grads(ddp, ref)
            ddp.zero_grad(set_to_none=False)

# a parameter used on one rank only gets the average of that rank's gradient and zeros
class Sometimes(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(5, 3, dtype=torch.float64)
        self.b = nn.Linear(5, 3, dtype=torch.float64)

    def forward(self, x, use_b):
        return self.a(x) + (self.b(x) if use_b else 0)


torch.manual_seed(0)
sm = Sometimes()
ref = copy.deepcopy(sm)
ddp = DDP(sm, find_unused_parameters=True)
ddp(X[mine], r == 0).sum().backward()
ref(X[slice(0, 8)], True).sum().backward()
assert np.allclose(sm.b.weight.grad.numpy(), ref.b.weight.grad.numpy() / n, atol=1e-12)

# static_graph: a parameter used in the first iteration must stay used
ddp = DDP(Sometimes(), static_graph=True)
ddp(X[mine], True).sum().backward()
ddp(X[mine], False).sum().backward()
try:
    ddp(X[mine], True)
except RuntimeError as e:
    assert str(e).startswith("Expected to have finished reduction in the prior iteration before "
                             "starting a new one. This error indicates that your training graph "
                             "has changed in this iteration"), e
    assert f"Parameter indices which did not receive grad for rank {r}: 2, 3" in str(e), e
else:
    raise AssertionError("no error for a changed static graph")

# 5. communication hooks
for hook, tol in ((default_hooks.allreduce_hook, 1e-10), (default_hooks.fp16_compress_hook, 2e-3),
                  (default_hooks.bf16_compress_hook, 2e-2)):
    base = make(0)
    ddp = DDP(make(0), bucket_cap_mb=2e-4)
    seen = []

    def recording(state, bucket, hook=hook, seen=seen, net=ddp.module):
        # bucket 0 (the last layer) starts while backward has not yet reached the first layer
        assert bucket.index() != 0 or net.a.weight.grad is None
        seen.append((bucket.index(), bucket.is_last(), len(bucket.parameters())))
        return hook(state, bucket)

    ddp.register_comm_hook(None, recording)
    loss_of(ddp, X[mine], Y[mine]).backward()
    ref = reference_grads(base, [(X, Y)])
    for k, p in ddp.module.named_parameters():
        assert np.allclose(p.grad.numpy(), ref[k], rtol=tol, atol=tol), \
            (hook.__name__, k, np.abs(p.grad.numpy() - ref[k]).max())
    assert [s[0] for s in seen] == [0, 1, 2] and [s[1] for s in seen] == [False, False, True]

# 6. broadcast_buffers: rank 0's buffers before every forward
ddp = DDP(make(0))
ddp.module.scale.fill_(float(r + 2))
ddp(X[mine])
assert ddp.module.scale.tolist() == [2.0] * 3
ddp = DDP(make(0), broadcast_buffers=False)
ddp.module.scale.fill_(float(r + 2))
ddp(X[mine])
assert ddp.module.scale.tolist() == [float(r + 2)] * 3

# 7. different models on different ranks: torch's error on every rank
try:
    DDP(nn.Linear(4, 3 + (r == n - 1), dtype=torch.float64))
except RuntimeError as e:
    assert str(e) == f"[{n - 1}]: params[0] in this process with sizes [{4}, 4] appears not to " \
                     "match sizes of the same param in process 0.", str(e)
else:
    raise AssertionError("no error for different models")

print(f"rank {r} ddp ok", flush=True)
dist.destroy_process_group()
