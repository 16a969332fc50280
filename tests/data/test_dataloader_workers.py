"""DataLoader with worker processes (num_workers > 0): the batches equal the num_workers=0 ones,
worker info and seeding, iterable datasets sharded by the workers, persistent workers and
shutdown, timeouts, errors raised in workers and dead workers; compared with torch's
DataLoader running the same programs."""

import dataclasses
import json
import multiprocessing
import os
import random
import re
import subprocess
import sys
import warnings

import pytest

import retrograd
from retrograd.utils.data import DataLoader, StackDataset, TensorDataset, get_worker_info
from tests.data import loader_workers as lw

FORK = "fork"


def _plain(batch):
    """Batches of either library as nested Python values."""
    if hasattr(batch, "tolist") and hasattr(batch, "dtype"):
        return ("tensor", batch.tolist(), str(batch.dtype).split(".")[-1])
    if isinstance(batch, dict):
        return {k: _plain(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(_plain(v) for v in batch)
    return batch


def _load(name, dataset, **kwargs):
    data = lw.data_module(name)
    return [_plain(b) for b in data.DataLoader(dataset, **kwargs)]


def _gone(pid):
    """True when the process no longer exists (not even as a zombie)."""
    return not os.path.exists(f"/proc/{pid}") if os.path.isdir("/proc") else True


def _seeded(name, seed=0):
    return lw.lib(name).Generator().manual_seed(seed)


# --- the batches equal the num_workers=0 ones ------------------------------------------------

CONFIGS = [
    dict(batch_size=3),
    dict(batch_size=3, drop_last=True),
    dict(batch_size=5, shuffle=True),
    dict(batch_size=None),
    dict(batch_size=4, collate_fn=lw.sum_collate),
    dict(sampler=[5, 1, 3, 7, 0], batch_size=2),
    dict(batch_sampler=[[3, 2], [0], [1, 5, 4], [11, 10]]),
    dict(batch_size=2, prefetch_factor=1),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_map_style_batches_equal_single_process(config):
    ds = lw.Squares("retrograd")
    gen = {"generator": _seeded("retrograd")} if config.get("shuffle") else {}
    workers = _load("retrograd", ds, num_workers=2, multiprocessing_context=FORK,
                    **config, **gen)
    gen = {"generator": _seeded("retrograd")} if config.get("shuffle") else {}
    single = _load("retrograd", ds, **{k: v for k, v in config.items() if k != "prefetch_factor"},
                   **gen)
    assert workers == single
    if not config.get("shuffle"):  # torch's shuffle order is its own generator's
        assert workers == _load("torch", lw.Squares("torch"), num_workers=2,
                                multiprocessing_context=FORK, **config)


def test_tensor_dataset_fast_path_in_workers():
    x = retrograd.arange(60, dtype=retrograd.float32).reshape(20, 3)
    y = retrograd.arange(20)
    ds = TensorDataset(x, y)
    for shuffle in (False, True):
        a = _load("retrograd", ds, batch_size=6, shuffle=shuffle, generator=_seeded("retrograd", 3),
                  num_workers=2, multiprocessing_context=FORK)
        b = _load("retrograd", ds, batch_size=6, shuffle=shuffle, generator=_seeded("retrograd", 3))
        assert a == b


def test_same_generator_same_order_and_len():
    ds = lw.Squares("retrograd", n=10)
    loader = DataLoader(ds, batch_size=3, shuffle=True, num_workers=2,
                        multiprocessing_context=FORK, generator=_seeded("retrograd", 7))
    assert len(loader) == 4
    first = [_plain(b) for b in loader]
    again = DataLoader(ds, batch_size=3, shuffle=True, generator=_seeded("retrograd", 7))
    assert first == [_plain(b) for b in again]


def test_in_order_false_yields_every_batch():
    # out of order, a batch may come before an earlier one: every batch comes once
    for name in ("retrograd", "torch"):
        got = _load(name, lw.Squares(name, n=8), batch_size=2, num_workers=2,
                    multiprocessing_context=FORK, in_order=False)
        assert sorted(got, key=lambda b: b[1]) == _load(name, lw.Squares(name, n=8),
                                                         batch_size=2)


def test_large_batches_come_through_shared_memory():
    ds = lw.Squares("retrograd", n=6)
    loader = DataLoader(ds, batch_size=2, num_workers=2, multiprocessing_context=FORK,
                        collate_fn=lw.big_batch("retrograd", 2048))
    batches = list(loader)
    assert [b[1].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5]]
    for k, (big, small) in enumerate(batches):
        assert big.is_shared() and not small.is_shared()
        assert big.shape == (2048, 256) and float(big.min()) == float(big.max()) == 2 * k


def test_spawn_context():
    x = retrograd.arange(12.).reshape(6, 2)
    ds = StackDataset(TensorDataset(x), lw.WhoLoads("retrograd", n=6))
    ctx = multiprocessing.get_context("spawn")
    loader = DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context=ctx,
                        worker_init_fn=lw.record_init, persistent_workers=True)
    assert loader.multiprocessing_context is ctx
    epochs = [list(loader) for _ in range(2)]
    single = list(DataLoader(StackDataset(TensorDataset(x), lw.Squares("retrograd", n=6)),
                             batch_size=4))
    for epoch in epochs:
        # the dataset's tensor reached the spawned workers (through shared memory)
        assert [_plain(b[0]) for b in epoch] == [_plain(b[0]) for b in single]
        assert [b[1]["id"].tolist() for b in epoch] == [[0, 0, 0, 0], [1, 1]]
    # persistent: the same two processes serve both epochs
    assert _pids(e[1] for e in epochs[0]) == _pids(e[1] for e in epochs[1])
    assert len(_pids(e[1] for e in epochs[0])) == 2


# --- worker info and seeding ------------------------------------------------------------------

def _who(name, **kwargs):
    rows = []
    for b in lw.data_module(name).DataLoader(lw.WhoLoads(name), batch_size=None, num_workers=2,
                                             multiprocessing_context=FORK, **kwargs):
        rows.append(b)
    return rows


def test_worker_info_and_seeds_as_torch():
    assert get_worker_info() is None
    for name in ("retrograd", "torch"):
        rows = _who(name, worker_init_fn=lw.record_init)
        # round robin: batch i is loaded by worker i % 2
        assert [r["id"] for r in rows] == [i % 2 for i in range(8)]
        assert all(r["num_workers"] == 2 and r["same_dataset"] for r in rows)
        base = {r["seed"] - r["id"] for r in rows}
        assert len(base) == 1  # seed = base_seed + worker id
        for r in rows:
            assert r["initial_seed"] == r["seed"]
            # worker_init_fn ran after Python's random was seeded with the worker's seed
            assert r["init"] == [r["id"], random.Random(r["seed"]).random()]


def test_base_seed_from_the_loaders_generator():
    a = _who("retrograd", generator=_seeded("retrograd", 5))
    b = _who("retrograd", generator=_seeded("retrograd", 5))
    c = _who("retrograd", generator=_seeded("retrograd", 6))
    assert [r["seed"] for r in a] == [r["seed"] for r in b] != [r["seed"] for r in c]
    # drawn once per iterator: the global generator moves on between epochs
    assert _who("retrograd")[0]["seed"] != _who("retrograd")[0]["seed"]


def test_numpy_seed_of_a_worker_as_torch():
    import torch.utils.data._utils.worker as tw

    from retrograd.utils.data._worker import _numpy_seed

    for base, wid in [(0, 0), (12345, 1), (2**63 - 2, 3), (987654321987654321, 7)]:
        assert _numpy_seed(base, wid) == tw._generate_state(base, wid)


def test_worker_info_is_frozen_as_torch():
    import torch.utils.data._utils.worker as tw

    from retrograd.utils.data._worker import WorkerInfo

    ours = WorkerInfo(id=1, num_workers=2, seed=7, dataset=None)
    theirs = tw.WorkerInfo(id=1, num_workers=2, seed=7, dataset=None)
    assert repr(ours) == repr(theirs)
    for info in (ours, theirs):
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'id'"):
            info.id = 3


# --- iterable datasets -------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                    dict(batch_size=None)])
def test_iterable_dataset_sharded_by_workers_as_torch(kwargs):
    got = {name: _load(name, lw.make_counting(name, 0, 11), num_workers=2,
                       multiprocessing_context=FORK, **kwargs)
           for name in ("retrograd", "torch")}
    assert got["retrograd"] == got["torch"]


def test_iterable_dataset_with_persistent_workers_as_torch():
    def run(name):
        loader = lw.data_module(name).DataLoader(lw.make_counting(name, 0, 7), batch_size=2,
                                                 num_workers=2, multiprocessing_context=FORK,
                                                 persistent_workers=True)
        epochs = [[_plain(b) for b in loader] for _ in range(2)]
        loader._iterator._shutdown_workers()
        return epochs

    ours = run("retrograd")
    assert ours == run("torch") and ours[0] == ours[1]


def test_iterable_dataset_replica_per_worker_and_length_warning():
    def run(name):
        loader = lw.data_module(name).DataLoader(lw.make_counting(name, 0, 4, shard=False),
                                                 batch_size=1, num_workers=2,
                                                 multiprocessing_context=FORK)
        assert len(loader) == 4
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = [_plain(b) for b in loader]
        return out, sorted({str(x.message) for x in w if "Length of" in str(x.message)})

    ours, theirs = run("retrograd"), run("torch")
    assert ours[0] == theirs[0]  # every worker yields the whole range
    assert [re.sub(r"object at 0x\w+|Counting_\w+", "", m) for m in ours[1]] == \
        [re.sub(r"object at 0x\w+|Counting_\w+", "", m) for m in theirs[1]]
    assert ours[1] and "For multiprocessing data-loading" in ours[1][0]


# --- worker lifetime ---------------------------------------------------------------------

def _pids(batches):
    return {p for b in batches for p in b["pid"].tolist()}


def test_workers_end_with_the_loop_and_with_del():
    loader = DataLoader(lw.WhoLoads("retrograd"), batch_size=2, num_workers=2,
                        multiprocessing_context=FORK)
    pids = _pids(list(loader))
    assert len(pids) == 2 and all(_gone(p) for p in pids)
    it = iter(loader)
    pids = _pids([next(it), next(it)])
    assert not any(_gone(p) for p in pids)
    del it
    assert all(_gone(p) for p in pids)


def test_persistent_workers_serve_every_epoch():
    loader = DataLoader(lw.WhoLoads("retrograd"), batch_size=2, num_workers=2,
                        multiprocessing_context=FORK, persistent_workers=True,
                        shuffle=True, generator=_seeded("retrograd", 1))
    epochs = [list(loader) for _ in range(3)]
    assert _pids(epochs[0]) == _pids(epochs[1]) == _pids(epochs[2])
    single = DataLoader(lw.WhoLoads("retrograd"), batch_size=2, shuffle=True,
                        generator=_seeded("retrograd", 1))
    # the first epoch as with num_workers=0 (later ones differ, as in torch: a persistent
    # iterator draws the workers' base seed from the generator once, not at every epoch)
    assert [b["i"].tolist() for b in epochs[0]] == [b["i"].tolist() for b in single]
    orders = [[i for b in epoch for i in b["i"].tolist()] for epoch in epochs]
    assert all(sorted(o) == list(range(8)) for o in orders) and orders[0] != orders[1]
    # a half-consumed epoch: the next one starts over
    it = iter(loader)
    next(it)
    assert len(list(iter(loader))) == 4
    pids = _pids(epochs[0])
    del it, loader
    import gc

    gc.collect()
    assert all(_gone(p) for p in pids)


def test_timeout_as_torch():
    messages = []
    for name in ("retrograd", "torch"):
        loader = lw.data_module(name).DataLoader(
            lw.Squares(name, n=4, fail_at=1, how="stall"), batch_size=None, num_workers=2,
            multiprocessing_context=FORK, timeout=0.5)
        it = iter(loader)
        next(it)
        with pytest.raises(RuntimeError) as e:
            next(it)
        messages.append(str(e.value))
        it._shutdown_workers()
    assert messages[0] == messages[1] == "DataLoader timed out after 0.5 seconds"


# --- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("how,exc", [("value", ValueError), ("key", KeyError),
                                     ("two_args", RuntimeError)])
def test_worker_exception_reraised_as_torch(how, exc):
    texts = []
    for name in ("retrograd", "torch"):
        loader = lw.data_module(name).DataLoader(lw.Squares(name, n=6, fail_at=3, how=how),
                                                 batch_size=2, num_workers=2,
                                                 multiprocessing_context=FORK)
        it = iter(loader)
        with pytest.raises(exc) as e:
            list(it)
        it._shutdown_workers()  # now, not when a reference cycle is collected
        text = str(e.value.args[0])
        assert text.startswith("Caught " + ("TwoArgsError" if how == "two_args" else exc.__name__)
                               + " in DataLoader worker process 1.\nOriginal Traceback (most "
                               "recent call last):\n")
        # the traceback's last line: the original exception
        texts.append(text.rstrip().splitlines()[-1])
    assert texts[0] == texts[1]


def test_worker_init_fn_exception():
    loader = DataLoader(lw.Squares("retrograd"), batch_size=2, num_workers=2,
                        multiprocessing_context=FORK, worker_init_fn=lw.failing_init)
    with pytest.raises(ValueError, match="Caught ValueError in DataLoader worker process 0.\n"
                                         "(.|\n)*init failed in 0"):
        list(loader)


_KILLED_PROGRAM = """
import json, sys, time
from tests.data import loader_workers as lw
name = sys.argv[1]
loader = lw.data_module(name).DataLoader(lw.Squares(name, n=6, fail_at=2, how="kill"),
                                         batch_size=None, num_workers=2,
                                         multiprocessing_context="fork")
start = time.monotonic()
it = iter(loader)
try:
    list(it)
    raised = None
except RuntimeError as e:
    raised = [str(e), str(e.__cause__)]
it._shutdown_workers()
print(json.dumps({"raised": raised, "seconds": time.monotonic() - start}))
"""


def test_killed_worker_raises_as_torch():
    # Each library in a fresh interpreter: both install a process-wide SIGCHLD handler that
    # raises in whatever the main thread runs, so in a shared process a worker's death could
    # surface inside the other library's run or inside pytest's own reporting.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    killed = r"DataLoader worker \(pid \d+\) is killed by signal: Killed. "
    for name in ("retrograd", "torch"):
        done = subprocess.run([sys.executable, "-c", _KILLED_PROGRAM, name], cwd=root,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (name, done.stderr[-2000:])
        result = json.loads(done.stdout.strip().splitlines()[-1])
        assert result["raised"] is not None, name
        assert result["seconds"] < 30, name
        message, cause = result["raised"]
        # Two outcomes, both torch's own: the loader's timed-out poll finds the dead worker
        # ("exited unexpectedly", caused by the signal report), or the SIGCHLD handler raises
        # the signal report at once wherever the main thread is.
        if re.fullmatch(killed, message) is None:
            assert re.fullmatch(r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly",
                                message), (name, message)
            assert re.fullmatch(killed, cause), (name, cause)


# --- arguments ---------------------------------------------------------------------------

def _error(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__, str(e)
    return None


def test_multiprocessing_context_property_as_torch():
    import torch

    for name in ("retrograd", "torch"):
        DL = lw.data_module(name).DataLoader
        ds = [1, 2, 3]
        loader = DL(ds, num_workers=2, multiprocessing_context="fork")
        assert isinstance(loader.multiprocessing_context, multiprocessing.context.BaseContext)
        assert loader.multiprocessing_context.get_start_method() == "fork"
        assert DL(ds, num_workers=2).multiprocessing_context is None
        loader.multiprocessing_context = "spawn"
        assert loader.multiprocessing_context.get_start_method() == "spawn"
        loader.multiprocessing_context = None
        assert loader.multiprocessing_context is None

    def both(fn):
        return _error(lambda: fn(DataLoader)), _error(lambda: fn(torch.utils.data.DataLoader))

    for fn in (lambda DL: DL([1], num_workers=2, multiprocessing_context="nope"),
               lambda DL: DL([1], num_workers=2, multiprocessing_context=3),
               lambda DL: DL([1], multiprocessing_context="fork"),
               lambda DL: setattr(DL([1]), "multiprocessing_context", "fork")):
        ours, theirs = both(fn)
        assert ours == theirs and ours is not None


def test_timeout_needs_workers_as_torch():
    import torch

    for DL in (DataLoader, torch.utils.data.DataLoader):
        loader = DL([1, 2], timeout=2)
        with pytest.raises(AssertionError, match=r"^_SingleProcessDataLoaderIter requires "
                                                 r"timeout == 0$"):
            iter(loader)


def test_check_worker_number_rationality_as_torch():
    import torch

    many = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else os.cpu_count()) + 1
    out = []
    for DL in (DataLoader, torch.utils.data.DataLoader):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loader = DL([1, 2], num_workers=many)
            loader.check_worker_number_rationality()
        out.append([str(x.message) for x in w])
    assert out[0] == out[1] and len(out[0]) == 2
    assert out[0][0].startswith(f"This DataLoader will create {many} worker processes")


def test_unpicklable_arguments_with_spawn_as_torch():
    out = []
    for name, data in (("retrograd", lw.Squares("retrograd")), ("torch", lw.Squares("torch"))):
        loader = lw.data_module(name).DataLoader(data, num_workers=2, collate_fn=lambda b: b,
                                                 multiprocessing_context="spawn")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(Exception) as e:
                iter(loader)
        out.append((type(e.value), str(e.value), [str(x.message) for x in w]))
    assert out[0] == out[1]
    assert out[0][2][0].startswith("Got pickle error when attempting to start a worker Process.")
