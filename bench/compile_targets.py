"""retrograd.compile's targets, measured side by side in one run.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE taskset -c 0 python bench/compile_targets.py

(a) the 300-op chain of bench/overhead.py, forward and backward, compiled, per op, against torch
    eager; (b) the 784-1024-1024-10 MLP step of bench/overhead.py (forward and loss compiled,
    backward through the compiled graph, SGD eager; and the whole step compiled, update
    included) against the hand-written NumPy step;
(c) the transformer block of bench/overhead.py compiled against torch eager; (d) the first call
    of a ~100-op function (capture, partition, codegen, with and without config.verify), the
    first call of a new compile of it whose compiled graph is cached (in memory; on disk after
    reset()), in CPU time, and one guard check; (e) tracemalloc peak of a
    16-layer tanh MLP forward and backward (gradient for the input) with float8 pack/unpack
    hooks: eager hooks, inlined at last/first use, inlined in the epilogue, against no hooks.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import overhead as O  # noqa: E402
from _timing import best_of, best_of_each  # noqa: E402

import retrograd  # noqa: E402
from retrograd.autograd.graph import saved_tensors_hooks  # noqa: E402
from retrograd.compiler import config  # noqa: E402
from retrograd.fx.experimental.proxy_tensor import make_fx  # noqa: E402

F = retrograd.nn.functional


def chain_fn(steps: int):
    def f(x, w):
        y = x
        for _ in range(steps):
            y = (y * w + w).tanh()
        return y.sum()

    return f


def chain_compiled(x0, w0):
    x = retrograd.tensor(x0, requires_grad=True)
    w = retrograd.tensor(w0, requires_grad=True)
    cf = retrograd.compile(chain_fn(O.CHAIN_STEPS))

    def run():
        cf(x, w).backward()
        x.grad = None
        w.grad = None

    return run


def bench_chain() -> None:
    rng = np.random.default_rng(0)
    x0 = rng.random(16, dtype=np.float32)
    w0 = rng.random(16, dtype=np.float32)
    fns = {"compiled": chain_compiled(x0, w0), "eager": O.chain_lib(retrograd, x0, w0)}
    if O.torch is not None:
        fns["torch"] = O.chain_lib(O.torch, x0, w0)
    t = {k: v / (O.CHAIN_STEPS * 3) for k, v in best_of_each(fns, 7, 20).items()}
    print("(a) 300-op chain fwd+bwd, us per op: " +
          ", ".join(f"{k} {v * 1e6:.2f}" for k, v in t.items()) +
          (f"; compiled / torch = {t['compiled'] / t['torch']:.2f}x" if "torch" in t else ""))


def mlp_loss(x, y, *params):
    """The MLP of bench/overhead.py and its cross-entropy, on (weight, bias) pairs."""
    h = x
    for i in range(0, len(params) - 2, 2):
        h = F.relu(F.linear(h, params[i], params[i + 1]))
    return F.cross_entropy(F.linear(h, params[-2], params[-1]), y)


def mlp_compiled(x0, y0, lr=0.01):
    params = [retrograd.tensor(p, requires_grad=True) for p in O.mlp_params()]
    x, y = retrograd.from_numpy(x0), retrograd.from_numpy(y0)
    cf = retrograd.compile(mlp_loss)

    def run():
        loss = cf(x, y, *params)
        for p in params:
            p.grad = None
        loss.backward()
        with retrograd.no_grad():
            for p in params:
                p.sub_(p.grad, alpha=lr)

    return run


def mlp_step_compiled(x0, y0, lr=0.01):
    """The whole step compiled: loss, autograd.grad and the update written into the parameters."""
    params = [retrograd.tensor(p, requires_grad=True) for p in O.mlp_params()]
    x, y = retrograd.from_numpy(x0), retrograd.from_numpy(y0)

    def step(x, y, *params):
        loss = mlp_loss(x, y, *params)
        grads = retrograd.autograd.grad(loss, params)
        with retrograd.no_grad():
            for p, g in zip(params, grads):
                p.sub_(g, alpha=lr)
        return loss.detach()

    cf = retrograd.compile(step)
    return lambda: cf(x, y, *params)


def bench_mlp() -> None:
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((O.BATCH, O.SIZES[0])).astype(np.float32)
    y0 = rng.integers(0, O.SIZES[-1], O.BATCH)
    t = best_of_each({"compiled": mlp_compiled(x0, y0), "whole step compiled":
                      mlp_step_compiled(x0, y0), "numpy": O.mlp_numpy(x0, y0),
                      "eager": O.mlp_lib(retrograd, x0, y0)}, 7, 3)
    print("(b) MLP step, ms: " + ", ".join(f"{k} {v * 1e3:.2f}" for k, v in t.items()) +
          f"; compiled / numpy = {t['compiled'] / t['numpy']:.2f}x, whole step compiled / "
          f"numpy = {t['whole step compiled'] / t['numpy']:.2f}x")


def block_compiled(x0):
    p = {k: retrograd.tensor(v, requires_grad=True) for k, v in O.block_params().items()}
    x = retrograd.tensor(x0, requires_grad=True)
    B, T, D, H = O.B, O.T, O.D, O.H

    def fwd(x, p):
        h = F.layer_norm(x, (D,), p["ln1_w"], p["ln1_b"])
        q, k, v = F.linear(h, p["qkv"], p["qkv_b"]).split(D, dim=-1)
        q, k, v = (t.reshape(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / np.sqrt(D // H))
        a = F.softmax(att, dim=-1) @ v
        a = a.transpose(1, 2).reshape(B, T, D)
        h2 = x + F.linear(a, p["proj"], p["proj_b"])
        m = F.layer_norm(h2, (D,), p["ln2_w"], p["ln2_b"])
        out = h2 + F.linear(F.gelu(F.linear(m, p["fc1"], p["fc1_b"])), p["fc2"], p["fc2_b"])
        return out.sum()

    cf = retrograd.compile(fwd)

    def run():
        cf(x, p).backward()
        for t in list(p.values()) + [x]:
            t.grad = None

    run.compiled = cf  # type: ignore[attr-defined]
    return run


def matmul_share(run, calls: int = 20) -> float:
    """Seconds per call that the compiled code spends in its matmuls: the generated forward's
    and backward's `_matmul` timed in place (the floor that no other change can lower)."""
    entry = next(iter(run.compiled.variants.values()))
    spaces = [g.fn.__globals__ for g in (entry.forward, entry.backward)]
    spent = [0.0]
    plain = spaces[0]["_matmul"]

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        out = plain(*args, **kwargs)
        spent[0] += time.perf_counter() - t0
        return out

    for ns in spaces:
        ns["_matmul"] = timed
    try:
        best = float("inf")
        for _ in range(5):
            spent[0] = 0.0
            for _ in range(calls):
                run()
            best = min(best, spent[0] / calls)
    finally:
        for ns in spaces:
            ns["_matmul"] = plain
    return best


def bench_block() -> None:
    x0 = np.random.default_rng(2).standard_normal((O.B, O.T, O.D)).astype(np.float32)
    fns = {"compiled": block_compiled(x0), "eager": O.block_lib(retrograd, x0)}
    if O.torch is not None:
        fns["torch"] = O.block_lib(O.torch, x0)
    t = best_of_each(fns, 7, 3)
    gemm = matmul_share(fns["compiled"])
    print("(c) transformer block fwd+bwd, ms: " +
          ", ".join(f"{k} {v * 1e3:.2f}" for k, v in t.items()) +
          (f"; compiled / torch = {t['compiled'] / t['torch']:.2f}x" if "torch" in t else "") +
          f"; the compiled code's matmuls alone {gemm * 1e3:.2f} ms" +
          (f" ({gemm / t['torch']:.2f}x torch's whole block)" if "torch" in t else ""))


def bench_compile_time() -> None:
    """CPU time (time.process_time: the machine is shared, and wall time counts other load).

    A cache hit is what torch calls a warm start of AOTAutogradCache: a function compiled
    before is compiled again (a new retrograd.compile, so no variant is held) and its compiled
    graph is loaded instead of built: from the in-memory cache in this process, and from the
    disk cache after retrograd.compiler.reset() emptied memory, as in a new process.
    """
    x = retrograd.rand(16, requires_grad=True)
    w = retrograd.rand(16, requires_grad=True)
    f = chain_fn(33)  # 99 forward ops, ~200 in the joint graph

    def first_call(verify: bool, keep_memory: bool, disk: bool) -> float:
        best = float("inf")
        for _ in range(5):
            if not keep_memory:
                retrograd.compiler.reset()
            config.verify, config.disk_cache = verify, disk
            cf = retrograd.compile(f)
            t0 = time.process_time()
            cf(x, w)
            best = min(best, time.process_time() - t0)
        config.verify, config.disk_cache = True, True
        return best

    cold = first_call(True, False, False)
    cold_nv = first_call(False, False, False)
    retrograd.compile(f)(x, w)  # in memory and on disk
    hit = first_call(True, True, True)
    disk_hit = first_call(True, False, True)
    cf = retrograd.compile(f)
    cf(x, w)
    slots = cf._param_slots()
    guard = best_of(lambda: cf.guard_key((x, w), {}, slots), 7, 2000)
    print(f"(d) ~100-op function, first call CPU ms: verify on {cold * 1e3:.1f}, verify off "
          f"{cold_nv * 1e3:.1f}; cache hit: in memory {hit * 1e3:.2f}, from disk after "
          f"reset() {disk_hit * 1e3:.2f}; guard key {guard * 1e6:.1f} us")


def bench_dynamic() -> None:
    """Dynamic sizes (NOTE [Dynamic shapes]), CPU ms: building the variant (two captures at
    probe sizes), a new size served by it (its check against eager), the recompile a new size
    costs without dynamic sizes, and a steady call of each variant."""
    f = chain_fn(33)
    xs = [retrograd.rand(n, requires_grad=True) for n in (16, 24, 40, 16)]
    ws = [retrograd.rand(n, requires_grad=True) for n in (16, 24, 40, 16)]

    def cpu(fn, *args) -> float:
        t0 = time.process_time()
        fn(*args)
        return time.process_time() - t0

    build = new_size = recompile = float("inf")
    for _ in range(5):
        retrograd.compiler.reset()
        config.disk_cache = False
        dyn = retrograd.compile(f, dynamic=True)
        build = min(build, cpu(dyn, xs[0], ws[0]))
        new_size = min(new_size, cpu(dyn, xs[1], ws[1]))
        static = retrograd.compile(f, dynamic=False)
        static(xs[0], ws[0])
        recompile = min(recompile, cpu(static, xs[1], ws[1]))
    config.disk_cache = True

    def step(fn, x, w):
        return lambda: fn(x, w).sum().backward()

    steady_dyn = best_of(step(dyn, xs[2], ws[2]), 7, 50)
    static(xs[2], ws[2])
    steady_static = best_of(step(static, xs[2], ws[2]), 7, 50)
    print(f"(f) dynamic sizes, ~100-op function, CPU ms: building the dynamic variant "
          f"{build * 1e3:.1f}; a new size on it {new_size * 1e3:.1f} (a recompile without "
          f"dynamic sizes {recompile * 1e3:.1f}); steady fwd+bwd call: dynamic "
          f"{steady_dyn * 1e3:.3f}, static {steady_static * 1e3:.3f}")


LAYERS, WIDTH, BATCH = 16, 256, 256


def _fp8_hooks():
    example = retrograd.randn(4, 4)

    def pack(t):
        return (t * 16.0).to(retrograd.float8_e4m3fn)

    def unpack(t):
        return t.to(retrograd.float32) / 16.0

    return make_fx(pack)(example), make_fx(unpack)(pack(example))


def bench_memory() -> None:
    rng = np.random.default_rng(3)
    # the input requires grad, the weights do not: what backward holds at the end (the
    # gradients of 16 weights would be as large as the saved activations) stays out of the peak
    ws = [retrograd.tensor((rng.standard_normal((WIDTH, WIDTH)) / 16).astype(np.float32))
          for _ in range(LAYERS)]
    x = retrograd.tensor(rng.standard_normal((BATCH, WIDTH)).astype(np.float32),
                         requires_grad=True)

    def mlp(x, *ws):
        h = x
        for w in ws:
            h = (h @ w).tanh()
        return h.sum()

    hooks = _fp8_hooks()

    def peak(fn, with_hooks: bool) -> int:
        fn(x, *ws).backward()  # compile, warm up
        tracemalloc.start()
        if with_hooks:
            with saved_tensors_hooks(*hooks):
                out = fn(x, *ws)
        else:
            out = fn(x, *ws)
        out.backward()
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        x.grad = None
        return top

    def compiled(placement: str):
        config.saved_tensors_hooks_placement = placement
        retrograd.compiler.reset()
        return retrograd.compile(mlp)

    def hooked(fn):
        def run(*a):
            with saved_tensors_hooks(*hooks):
                return fn(*a)
        return run

    base = peak(retrograd.compile(mlp), False)
    res = {"eager, no hooks": peak(mlp, False), "eager hooks": peak(hooked(mlp), True)}
    cf = compiled("last_use")
    res["inlined, last/first use"] = peak(hooked(cf), True)
    cf = compiled("epilogue")
    res["inlined, epilogue"] = peak(hooked(cf), True)
    config.saved_tensors_hooks_placement = "last_use"
    print(f"(e) tracemalloc peak, {LAYERS}-layer MLP {BATCH}x{WIDTH}, float8 hooks; compiled "
          f"without hooks {base / 2**20:.1f} MiB: " +
          ", ".join(f"{k} {v / 2**20:.1f} MiB ({v / base - 1:+.0%})" for k, v in res.items()))


def main() -> None:
    os.environ.setdefault("RETROGRAD_CACHE_DIR", tempfile.mkdtemp())
    for part in (bench_chain, bench_mlp, bench_block, bench_compile_time, bench_dynamic,
                 bench_memory):
        part()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
