"""Datasets (torch.utils.data.dataset): map-style and iterable, with subsets and splits."""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define __getitem__ (and usually __len__).

    A subclass may also define __getitems__(indices) returning a list of samples, which the
    DataLoader then uses to fetch a whole batch at once.
    """

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A dataset that is a stream of samples: subclasses define __iter__."""

    def __add__(self, other: Dataset) -> ChainDataset:
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Sample i is the tuple of every tensor's row i."""

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


def _check_lengths(datasets: Iterable) -> int:
    datasets = list(datasets)
    n = len(datasets[0])
    if any(n != len(d) for d in datasets):
        raise ValueError("Size mismatch between datasets")
    return n


class StackDataset(Dataset):
    """Zips datasets of equal length: samples are tuples (positional) or dicts (keywords)."""

    datasets: tuple | dict

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self._length = _check_lengths(args or kwargs.values())
        self.datasets = args or kwargs

    def __getitem__(self, index: Any) -> tuple | dict:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list) -> list:
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        columns = {k: self._column(d, indices) for k, d in parts}
        if named:
            return [{k: col[i] for k, col in columns.items()} for i in range(len(indices))]
        return [tuple(col[i] for col in columns.values()) for i in range(len(indices))]

    @staticmethod
    def _column(dataset: Dataset, indices: list) -> list:
        getitems = getattr(dataset, "__getitems__", None)
        if not callable(getitems):
            return [dataset[i] for i in indices]
        items = getitems(indices)
        if len(items) != len(indices):
            raise ValueError("Nested dataset's output size mismatch. Expected "
                             f"{len(indices)}, got {len(items)}")
        return items

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset[T_co]):
    """The concatenation of map-style datasets."""

    datasets: list[Dataset]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence: Iterable) -> list[int]:
        return list(itertools.accumulate(len(d) for d in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        offset = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - offset]


class ChainDataset(IterableDataset):
    """The concatenation of iterable datasets, chained lazily."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset[T_co]):
    """The samples of `dataset` at `indices`."""

    dataset: Dataset
    indices: Sequence[int]

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: Any) -> T_co:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        mapped = [self.indices[i] for i in indices]
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(mapped)
        return [self.dataset[i] for i in mapped]

    def __len__(self) -> int:
        return len(self.indices)


def _lengths_from_fractions(n: int, fractions: Sequence[float]) -> list[int]:
    """floor(n * f) each, the remainder handed out one by one from the first split."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            _ws.warn(f"Length of split at index {i} is 0. This might result in an empty "
                     "dataset.", stacklevel=3)
    return lengths


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator: Any = None) -> list[Subset]:
    """Splits a dataset into non-overlapping random subsets of the given lengths (or fractions
    summing to 1), using `generator` (default: the global generator) for the permutation."""
    from retrograd._ops.random import default_generator, randperm

    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = randperm(sum(lengths), generator=generator or default_generator).tolist()
    return [Subset(dataset, perm[end - n:end])
            for end, n in zip(itertools.accumulate(lengths), lengths)]
