"""Data-parallel training: all-reduce cost, an alpha-beta model of it, and the step time it
predicts at scale, with and without overlap and bucketing.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python bench/ddp.py

Launches itself under the launcher (1, 2 and 4 ranks; one BLAS thread per rank) and prints:
(a) MPICH's all-reduce time for 8 B .. 64 MiB at 2 ranks, and the fit t = alpha + n * beta
    (through retrograd.distributed.all_reduce and through mpi4py directly);
(b) the ring all-reduce model: 2(N-1) steps of alpha + (n/N) beta, each rank sending
    2(N-1)/N * n bytes; checked at 2 ranks with a ring written over isend/irecv whose sent
    bytes are counted (and whose result must equal all_reduce's);
(c) a virtual-clock simulation of one training step (backward on a compute resource, the
    all-reduces on a communication resource, as the pipeline schedules' `simulate` runs
    actions on per-rank clocks) for the digits CNN of `retrograd train` and a 100M-parameter
    transformer-like stack, at 8 .. 1024 ranks, for five ways to reduce the gradients;
(d) measured at 1, 2 and 4 ranks on the CNN: all-reduce after backward against all-reduce
    started from each parameter's post-accumulate-grad hook (waited at the end of backward).

Per-rank compute figures (forward, per-parameter gradient ready times in backward, Adam step,
matmul FLOP rate) are measured here, in one process with one BLAS thread.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

if __name__ == "__main__":  # one core per rank (before NumPy loads BLAS); not when imported
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

WORKER = "RETROGRAD_DDP_BENCH_WORKER"
BATCH = 32  # per rank, as `retrograd train`
SIZES = [8 * 4 ** k for k in range(13)]  # 8 B .. 128 MiB; the last is dropped below
SIZES = [s for s in SIZES if s <= 64 * 2 ** 20] + [64 * 2 ** 20]
FIRST_BUCKET, BUCKET = 1 * 2 ** 20, 25 * 2 ** 20
RANKS = [8, 16, 32, 64, 128, 256, 512, 1024]
STRATEGIES = ["per-param after", "flat after", "buckets after", "per-param overlap",
              "buckets overlap"]


# --- the model and its measured compute ------------------------------------------------------
def cnn_and_batch(seed: int = 0):
    import retrograd as rg
    from retrograd.train.model import build_cnn

    rg.manual_seed(seed)
    model = build_cnn(rg)
    rng = np.random.default_rng(seed)
    x = rg.tensor(rng.standard_normal((BATCH, 1, 8, 8)).astype(np.float32))
    y = rg.tensor(rng.integers(0, 10, BATCH))
    return model, x, y


def measure_compute(repeat: int = 60) -> dict:
    """The CNN's forward, backward, Adam step and each parameter's gradient ready time (from
    the start of backward), medians over `repeat` steps; and the float32 matmul FLOP rate."""
    import retrograd as rg

    model, x, y = cnn_and_batch()
    params = list(model.parameters())
    opt = rg.optim.Adam(params, lr=1e-3)
    ready: dict[int, float] = {}
    for i, p in enumerate(params):
        p.register_post_accumulate_grad_hook(
            lambda t, i=i: ready.__setitem__(i, time.perf_counter()))
    rows = []
    for _ in range(repeat):
        opt.zero_grad()
        t0 = time.perf_counter()
        loss = rg.nn.functional.cross_entropy(model(x), y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        t3 = time.perf_counter()
        rows.append([t1 - t0, t2 - t1, t3 - t2] + [ready[i] - t1 for i in range(len(params))])
    med = np.median(np.array(rows[5:]), axis=0)
    names = [n for n, _ in model.named_parameters()]
    n = 1024
    a = rg.randn(n, n)
    b = rg.randn(n, n)
    best = min(_time(lambda: a.mm(b)) for _ in range(7))
    return {"forward": med[0], "backward": med[1], "optimizer": med[2],
            "ready": list(med[3:]), "names": names,
            "bytes": [p.numel() * p.element_size() for p in params],
            "flops": 2 * n ** 3 / best}


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def transformer_grads(flops: float, layers: int = 8, d: int = 1024, tokens: int = 1024) -> dict:
    """A 100M-parameter stack (8 layers of attention + 4x MLP, d = 1024, float32 gradients):
    forward 2 * params * tokens FLOPs, backward twice that, at the measured matmul rate; each
    parameter's gradient is ready when the backward has gone through it (last layer first)."""
    shapes = [("ln1", 2 * d), ("qkv", 3 * d * d + 3 * d), ("proj", d * d + d), ("ln2", 2 * d),
              ("fc1", 4 * d * d + 4 * d), ("fc2", 4 * d * d + d)]
    params = [(f"layer{i}.{name}", n) for i in range(layers) for name, n in shapes]
    total = sum(n for _, n in params)
    clock, ready, sizes = 0.0, [], []
    for _, n in reversed(params):
        clock += 4 * n * tokens / flops
        ready.append(clock)
        sizes.append(4 * n)
    return {"params": total, "forward": 2 * total * tokens / flops, "backward": clock,
            "optimizer": 0.0, "ready": ready, "bytes": sizes}


# --- (b) and (c): the model of ring all-reduce and the step simulation ----------------------
def ring_time(nbytes: float, n_ranks: int, alpha: float, beta: float) -> float:
    """Ring all-reduce: reduce-scatter then all-gather, 2(N-1) steps of n/N bytes each."""
    if n_ranks == 1:
        return 0.0
    return 2 * (n_ranks - 1) * (alpha + nbytes / n_ranks * beta)


def ring_bytes_sent(nbytes: float, n_ranks: int) -> float:
    return 2 * (n_ranks - 1) / n_ranks * nbytes


def make_buckets(ready: list[float], sizes: list[int]) -> list[tuple[float, int]]:
    """Gradients in the order backward produces them (reverse of the model's), cut into buckets
    of 1 MB first, then 25 MB: (time the last gradient of the bucket is ready, bytes)."""
    buckets, cap, size, last = [], FIRST_BUCKET, 0, 0.0
    for t, n in sorted(zip(ready, sizes)):
        size, last = size + n, max(last, t)
        if size >= cap:
            buckets.append((last, size))
            cap, size, last = BUCKET, 0, 0.0
    if size:
        buckets.append((last, size))
    return buckets


def simulate_step(job: dict, n_ranks: int, alpha: float, beta: float, strategy: str) -> float:
    """One step on a virtual clock: forward, backward (gradients ready at job['ready']), the
    all-reduces one after another on the communication resource, then the optimizer. An
    all-reduce starts when its gradients are ready (overlap) or when backward ends, and when
    the previous one has finished."""
    ready, sizes, backward = job["ready"], job["bytes"], job["backward"]
    if strategy == "flat after":
        messages = [(backward, sum(sizes))]
    elif strategy.startswith("per-param"):
        messages = sorted(zip(ready, sizes))
    else:
        messages = make_buckets(ready, sizes)
    overlap = strategy.endswith("overlap")
    comm_free = 0.0  # both clocks start at the start of backward
    for t_ready, nbytes in messages:
        start = max(t_ready if overlap else backward, comm_free)
        comm_free = start + ring_time(nbytes, n_ranks, alpha, beta)
    return job["forward"] + max(backward, comm_free) + job["optimizer"]


def scaling_table(job: dict, alpha: float, beta: float) -> list[str]:
    compute = job["forward"] + job["backward"] + job["optimizer"]
    head = f"{'ranks':>6s} " + " ".join(f"{s:>19s}" for s in STRATEGIES)
    lines = [head, f"{'':6s} " + " ".join(f"{'step ms (eff)':>19s}" for _ in STRATEGIES)]
    for n in RANKS:
        cells = []
        for s in STRATEGIES:
            t = simulate_step(job, n, alpha, beta, s)
            cells.append(f"{t * 1e3:11.2f} ({compute / t:4.2f})")
        lines.append(f"{n:6d} " + " ".join(f"{c:>19s}" for c in cells))
    return lines


# --- the workers (under the launcher) -------------------------------------------------------
def _bench_allreduce(dist, rg, repeat_for) -> dict:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    out: dict = {"retrograd": [], "mpi4py": [], "retrograd median": [], "mpi4py median": []}
    warm = rg.zeros(1024)
    for _ in range(50):  # the first messages set up MPICH's shared-memory channels
        dist.all_reduce(warm)
        comm.Allreduce(warm.numpy(), np.empty(1024, np.float32))
    for nbytes in SIZES:
        t = rg.zeros(max(nbytes // 8, 1), dtype=rg.float64)
        raw = np.zeros(max(nbytes // 8, 1))
        res = np.empty_like(raw)
        reps = repeat_for(nbytes)
        for name, fn in (("retrograd", lambda t=t: dist.all_reduce(t)),
                         ("mpi4py", lambda raw=raw, res=res: comm.Allreduce(raw, res))):
            times = []
            for _ in range(reps):
                comm.Barrier()
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            out[name].append(float(np.min(times)))
            out[name + " median"].append(float(np.median(times)))
    return out


def _ring_allreduce(dist, rg, t) -> int:
    """Ring all-reduce (sum) of a 1-d tensor over isend/irecv; returns the bytes this rank
    sent. Chunk i is reduced around the ring, then the reduced chunks travel once more."""
    r, n = dist.get_rank(), dist.get_world_size()
    chunks = list(t.chunk(n))
    right, left = (r + 1) % n, (r - 1) % n
    sent = 0
    for step in range(2 * (n - 1)):
        # reduce-scatter: chunk r - step; all-gather: the reduced chunk r + 1, then onwards
        send_i = (r - step) % n if step < n - 1 else (r + 1 - (step - n + 1)) % n
        recv_i = (send_i - 1) % n
        out = chunks[send_i].contiguous()
        incoming = rg.empty_like(chunks[recv_i])
        works = [dist.isend(out, right), dist.irecv(incoming, left)]
        for w in works:
            w.wait()
        sent += out.numel() * out.element_size()
        if step < n - 1:
            chunks[recv_i].add_(incoming)
        else:
            chunks[recv_i].copy_(incoming)
    return sent


def _train_steps(dist, rg, mode: str, steps: int) -> list[float]:
    """`mode`: "after" (one blocking all-reduce per parameter after backward), "after async"
    (all started after backward, then waited) or "overlap" (each started from the parameter's
    post-accumulate-grad hook during backward, all waited after it)."""
    model, x, y = cnn_and_batch(seed=dist.get_rank())
    params = list(model.parameters())
    for p in params:  # same start on every rank
        dist.broadcast(p.data, 0)
    opt = rg.optim.Adam(params, lr=1e-3)
    pending: list = []
    if mode == "overlap":
        for p in params:
            p.register_post_accumulate_grad_hook(
                lambda t: pending.append(dist.all_reduce(t.grad, dist.ReduceOp.AVG,
                                                         async_op=True)))
    times = []
    for _ in range(steps):
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        rg.nn.functional.cross_entropy(model(x), y).backward()
        if mode == "after async":
            pending = [dist.all_reduce(p.grad, dist.ReduceOp.AVG, async_op=True)
                       for p in params]
        elif mode == "after":
            for p in params:
                dist.all_reduce(p.grad, dist.ReduceOp.AVG)
        for w in pending:
            w.wait()
        pending.clear()
        opt.step()
        times.append(time.perf_counter() - t0)
    # the replicas must still agree
    check = rg.cat([p.detach().flatten() for p in params]).to(rg.float64)
    mx, mn = check.clone(), check.clone()
    dist.all_reduce(mx, dist.ReduceOp.MAX)
    dist.all_reduce(mn, dist.ReduceOp.MIN)
    assert float((mx - mn).abs().max()) == 0.0, "replicas diverged"
    return times


def worker() -> None:
    import retrograd as rg
    import retrograd.distributed as dist

    dist.init_process_group("mpi")
    rank, n = dist.get_rank(), dist.get_world_size()
    result: dict = {"ranks": n}
    if os.environ[WORKER] == "comm":
        result["allreduce"] = _bench_allreduce(
            dist, rg, lambda nb: 200 if nb <= 2 ** 16 else (40 if nb <= 2 ** 22 else 8))
        checks = []
        model, _, _ = cnn_and_batch()
        cnn_bytes = sum(p.numel() for p in model.parameters()) * 8  # as float64
        for nbytes in (2 ** 10, cnn_bytes, 2 ** 20, 2 ** 24):
            g = np.random.default_rng(rank)
            start = g.standard_normal(nbytes // 8)
            want = rg.tensor(start)
            dist.all_reduce(want)
            best = float("inf")
            for _ in range(5):
                t = rg.tensor(start)
                dist.barrier()
                t0 = time.perf_counter()
                sent = _ring_allreduce(dist, rg, t)
                best = min(best, time.perf_counter() - t0)
                assert np.allclose(t.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
            checks.append([nbytes, sent, best])
        result["ring"] = checks
    modes = ("after", "after async", "overlap")
    for mode in modes:
        _train_steps(dist, rg, mode, 10)  # warm up
    steps: dict = {mode: [] for mode in modes}
    for _ in range(3):  # alternate, so that drifting load hits all alike
        for mode in modes:
            steps[mode] += _train_steps(dist, rg, mode, 40)
    for mode, ts in steps.items():
        arr = rg.tensor([float(np.median(ts))], dtype=rg.float64)
        dist.all_reduce(arr, dist.ReduceOp.MAX)  # a step is as slow as its slowest rank
        result[mode] = arr.item()
    if rank == 0:
        print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()


def launch(n: int, mode: str) -> dict:
    env = dict(os.environ, **{WORKER: mode})
    out = subprocess.run([sys.executable, "-m", "retrograd.distributed.run", "--nproc-per-node",
                          str(n), __file__], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stdout + out.stderr)
    line = next(s for s in out.stdout.splitlines() if s.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def fit(sizes: list[int], times: list[float]) -> tuple[float, float]:
    """alpha, beta minimizing the relative error of alpha + n * beta (a plain least-squares fit
    would ignore the small messages)."""
    a = np.array([[1.0, s] for s in sizes]) / np.array(times)[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(a, np.ones(len(sizes)), rcond=None)
    return float(alpha), float(beta)


def main() -> None:
    if os.environ.get(WORKER):
        worker()
        return
    print(f"machine: {os.cpu_count()} cores, load average "
          f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    job = measure_compute()
    comm = launch(2, "comm")

    print("\n(a) all-reduce at 2 ranks, float64 sum, us: best (median) of repeats")
    print(f"{'bytes':>10s} {'retrograd':>20s} {'mpi4py':>20s}")
    ar = comm["allreduce"]
    for i, s in enumerate(SIZES):
        print(f"{s:10d} {ar['retrograd'][i] * 1e6:10.1f} ({ar['retrograd median'][i] * 1e6:7.1f})"
              f" {ar['mpi4py'][i] * 1e6:10.1f} ({ar['mpi4py median'][i] * 1e6:7.1f})")
    fits = {name: fit(SIZES, ar[name]) for name in ("retrograd", "mpi4py")}
    for name, (alpha, beta) in fits.items():
        print(f"fit {name:9s}: alpha = {alpha * 1e6:.1f} us, beta = {beta * 1e9:.3f} ns/byte "
              f"({1 / beta / 1e9:.2f} GB/s)")
    alpha, beta = fits["mpi4py"]

    print("\n(b) ring all-reduce at 2 ranks over isend/irecv, bytes sent per rank (time: best "
          "of 5; the second size is the CNN's parameters as float64)")
    print(f"{'bytes':>10s} {'sent':>10s} {'model 2(N-1)/N n':>17s} {'time ms':>8s} "
          f"{'model ms':>9s}")
    for nbytes, sent, elapsed in comm["ring"]:
        print(f"{nbytes:10d} {sent:10d} {ring_bytes_sent(nbytes, 2):17.0f} "
              f"{elapsed * 1e3:8.3f} {ring_time(nbytes, 2, alpha, beta) * 1e3:9.3f}")

    cnn = {k: job[k] for k in ("forward", "backward", "optimizer", "ready", "bytes")}
    print(f"\n(c) CNN ({sum(job['bytes']) // 4} parameters, {sum(job['bytes'])} gradient bytes, "
          f"batch {BATCH} per rank): forward {job['forward'] * 1e3:.2f} ms, backward "
          f"{job['backward'] * 1e3:.2f} ms, Adam {job['optimizer'] * 1e3:.2f} ms; gradients "
          "ready after (ms into backward):")
    for name, t in zip(job["names"], job["ready"]):
        print(f"    {name:18s} {t * 1e3:6.2f}")
    nets = {"measured alpha-beta (shared memory)": (alpha, beta),
            "a 10 GB/s network, alpha 10 us": (10e-6, 1 / 10e9)}
    big = transformer_grads(job["flops"])
    print(f"matmul rate {job['flops'] / 1e9:.1f} GFLOP/s (1 thread); transformer-like stack: "
          f"{big['params'] / 1e6:.1f}M parameters, 1024 tokens per rank, forward "
          f"{big['forward']:.2f} s, backward {big['backward']:.2f} s")
    fast = dict(big, forward=big["forward"] / 100, backward=big["backward"] / 100,
                ready=[t / 100 for t in big["ready"]])
    cases = [("CNN", cnn, net) for net in nets] + \
        [("100M transformer-like", big, net) for net in nets] + \
        [("100M transformer-like, compute 100x faster than measured (an accelerator)", fast,
          "a 10 GB/s network, alpha 10 us")]
    for title, model, net in cases:
        a_, b_ = nets[net]
        print(f"\n{title}, {net}; efficiency = compute / step")
        print("\n".join(scaling_table(model, a_, b_)))

    print("\n(d) measured CNN training step, batch 32 per rank, median ms (slowest rank)")
    runs = {2: comm, 1: launch(1, "train"), 4: launch(4, "train")}
    print(f"{'ranks':>5s} {'after':>8s} {'after async':>12s} {'overlapped':>11s} "
          f"{'samples/s after / overlapped':>29s} {'predicted after / overlap':>26s}")
    for n in (1, 2, 4):
        r = runs[n]
        pred = [simulate_step(cnn, n, alpha, beta, s) * 1e3
                for s in ("per-param after", "per-param overlap")]
        print(f"{n:5d} {r['after'] * 1e3:8.2f} {r['after async'] * 1e3:12.2f} "
              f"{r['overlap'] * 1e3:11.2f} "
              f"{n * BATCH / r['after']:16.0f} / {n * BATCH / r['overlap']:10.0f} "
              f"{pred[0]:13.2f} / {pred[1]:.2f}")


if __name__ == "__main__":
    main()
