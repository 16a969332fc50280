"""DataLoader (torch.utils.data.DataLoader) and its collate functions.

With num_workers=0 batches are loaded in the calling process. With num_workers > 0 that many
worker processes are started (with multiprocessing_context, else the default context) and
load batches in parallel: see _multiprocessing_iter (the main process's side) and _worker
(the workers' side); results come in the sampler's order (in_order=True) and equal the
num_workers=0 ones for a map-style dataset.

A map-style TensorDataset batched by the default collate_fn takes a fast path (in the calling
process or in each worker): each tensor is gathered once with np.take instead of indexing every
sample and stacking them; the result is the one default_collate would build (a list of
contiguous batch tensors).
"""

from __future__ import annotations

import collections.abc
import copy
import multiprocessing as python_multiprocessing
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor, _wrap
from retrograd.utils.data._worker import get_worker_info
from retrograd.utils.data.dataset import Dataset, IterableDataset, TensorDataset
from retrograd.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info",
           "default_collate_fn_map", "collate"]

_np_str_obj = re.compile(r"[SaUO]")
_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")


# --- collate --------------------------------------------------------------------------------

def _as_tensor(data: Any) -> Tensor:
    from retrograd._ops.creation import as_tensor

    return as_tensor(data)


def default_convert(data: Any) -> Any:
    """Converts NumPy arrays and scalars (also inside mappings and sequences) to tensors."""
    t = type(data)
    if isinstance(data, Tensor):
        return data
    if t.__module__ == "numpy" and t.__name__ not in ("str_", "string_"):
        if t.__name__ == "ndarray" and _np_str_obj.search(data.dtype.str) is not None:
            return data
        return _as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return t(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(template: collections.abc.Mapping, values: dict) -> Any:
    """A mapping of template's type holding `values` (a plain dict if it cannot be built)."""
    try:
        if isinstance(template, collections.abc.MutableMapping):
            clone = copy.copy(template)
            clone.update(values)
            return clone
        return type(template)(values)
    except TypeError:
        return values


def _rebuild_sequence(template: collections.abc.Sequence, values: list) -> Any:
    """A sequence of template's type holding `values` (a list if it cannot be built)."""
    try:
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(template)(values)
    except TypeError:
        return values


def collate(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    """Merges a list of samples into a batch, recursing into mappings and sequences; leaf
    types are handled by collate_fn_map (type or tuple of types -> fn(batch, collate_fn_map))."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type, fn in collate_fn_map.items():
            if isinstance(elem, collate_type):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {k: collate([d[k] for d in batch],
                                                  collate_fn_map=collate_fn_map) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(list(s), collate_fn_map=collate_fn_map)
                           for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(list(s), collate_fn_map=collate_fn_map) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild_sequence(elem, columns)
    raise TypeError(_COLLATE_ERROR.format(elem_type))


def collate_tensor_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    from retrograd._ops.shape import stack

    return stack(batch, 0)


def collate_numpy_array_fn(batch: list, *, collate_fn_map: dict | None = None) -> Any:
    elem = batch[0]
    if _np_str_obj.search(elem.dtype.str) is not None:
        raise TypeError(_COLLATE_ERROR.format(elem.dtype))
    return collate([_as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    return _as_tensor(batch)


def collate_float_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    from retrograd import _dtype as D
    from retrograd._ops.creation import tensor

    return tensor(batch, dtype=D.float64)


def collate_int_fn(batch: list, *, collate_fn_map: dict | None = None) -> Tensor:
    from retrograd._ops.creation import tensor

    return tensor(batch)


def collate_str_fn(batch: list, *, collate_fn_map: dict | None = None) -> list:
    return batch


default_collate_fn_map: dict = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch: list) -> Any:
    """Stacks tensors, arrays and numbers along a new first dimension, recursing into dicts,
    (named)tuples and lists: a list of (x, y) tuples becomes [xs, ys]."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


# --- fetching -------------------------------------------------------------------------------

def _gather_tensor_dataset(dataset: TensorDataset, indices: list) -> list | None:
    """default_collate([dataset[i] for i in indices]) in one gather per tensor; None when the
    fast path does not apply (a tensor requiring grad must get its stack graph)."""
    tensors = dataset.tensors
    if any(t._requires_grad for t in tensors):
        return None
    idx = np.asarray(indices, dtype=np.intp)
    return [_wrap(np.ascontiguousarray(np.take(t._data, idx, axis=0))) for t in tensors]


class _MapFetcher:
    def __init__(self, dataset: Dataset, auto_collation: bool, collate_fn: Callable,
                 drop_last: bool) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.fast = (auto_collation and collate_fn is default_collate
                     and isinstance(dataset, TensorDataset)
                     and type(dataset).__getitem__ is TensorDataset.__getitem__
                     and getattr(type(dataset), "__getitems__", None) is None)

    def fetch(self, index: Any) -> Any:
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.fast and index:
            out = _gather_tensor_dataset(self.dataset, index)
            if out is not None:
                return out
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(index) if getitems else [self.dataset[i] for i in index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset: IterableDataset, auto_collation: bool, collate_fn: Callable,
                 drop_last: bool) -> None:
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if len(data) == 0 or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


class _InfiniteConstantSampler(Sampler):
    """Yields None forever: an iterable dataset decides when the epoch ends."""

    def __iter__(self):
        while True:
            yield None


class _BaseDataLoaderIter:
    """What a pass over a DataLoader keeps, loaded in this process or by workers."""

    def __init__(self, loader: DataLoader) -> None:
        from retrograd._ops.random import random_int64

        self._dataset = loader.dataset
        self._is_iterable = loader._is_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # the workers' seeds are base_seed + worker id; drawn once per iterator from the
        # loader's generator, as torch does (so a seeded generator's stream stays in step)
        self._base_seed = random_int64(loader.generator)
        self._persistent_workers = loader.persistent_workers
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._num_yielded = 0

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self) -> Any:
        return next(self._sampler_iter)

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        expected = self._IterableDataset_len_called
        if self._is_iterable and expected is not None and self._num_yielded > expected:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{expected}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            _ws.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """A pass whose batches are loaded in the calling process."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        fetcher = _IterableFetcher if self._is_iterable else _MapFetcher
        self._fetcher = fetcher(self._dataset, self._auto_collation, self._collate_fn,
                                self._drop_last)

    def _next_data(self) -> Any:
        return self._fetcher.fetch(self._next_index())


class DataLoader:
    """Iterates over a dataset in batches (torch.utils.data.DataLoader).

    batch_size/shuffle/sampler/batch_sampler/drop_last/collate_fn/generator behave as in torch;
    shuffling draws from `generator` (a retrograd.Generator) or the global generator.
    num_workers > 0 loads batches in that many worker processes (multiprocessing_context,
    worker_init_fn, prefetch_factor, persistent_workers, timeout and in_order as in torch).
    """

    _initialized = False

    def __init__(self, dataset: Dataset, batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler | Iterable | None = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context: Any = None,
                 generator: Any = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        _check_worker_args(num_workers, timeout, prefetch_factor, persistent_workers)
        if pin_memory:
            _ws.warn("'pin_memory' argument is set as true but no accelerator is found, "
                     "then device pinned memory won't be used.", stacklevel=2)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None \
            else prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.__multiprocessing_context = None
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._is_iterable = isinstance(dataset, IterableDataset)
        if self._is_iterable:
            _check_iterable_args(shuffle, sampler, batch_sampler)
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator: _BaseDataLoaderIter | None = None
        self._initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self) -> Any:
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context: Any) -> None:
        if multiprocessing_context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(multiprocessing_context, str):
                methods = python_multiprocessing.get_all_start_methods()
                if multiprocessing_context not in methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={multiprocessing_context!r}")
                multiprocessing_context = python_multiprocessing.get_context(
                    multiprocessing_context)
            if not isinstance(multiprocessing_context, python_multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={multiprocessing_context}")
        self.__multiprocessing_context = multiprocessing_context

    def check_worker_number_rationality(self) -> None:
        """Warns when more workers are asked for than there are CPUs this process may use."""
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        suggest = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        if suggest is None:
            advice = ("DataLoader is not able to compute a suggested max number of worker in "
                      "current system.")
        else:
            advice = (f"Our suggested max number of worker in current system is {suggest}"
                      f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
                      "which is smaller than what this DataLoader is going to create.")
        _ws.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                 f"total. {advice} Please be aware that excessive worker creation might "
                 "get DataLoader running slow or even freeze, lower the worker number to "
                 "avoid potential slowness/freeze if necessary.", stacklevel=2)

    def __setattr__(self, attr: str, val: Any) -> None:
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        from retrograd.utils.data._multiprocessing_iter import _MultiProcessingDataLoaderIter

        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> _BaseDataLoaderIter:
        # persistent workers: one iterator (and its workers) for the loader's lifetime, reset
        # at every epoch
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if not self._is_iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            if self.drop_last:
                return length // self.batch_size
            return -(-length // self.batch_size)
        return length


def _check_worker_args(num_workers: int, timeout: float, prefetch_factor: int | None,
                       persistent_workers: bool) -> None:
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")


def _check_iterable_args(shuffle: Any, sampler: Any, batch_sampler: Any) -> None:
    if shuffle not in {False, None}:
        raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, "
                         f"but got shuffle={shuffle}")
    if sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified sampler option, "
                         f"but got sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler "
                         f"option, but got batch_sampler={batch_sampler}")
