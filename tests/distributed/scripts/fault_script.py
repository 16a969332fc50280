"""Run by tests/distributed/test_faults.py through the launcher (2 ranks).

argv: a mode (what goes wrong), then a token the test uses to find this job's processes.
Every rank first prints `pid <rank> <pid> <parent pid>` so the test can check that it and the
MPI proxy that started it are gone afterwards.
"""

import os
import signal
import sys
import time

import retrograd as rg
import retrograd.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=1 if mode in ("recv_timeout", "send_timeout",
                                                       "send_timeout_caught") else 300)
r = dist.get_rank()
print(f"pid {r} {os.getpid()} {os.getppid()}", flush=True)
dist.barrier()


def wait_for_other(tag: int = 99) -> None:
    """Block on a message the other rank never sends (a long timeout of its own)."""
    dist.irecv(rg.zeros(1), 1 - r, tag=tag).wait(timeout=120)


if mode == "raise":
    if r == 1:
        raise ValueError("injected")
    wait_for_other()
elif mode == "recv_timeout":
    if r == 0:
        dist.recv(rg.zeros(1), 1, tag=5)  # rank 1 never sends: times out after 1 s
    wait_for_other()
elif mode == "pipeline_between_steps":
    from tests.distributed.pipeline_model import LinearTanh, batch, mse

    from retrograd.distributed.pipelining import PipelineStage, Schedule1F1B

    x, y = batch()
    stage = PipelineStage(LinearTanh(seed=r), r, 2)
    sched = Schedule1F1B(stage, 4, loss_fn=mse)
    sched.step(x if r == 0 else None, target=y if r == 1 else None)
    print(f"rank {r} step 1 done", flush=True)
    if r == 1:
        raise ValueError("between steps")
    sched.step(x, target=None)  # waits for rank 1's gradients
elif mode in ("send_timeout", "send_timeout_caught"):
    if r == 0:
        try:
            dist.send(rg.ones(1_000_000), 1, tag=3)  # a large send nobody receives
        except RuntimeError as e:
            if mode == "send_timeout":
                raise
            print(f"rank 0 caught: {e}", flush=True)
    elif mode == "send_timeout":
        wait_for_other()
    else:
        time.sleep(1.5)
    dist.destroy_process_group()
    print(f"rank {r} clean", flush=True)
elif mode == "tag_32000":
    if r == 0:
        dist.send(rg.tensor([7.0, 8.0, 9.0]), 1, tag=32000)
    else:
        got = rg.zeros(3)
        dist.irecv(got, 0, tag=32000).wait(timeout=20)
        print(f"rank 1 got {got.tolist()}", flush=True)
    # no destroy_process_group: the exit frees what the group holds
elif mode == "size_mismatch":
    if r == 0:
        dist.send(rg.ones(10), 1, tag=4)
    else:
        try:
            dist.recv(rg.zeros(3), 0, tag=4)
        except RuntimeError as e:
            print(f"rank 1 caught: {e}", flush=True)
    dist.barrier()
    print(f"rank {r} clean", flush=True)
elif mode == "sigkill":
    if r == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    wait_for_other()
elif mode == "sleep":
    print(f"rank {r} ready", flush=True)
    time.sleep(120)
elif mode in ("collective_raise", "ddp_raise", "ddp_kill"):
    import retrograd.nn as nn
    from retrograd.nn.parallel import DistributedDataParallel as DDP

    if mode == "collective_raise":
        if r == 1:
            raise ValueError("before all_reduce")
        dist.all_reduce(rg.ones(3))  # rank 1 never joins

    class Fail(rg.autograd.Function):
        """Identity whose backward fails (or dies) on rank 1, mid-backward."""

        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            if r == 1:
                if mode == "ddp_kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                raise ValueError("in backward")
            return g

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(4, 4)
            self.b = nn.Linear(4, 4)

        def forward(self, x):
            return self.b(Fail.apply(self.a(x)))

    ddp = DDP(Net(), bucket_cap_mb=1e-5)  # bucket b's all-reduce starts before a's backward
    ddp(rg.ones(2, 4)).sum().backward()
    print(f"rank {r} finished a step it should not have", flush=True)
