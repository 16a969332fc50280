"""One pass over a DataLoader whose batches are loaded by worker processes.

The main process draws index batches from the batch sampler and hands them to the workers in
turn, keeping prefetch_factor * num_workers of them in flight; each result comes back tagged
with its place in the sampler's order, so results arriving early are held until their turn
(in_order=True) or handed out as they come (in_order=False). Workers are stopped when the pass
ends or the iterator is dropped, unless they persist across epochs (persistent_workers), in
which case a new pass tells them to start over.
"""

from __future__ import annotations

import itertools
import os
import pickle
import queue
from typing import Any

import retrograd.multiprocessing as rmp
from retrograd import _warning_site as _ws
from retrograd.utils.data import _signal_handling
from retrograd.utils.data._worker import (
    MP_STATUS_CHECK_INTERVAL,
    ExceptionWrapper,
    _IterableDatasetStopIteration,
    _ResumeIteration,
    _worker_loop,
)
from retrograd.utils.data.dataloader import _BaseDataLoaderIter

_PICKLE_ERROR = (
    "Got pickle error when attempting to start a worker Process. This might be because the "
    "worker Process arguments are not picklable. Python 3.14+ changed the multiprocessing start "
    "method in non-Mac POSIX platforms to 'forkserver', which requires the worker Process "
    "arguments to be picklable. You can also try multiprocessing.set_start_method('fork').")


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: Any) -> None:
        super().__init__(loader)
        # a forked child holding a copy of this iterator must not stop its workers
        self._owner_pid = os.getpid()
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if self._prefetch_factor <= 0:
            raise AssertionError(
                "prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        ctx = loader.multiprocessing_context or rmp
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = ctx.Queue()
        self._worker_pids_set = False
        self._shutdown = False
        self._workers_done_event = ctx.Event()
        self._index_queues: list = []
        self._workers: list = []
        self._workers_status: list[bool] = []
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            # the main process must not wait at exit for a worker to take its indices
            index_queue.cancel_join_thread()
            w = ctx.Process(target=_worker_loop, args=(
                self._is_iterable, self._dataset, index_queue, self._worker_result_queue,
                self._workers_done_event, self._auto_collation, self._collate_fn,
                self._drop_last, self._base_seed, self._worker_init_fn, i, self._num_workers,
                self._persistent_workers))
            # a daemon is stopped when the main process exits: no orphans
            w.daemon = True
            try:
                w.start()
            except (TypeError, AttributeError, pickle.PicklingError):
                _ws.warn(_PICKLE_ERROR, stacklevel=4)
                raise
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._data_queue = self._worker_result_queue
        _signal_handling._set_worker_pids(id(self), tuple(w.pid for w in self._workers))
        _signal_handling._set_SIGCHLD_handler()
        self._worker_pids_set = True
        self._reset(loader, first_iter=True)

    def _reset(self, loader: Any, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to send
        self._rcvd_idx = 0  # the next task to return (in order)
        # task -> (worker,) while outstanding, (worker, data) once it arrived out of order
        self._task_info: dict[int, tuple] = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(_ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float = MP_STATUS_CHECK_INTERVAL) -> tuple[bool, Any]:
        try:
            return True, self._data_queue.get(timeout=timeout)
        except Exception as e:
            # the wait ended without data (or a dead worker's signal interrupted it): tell a
            # slow batch from a worker that is gone
            failed = []
            for worker_id, w in enumerate(self._workers):
                if self._workers_status[worker_id] and not w.is_alive():
                    failed.append(w)
                    self._mark_worker_as_unavailable(worker_id)
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") \
                    from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self) -> Any:
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if ok:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            ok, data = self._try_get_data()
            if ok:
                return data

    def _next_data(self) -> Any:
        while True:
            # skip tasks whose worker ended (an iterable replica ran out) without an answer
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._is_iterable and isinstance(data, _IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker still active
            worker = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker]:
                if self._in_order:
                    break
                # out of order: do not pile tasks on a slow worker
                if self._workers_num_tasks[worker] < max_tasks // sum(self._workers_status):
                    break
        else:
            return
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._workers_num_tasks[worker] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data: Any, worker_id: int) -> Any:
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int, shutdown: bool = False) -> None:
        # the worker stops at None; with shutdown it may still be busy, and done_event (set)
        # makes it skip what is left
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if (_signal_handling.python_exiting or getattr(self, "_shutdown", True)
                or os.getpid() != self._owner_pid):
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            if not self._workers_status:  # starting the workers failed
                self._workers_status = [True] * len(self._workers)
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            if self._worker_pids_set:
                _signal_handling._remove_worker_pids(id(self))
                self._worker_pids_set = False
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self) -> None:
        self._shutdown_workers()

