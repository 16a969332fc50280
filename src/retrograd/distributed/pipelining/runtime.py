"""Executing a rank's action list, in one process (all ranks interleaved) or over MPI.

A rank's execution is a generator: it yields whenever it must wait for a message that has not
arrived, so the in-process runner can switch to another rank, and the MPI transport simply
blocks (politely, see retrograd.distributed) inside recv.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from retrograd._tensor import Tensor, _wrap
from retrograd.distributed import RankFailure
from retrograd.distributed.pipelining.schedules.actions import (
    RECV_B,
    RECV_F,
    SEND_B,
    SEND_F,
    B,
    F,
    I,
    W,
)

_BLOCKED = object()


class ActionFailed(RuntimeError):
    """An action raised; names the rank and the action."""


# set to a list to record (action, start, end) of every compute action this process runs
timeline: list | None = None


def run_rank(rank: int, actions: list, stages: dict, layout: Any, transport: Any,
             chunks: list, targets: list | None, loss_fn: Any, progress: dict | None = None):
    """Generator executing `actions` for the local `stages` (stage index -> PipelineStage).
    `progress[rank]` counts the actions done (the in-process runner's deadlock check)."""
    received: dict = {}
    for action in actions:
        if progress is not None:
            progress[rank] = progress.get(rank, 0) + 1
        started = time.perf_counter() if timeline is not None else 0.0
        if action is None:
            continue
        s, kind, mb = action
        stage = stages[s]
        try:
            if kind is RECV_F or kind is RECV_B:
                while True:
                    value = transport.recv(kind, s, mb, _peer(layout, s, kind))
                    if value is not _BLOCKED:
                        break
                    yield
                received[(kind, mb, s)] = value
            elif kind is F:
                value = _forward_input(stage, stages, mb, chunks, received)
                target = targets[mb] if targets is not None and stage.is_last else None
                stage.forward(mb, value, target, loss_fn if stage.is_last else None)
            elif kind is SEND_F:
                out = stage.outputs[mb]
                transport.send(SEND_F, s, mb, out, layout.rank_of(s + 1))
            elif kind in (B, I):
                if not stage.is_last:
                    stage.output_grads[mb] = _output_grad(stage, stages, mb, received)
                (stage.backward if kind is B else stage.backward_input)(mb)
            elif kind is W:
                stage.backward_weight(mb)
            elif kind is SEND_B:
                g = stage.input_grads.pop(mb)
                transport.send(SEND_B, s, mb, g, layout.rank_of(s - 1))
            if timeline is not None and kind in (F, B, I, W):
                timeline.append((str(action), started, time.perf_counter()))
        except (ActionFailed, RankFailure):
            raise
        except Exception as e:
            raise ActionFailed(f"rank {rank} failed at action {action}: "
                               f"{type(e).__name__}: {e}") from e


def _peer(layout: Any, stage: int, kind: Any) -> int:
    return layout.rank_of(stage - 1 if kind is RECV_F else stage + 1)


def _forward_input(stage: Any, stages: dict, mb: int, chunks: list, received: dict) -> Tensor:
    if stage.is_first:
        return chunks[mb]
    got = received.pop((RECV_F, mb, stage.stage_index), None)
    if got is not None:
        return got
    prev = stages[stage.stage_index - 1]  # the previous stage lives on this rank
    return prev.outputs[mb].detach()


def _output_grad(stage: Any, stages: dict, mb: int, received: dict) -> Tensor:
    got = received.pop((RECV_B, mb, stage.stage_index), None)
    if got is not None:
        return got
    nxt = stages[stage.stage_index + 1]  # the next stage lives on this rank
    return nxt.input_grads.pop(mb)


# --- transports --------------------------------------------------------------------------------


class LocalTransport:
    """Messages between ranks of one process: a mailbox keyed by (kind, sending stage, mb)."""

    def __init__(self) -> None:
        self.box: dict = {}

    def send(self, kind: Any, stage: int, mb: int, tensor: Tensor, dst: int) -> None:
        key = ("F" if kind is SEND_F else "B", stage, mb)
        self.box[key] = _wrap(np.array(tensor.detach()._data, copy=True))

    def recv(self, kind: Any, stage: int, mb: int, src: int):
        key = ("F", stage - 1, mb) if kind is RECV_F else ("B", stage + 1, mb)
        return self.box.pop(key, _BLOCKED)


class MPITransport:
    """Point-to-point over retrograd.distributed: headers (shape, dtype) precede activations."""

    HEADER = 10

    def __init__(self, peers: list | None = None) -> None:
        from retrograd import distributed as dist

        self.dist = dist
        self.peers = peers  # pipeline rank -> world rank; None: they are the same
        self.pending: list = []  # sends in flight, with the buffers they read

    def _world(self, rank: int) -> int:
        return rank if self.peers is None else self.peers[rank]

    @staticmethod
    def _tag(kind: str, stage: int, mb: int, header: bool) -> int:
        return (((stage * 2 + (kind == "B")) * 1024 + mb) * 2 + header) % (2**20) + 1

    def send(self, kind: Any, stage: int, mb: int, tensor: Tensor, dst: int) -> None:
        from retrograd._dtype import _ALL

        k = "F" if kind is SEND_F else "B"
        data = _wrap(np.ascontiguousarray(tensor.detach()._data))
        header = np.zeros(self.HEADER, np.int64)
        header[0] = data._data.ndim
        header[1:1 + data._data.ndim] = data._data.shape
        header[-1] = _ALL.index(data.dtype)
        h = _wrap(header)
        dst = self._world(dst)
        self.pending.append((self.dist.isend(h, dst, tag=self._tag(k, stage, mb, True)), h))
        self.pending.append((self.dist.isend(data, dst, tag=self._tag(k, stage, mb, False)),
                             data))

    def recv(self, kind: Any, stage: int, mb: int, src: int):
        from retrograd._dtype import _ALL

        k, sender = ("F", stage - 1) if kind is RECV_F else ("B", stage + 1)
        src = self._world(src)
        header = _wrap(np.zeros(self.HEADER, np.int64))
        self.dist.irecv(header, src, tag=self._tag(k, sender, mb, True)).wait()
        h = header._data
        shape = tuple(int(x) for x in h[1:1 + int(h[0])])
        out = _wrap(np.empty(shape, _ALL[int(h[-1])].np))
        self.dist.irecv(out, src, tag=self._tag(k, sender, mb, False)).wait()
        return out

    def flush(self) -> None:
        for work, _ in self.pending:
            work.wait()
        self.pending.clear()


def run_local(orders: dict, stages_by_rank: dict, layout: Any, chunks: list,
              targets: list | None, loss_fn: Any) -> None:
    """All ranks in this process: advance each rank until it waits, round robin."""
    from retrograd.distributed.pipelining.schedules.plan import DeadlockError

    transport = LocalTransport()
    progress: dict = {}
    active = {r: run_rank(r, orders[r], stages_by_rank[r], layout, transport, chunks, targets,
                          loss_fn, progress) for r in orders}
    while active:
        before = dict(progress)
        for r in list(active):
            try:
                next(active[r])
            except StopIteration:
                del active[r]
        if active and progress == before:
            raise DeadlockError(f"in-process pipeline deadlocked; ranks {sorted(active)} wait")


def run_mpi(rank: int, actions: list, stages: dict, layout: Any, chunks: list,
            targets: list | None, loss_fn: Any, peers: list | None = None) -> None:
    """This rank's actions over MPI (`rank` in the pipeline's group, whose world ranks `peers`
    lists); on failure, every other rank is told before re-raising."""
    from retrograd import distributed as dist

    transport = MPITransport(peers)
    try:
        for _ in run_rank(rank, actions, stages, layout, transport, chunks, targets, loss_fn):
            pass  # MPI receives block; the generator never waits here
        transport.flush()
    except dist.RankFailure:
        raise
    except ActionFailed as e:
        dist.abort(str(e))
        raise

