"""retrograd.multiprocessing against torch.multiprocessing: the same programs run on both
(spawned children for the results and errors, forked ones where only the exit matters), and
tensors crossing process boundaries keep their values and share their memory as torch's do."""

from __future__ import annotations

import pickle
import warnings
from multiprocessing import reduction

import numpy as np
import pytest
import torch
import torch.multiprocessing as tmp

import retrograd
import retrograd.multiprocessing as rmp
from tests import multiprocessing_workers as workers

LIBS = [(retrograd, rmp), (torch, tmp)]


def _collect(lib, mp) -> list:
    ctx = mp.get_context("spawn")
    q, done = ctx.Queue(), ctx.Event()
    pc = mp.spawn(workers.put_results, args=(lib.__name__, q, done), nprocs=2, join=False)
    assert isinstance(pc, mp.ProcessContext)
    got = sorted((q.get(timeout=60) for _ in range(2)), key=lambda r: r[0])
    assert pc.join(timeout=0.01) is False  # both still wait for `done`
    done.set()
    while not pc.join(timeout=60):
        pass
    assert pc.join() is True  # joining again once all ended
    assert sorted(r[3] for r in got) == sorted(pc.pids())
    return got


def test_spawn_sends_tensors_back_through_a_queue():
    mine, theirs = (_collect(lib, mp) for lib, mp in LIBS)
    for (i, x, leaf, _), (j, tx, tleaf, _) in zip(mine, theirs):
        assert i == j
        assert type(x) is retrograd.Tensor and x.dtype == retrograd.float64
        np.testing.assert_array_equal(x.numpy(), tx.numpy())
        assert leaf.requires_grad and leaf.is_leaf and leaf.dtype == retrograd.float32
        np.testing.assert_array_equal(leaf.detach().numpy(), tleaf.detach().numpy())
        assert x.is_shared() and tx.is_shared()


def _failure(mp, fn, args, start_method="spawn"):
    with pytest.raises(Exception) as info:
        mp.start_processes(fn, args=args, nprocs=1, start_method=start_method)
    return info.value


def test_child_exception_is_raised_with_its_traceback():
    errors = [_failure(mp, workers.raise_error, (lib.__name__,)) for lib, mp in LIBS]
    mine, theirs = errors
    assert type(mine) is rmp.ProcessRaisedException and type(theirs) is tmp.ProcessRaisedException
    head = "\n\n-- Process 0 terminated with the following error:\nTraceback (most recent call"
    assert str(mine).startswith(head) and str(theirs).startswith(head)
    assert str(mine).splitlines()[-1] == str(theirs).splitlines()[-1] == \
        "ValueError: bad value in process 0"
    assert (mine.error_index, mine.msg) == (0, str(mine))
    assert isinstance(mine.error_pid, int)
    assert pickle.loads(pickle.dumps(mine)).msg == mine.msg


@pytest.mark.parametrize("how", ["sys.exit", "os._exit", "SIGKILL"])
def test_child_exit_code_or_signal(how):
    mine, theirs = (_failure(mp, workers.exit_with, (how,), "fork") for _, mp in LIBS)
    assert type(mine) is rmp.ProcessExitedException
    assert type(theirs) is tmp.ProcessExitedException
    assert str(mine) == str(theirs)
    assert (mine.error_index, mine.exit_code, mine.signal_name) == \
        (theirs.error_index, theirs.exit_code, theirs.signal_name)


def test_tensors_through_a_queue_and_a_pipe():
    for lib, mp in LIBS:
        q = mp.Queue()
        sent = [lib.arange(4, dtype=lib.int16).reshape(2, 2),
                lib.tensor([1.5, -2.0], dtype=lib.float64, requires_grad=True),
                lib.nn.Parameter(lib.ones(3))]
        for t in sent:
            q.put(t)
        for t in sent:
            r = q.get(timeout=30)
            assert type(r) is type(t) and r.dtype == t.dtype and r.shape == t.shape
            assert r.requires_grad == t.requires_grad and r.is_leaf
            assert r.detach().tolist() == t.detach().tolist()
            assert r.is_shared() and t.is_shared()  # the sender's memory moved, as torch's
            assert r.data_ptr() == t.data_ptr()  # received where it was sent: the same memory
        base = lib.arange(8.0)
        q.put(base.view(2, 4)[:, 1::2])  # a view: its storage comes along
        r = q.get(timeout=30)
        assert (r.storage_offset(), r.stride(), r.untyped_storage().nbytes()) == (1, (4, 2), 32)
        assert r.untyped_storage().data_ptr() == base.untyped_storage().data_ptr()
        r.mul_(-1)  # the same memory, not a copy
        assert base.tolist() == [0, -1, 2, -3, 4, -5, 6, -7]
        q.close()
        q.join_thread()


def test_non_leaf_that_requires_grad_is_refused():
    messages = []
    for lib, mp in LIBS:
        a, b = mp.Pipe()
        y = lib.ones(2, requires_grad=True) * 2
        with pytest.raises(RuntimeError) as info:
            a.send(y)
        messages.append(str(info.value))
        a.send(y.detach())  # the data alone crosses
        assert b.recv().tolist() == [2.0, 2.0]
    assert messages[0] == messages[1]
    assert messages[0].startswith("Cowardly refusing to serialize non-leaf tensor")


def test_sharing_strategies():
    for _, mp in LIBS:
        assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
        assert mp.get_sharing_strategy() == "file_descriptor"
    errors = []
    for _, mp in LIBS:
        try:
            mp.set_sharing_strategy("file_system")
            assert mp.get_sharing_strategy() == "file_system"
            with pytest.raises(AssertionError) as info:
                mp.set_sharing_strategy("shared_heap")
            errors.append(str(info.value))
        finally:
            mp.set_sharing_strategy("file_descriptor")
    assert errors[0] == errors[1]


def test_the_namespace_is_torchs():
    assert sorted(rmp.__all__) == sorted(tmp.__all__)
    for name in ("spawn", "start_processes", "ProcessContext", "SpawnContext",
                 "ProcessRaisedException", "ProcessExitedException", *tmp.__all__):
        assert hasattr(rmp, name), name
    assert retrograd.multiprocessing is rmp and torch.multiprocessing is tmp
    with pytest.warns(UserWarning, match="SpawnContext is renamed to ProcessContext"):
        rmp.SpawnContext([], [])
    assert rmp.ENV_VAR_PARALLEL_START == tmp.ENV_VAR_PARALLEL_START
    messages = []
    for _, mp in LIBS:  # spawn warns about another start method, then spawns (none here)
        with pytest.warns(FutureWarning) as record:
            assert mp.spawn(workers.raise_error, nprocs=0, start_method="fork") is None
        messages.append(str(record[0].message))
    assert messages[0] == messages[1]


def test_share_memory_moves_views_along():
    results = []
    for lib, _ in LIBS:
        a = lib.arange(6.0).reshape(2, 3)
        row, alias = a[1], a.detach()
        before = (a.is_shared(), row.is_shared())
        assert a.share_memory_() is a
        row.add_(10)  # the view still aliases the base
        a[0, 0] = -1
        alias[0, 1] = -2
        results.append((before, a.is_shared(), row.is_shared(), alias.is_shared(), a.tolist(),
                        row.tolist(), a.untyped_storage().is_shared()))
    assert results[0] == results[1]


def test_storage_share_memory_moves_its_tensors():
    results = []
    for lib, _ in LIBS:
        v = lib.zeros(4)
        storage = v.untyped_storage()
        assert storage.share_memory_() is storage
        w = lib.ones(2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TypedStorage's deprecation (once per process)
            typed = w.storage()
        assert typed.share_memory_() is typed
        results.append((v.is_shared(), storage.is_shared(), w.is_shared(), typed.is_shared()))
    assert results[0] == results[1] == (True, True, True, True)


def _hogwild(lib, mp) -> tuple:
    model = lib.nn.Linear(4, 1)
    model.weight.share_memory_()  # the bias stays unshared until it is sent
    shared_before = [p.is_shared() for p in model.parameters()]
    start = [p.detach().clone() for p in model.parameters()]
    ctx = mp.get_context("spawn")
    mp.spawn(workers.hogwild_step, args=(lib.__name__, model, ctx.Lock()), nprocs=2)
    return (shared_before, [p.is_shared() for p in model.parameters()],
            [(p.detach() - s).tolist() for p, s in zip(model.parameters(), start)])


def test_children_update_a_shared_model_in_place():
    """Hogwild: each child steps the parent's model; the parent reads both updates, also in
    the bias, which is moved into shared memory when it is sent, as torch does."""
    mine, theirs = (_hogwild(lib, mp) for lib, mp in LIBS)
    assert mine[:2] == theirs[:2] == ([True, False], [True, True])
    for got, want in zip(mine[2], theirs[2]):
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-6)
    # both steps landed: lr * (x_0 + x_1), x_i = arange(4) + i; the bias's gradient is 1
    np.testing.assert_allclose(np.array(mine[2][0]), [-0.5 * (2 * np.arange(4) + 1)], rtol=1e-6)
    np.testing.assert_allclose(np.array(mine[2][1]), [-1.0], rtol=1e-6)


class _Sub(retrograd.Tensor):
    """A module-level Tensor subclass (pickle finds a class by its name)."""


def test_sent_through_the_forking_pickler_by_value_when_not_registered():
    # a subclass other than Parameter is not registered (as in torch): it pickles by value,
    # and comes back of its class with its attributes (torch's _rebuild_from_type_v2)
    t = retrograd.arange(3.0).as_subclass(_Sub)
    t.note = "kept"
    r = pickle.loads(reduction.ForkingPickler.dumps(t))
    assert type(r) is _Sub and r.note == "kept"
    assert r.as_subclass(retrograd.Tensor).tolist() == [0.0, 1.0, 2.0] and not t.is_shared()


def test_module_share_memory_moves_every_tensor_and_its_aliases_in_one_pass():
    model = retrograd.nn.Sequential(retrograd.nn.Linear(3, 4), retrograd.nn.BatchNorm1d(4))
    model[0].weight.grad = retrograd.ones(4, 3)
    alias = model[0].weight.detach()  # another tensor on the same memory
    view = model[0].bias[1:]
    model.share_memory()
    tensors = list(model.parameters()) + list(model.buffers()) + [model[0].weight.grad]
    assert all(t.is_shared() for t in tensors)
    assert alias.is_shared() and view.is_shared()
    with retrograd.no_grad():
        model[0].weight[0, 0] = 5.0
        model[0].bias[2] = 7.0
    assert alias[0, 0].item() == 5.0 and view[1].item() == 7.0  # still aliasing
