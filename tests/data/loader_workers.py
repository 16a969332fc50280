"""Datasets and functions that tests/data/test_dataloader_workers.py gives to DataLoader
workers: module-level, so a spawned worker can import them, and written against the library's
name ("torch" or "retrograd") so one program runs on both."""

from __future__ import annotations

import importlib
import os
import random
import signal
import time


def lib(name: str):
    return importlib.import_module(name)


def data_module(name: str):
    return importlib.import_module(name + ".utils.data")


class Squares:
    """Map-style: item i is (i * i as a float tensor, i); one item can fail or stall."""

    def __init__(self, name: str, n: int = 12, fail_at: int | None = None, how: str = "",
                 sleep: float = 0.0) -> None:
        self.name, self.n, self.fail_at, self.how, self.sleep = name, n, fail_at, how, sleep

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        if self.sleep:
            time.sleep(self.sleep)
        if i == self.fail_at:
            fail(self.how, i)
        torch = lib(self.name)
        return torch.tensor([float(i * i), float(i)]), i


def fail(how: str, i: int) -> None:
    if how == "value":
        raise ValueError(f"bad item {i}")
    if how == "key":
        raise KeyError(i)
    if how == "two_args":
        raise TwoArgsError(i, "second")
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "stall":
        time.sleep(2)


class TwoArgsError(Exception):
    def __init__(self, a, b) -> None:
        super().__init__(a, b)


class WhoLoads:
    """Map-style: item i says which worker loaded it and with what seeds."""

    def __init__(self, name: str, n: int = 8) -> None:
        self.name, self.n = name, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        info = data_module(self.name).get_worker_info()
        if info is None:  # the main process
            return {"i": i, "pid": os.getpid()}
        torch = lib(self.name)
        return {"i": i, "pid": os.getpid(), "id": info.id, "num_workers": info.num_workers,
                "seed": info.seed, "initial_seed": torch.initial_seed(),
                "same_dataset": info.dataset is self, "init": INIT_DONE.get("value", (-1, 0.0))}


# what worker_init_fn saw in this worker
INIT_DONE: dict = {}


def record_init(worker_id: int) -> None:
    """A worker_init_fn: keeps the first Python random draw after the worker's seeding."""
    INIT_DONE["value"] = (worker_id, random.random())


def failing_init(worker_id: int) -> None:
    raise ValueError(f"init failed in {worker_id}")


class Counting:
    """Iterable: the numbers [start, end), split between the workers as torch's docs show."""

    def __init__(self, name: str, start: int, end: int, shard: bool = True) -> None:
        self.name, self.start, self.end, self.shard = name, start, end, shard

    def __iter__(self):
        info = data_module(self.name).get_worker_info()
        lo, hi = self.start, self.end
        if info is not None and self.shard:
            per = -(-(hi - lo) // info.num_workers)
            lo = lo + info.id * per
            hi = min(lo + per, self.end)
        return iter(range(lo, hi))

    def __len__(self) -> int:
        return self.end - self.start


def make_counting(name: str, start: int, end: int, shard: bool = True):
    """A Counting that is an IterableDataset of the library."""
    base = data_module(name).IterableDataset
    cls = _ITERABLE_CLASSES.get(name)
    if cls is None:
        cls = type(f"Counting_{name}", (Counting, base), {"__module__": __name__})
        _ITERABLE_CLASSES[name] = cls
        globals()[cls.__name__] = cls  # found by name when pickled for a spawned worker
    return cls(name, start, end, shard)


_ITERABLE_CLASSES: dict = {}


def __getattr__(attr: str):
    # a spawned worker unpickling a Counting_<library> builds the class first
    if attr.startswith("Counting_"):
        return type(make_counting(attr[len("Counting_"):], 0, 0))
    raise AttributeError(attr)


def sum_collate(batch):
    """A collate_fn: the sum of the batch's first fields and the list of the second."""
    return float(sum(float(x.sum()) for x, _ in batch)), [i for _, i in batch]


def big_batch(name: str, rows: int):
    """A collate_fn factory's product: each batch also carries a large tensor."""
    return BigCollate(name, rows)


class BigCollate:
    def __init__(self, name: str, rows: int) -> None:
        self.name, self.rows = name, rows

    def __call__(self, batch):
        torch = lib(self.name)
        first = batch[0][1]
        return torch.full((self.rows, 256), float(first)), torch.tensor([i for _, i in batch])
