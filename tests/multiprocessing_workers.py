"""Functions that tests/test_multiprocessing.py runs in child processes: module-level, so a
spawned child can import them. Each takes the library's name ("torch" or "retrograd") and
imports it, so one program runs on both."""

from __future__ import annotations

import importlib
import os
import signal
import sys


def put_results(i: int, lib: str, q, done) -> None:
    """Sends a tensor computed from its index and a leaf that requires grad, then waits until
    the parent has them (its descriptors are fetched from this process)."""
    torch = importlib.import_module(lib)
    x = torch.arange(3, dtype=torch.float64) * (i + 1)
    leaf = torch.full((2, 2), float(i), requires_grad=True)
    q.put((i, x, leaf, os.getpid()))
    done.wait()


def raise_error(i: int, lib: str) -> None:
    raise ValueError(f"bad value in process {i}")


def exit_with(i: int, how: str) -> None:
    if how == "sys.exit":
        sys.exit(3)
    if how == "os._exit":
        os._exit(5)
    os.kill(os.getpid(), signal.SIGKILL)


def hogwild_step(i: int, lib: str, model, lock) -> None:
    """An SGD step on a model whose parameters the parent shares: loss = sum(w * x) has the
    gradient x whatever w is, so the steps of both children add up in any order."""
    torch = importlib.import_module(lib)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    x = torch.arange(4, dtype=torch.float32).reshape(1, 4) + i
    loss = model(x).sum()
    loss.backward()
    with lock:  # two read-modify-writes of the same memory must not interleave
        opt.step()
