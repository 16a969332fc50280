"""What runs inside a DataLoader worker process: its WorkerInfo, the seeding, and the loop that
turns index batches from the main process into batches sent back through the result queue.

Batches leave the worker through multiprocessing's pickler. A tensor of SHARE_MIN_BYTES or
more is copied here into a fresh shared-memory segment (one memcpy), which the pickler then
sends as a file descriptor (retrograd.multiprocessing): the main process maps the memory
instead of reading and unpickling the bytes. Copying here spares the reduction moving the
tensor's memory into a segment in place (which looks for every alias among the live objects).
A smaller tensor is pickled by value: a segment and a passed descriptor cost a fixed ~0.3 ms
(most of it connecting to the worker to receive the descriptor), which only pays off for
batches of a few megabytes.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import random
import sys
import traceback
from typing import Any

import numpy as np

from retrograd import _shared_memory as shm
from retrograd._tensor import Tensor, _wrap
from retrograd.multiprocessing.reductions import NON_LEAF

# how often a worker waiting for indices checks that the main process is still there, and how
# long the main process waits for a batch before it checks that the workers are alive (torch's
# MP_STATUS_CHECK_INTERVAL)
MP_STATUS_CHECK_INTERVAL = 5.0

# tensors smaller than this are pickled by value (see the module docstring; measured: 1.6 MB
# batches cross as fast either way, 3 MB ones twice as fast through shared memory)
SHARE_MIN_BYTES = 1 << 21

_worker_info: WorkerInfo | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """Information about the current DataLoader worker process (torch's WorkerInfo)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


def get_worker_info() -> WorkerInfo | None:
    """The WorkerInfo of the DataLoader worker this runs in; None in the main process."""
    return _worker_info


@dataclasses.dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's iterable dataset replica has ended."""

    worker_id: int


@dataclasses.dataclass(frozen=True)
class _ResumeIteration:
    """Persistent workers: start a new epoch."""

    seed: int | None = None


class KeyErrorMessage(str):
    """A str whose repr is itself, so a KeyError carrying a traceback prints it readably."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, to raise again in another process."""

    def __init__(self, exc_info: Any = None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        # the formatted text only: a traceback object cannot cross processes
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # a type that cannot be built from one message
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            # no cycle through this frame: the loader's iterator, in a frame of the traceback,
            # is freed (and its workers stopped) as soon as the exception is
            del exception


class _ManagerWatchdog:
    """Tells a worker whether the process that started it still runs."""

    def __init__(self) -> None:
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self) -> bool:
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """The four 32-bit words torch seeds NumPy's global generator with in a worker: base_seed and
    the worker id hashed and mixed as NumPy's SeedSequence does."""
    mask = 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    mult = [0x43B0D7E5]

    def hashmix(value: int) -> int:
        value = (value ^ mult[0]) & mask
        mult[0] = (mult[0] * 0x931E8875) & mask
        value = (value * mult[0]) & mask
        return (value ^ (value >> 16)) & mask

    def mix(x: int, y: int) -> int:
        r = ((0xCA01F9DD * x) - (0x4973F715 * y)) & mask
        return (r ^ (r >> 16)) & mask

    pool = [hashmix(e) for e in entropy]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hashmix(pool[src]))
    out = []
    mult_b = 0x8B51F9DD
    for value in pool:
        value = (value ^ mult_b) & mask
        mult_b = (mult_b * 0x58F38DED) & mask
        value = (value * mult_b) & mask
        out.append((value ^ (value >> 16)) & mask)
    return out


def _seed_worker(seed: int, base_seed: int, worker_id: int) -> None:
    from retrograd._config import set_num_threads
    from retrograd.random import manual_seed

    # one thread per worker, as torch's workers: the workers are the parallelism
    set_num_threads(1)
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(_numpy_seed(base_seed, worker_id))


class _ByValue:
    """Pickles as the tensor it holds would without the shared-memory reduction."""

    __slots__ = ("t",)

    def __init__(self, t: Tensor) -> None:
        self.t = t

    def __reduce__(self) -> Any:
        return self.t.__reduce_ex__(4)


def _to_segment(t: Tensor) -> Tensor:
    """t's values in a new shared segment (a contiguous copy)."""
    a = t._data
    mapping = shm.new_segment(a.nbytes)
    out = np.ndarray(a.shape, a.dtype, buffer=mapping)
    out[...] = a
    return _wrap(out)


def _for_sending(data: Any) -> Any:
    """data with its plain tensors placed for the trip to the main process: small ones by
    value, the others in shared segments. Containers are rebuilt as the same types."""
    if type(data) is Tensor:
        if data._requires_grad:
            if not data.is_leaf:
                raise RuntimeError(NON_LEAF)
            return data  # the reduction keeps requires_grad
        if data._data.nbytes < SHARE_MIN_BYTES:
            return _ByValue(data)
        return data if shm.is_shared(data._data) else _to_segment(data)
    if type(data) in (list, tuple):
        return type(data)(_for_sending(d) for d in data)
    if type(data) is dict:
        return {k: _for_sending(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_for_sending(d) for d in data))
    return data


def _worker_loop(is_iterable: bool, dataset: Any, index_queue: Any, data_queue: Any,
                 done_event: Any, auto_collation: bool, collate_fn: Any, drop_last: bool,
                 base_seed: int, init_fn: Any, worker_id: int, num_workers: int,
                 persistent_workers: bool) -> None:
    # imported here: the loader module imports this one
    import retrograd.multiprocessing  # noqa: F401  (the tensor reductions)
    from retrograd.utils.data.dataloader import _IterableFetcher, _MapFetcher

    def new_fetcher() -> Any:
        fetcher = _IterableFetcher if is_iterable else _MapFetcher
        return fetcher(dataset, auto_collation, collate_fn, drop_last)

    try:
        seed = base_seed + worker_id
        _seed_worker(seed, base_seed, worker_id)
        global _worker_info
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_exception = None
        fetcher: Any = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = new_fetcher()
        except Exception:
            init_exception = ExceptionWrapper(where=where)
        iteration_end = False
        watchdog = _ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break  # the loader was dropped and its final None did not come
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = new_fetcher()
                continue
            if r is None:
                break  # shutting down
            if done_event.is_set() or iteration_end:
                continue  # nothing more is wanted from this epoch
            idx, index = r
            data: Any
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = _for_sending(fetcher.fetch(index))
                except Exception as e:
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        # the main process reads no more: do not wait at exit to flush the queue
        data_queue.cancel_join_thread()
        data_queue.close()
