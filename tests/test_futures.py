"""retrograd.futures.Future: values, chained callbacks, exceptions, as torch.futures."""

import pytest
import torch

import retrograd.futures as futures


@pytest.mark.parametrize("lib", [futures, torch.futures])
def test_then_chain_and_done_callbacks(lib):
    fut = lib.Future()
    seen = []
    fut.add_done_callback(lambda f: seen.append(f.value()))
    chained = fut.then(lambda f: f.value() * 2).then(lambda f: f.value() + 1)
    assert not fut.done()
    fut.set_result(5)
    assert fut.done() and seen == [5]
    assert chained.wait() == 11
    with pytest.raises(RuntimeError):
        fut.set_result(6)


@pytest.mark.parametrize("lib", [futures, torch.futures])
def test_exception_reaches_the_waiter_through_then(lib):
    fut = lib.Future()
    fut.set_exception(ValueError("bad"))
    with pytest.raises(ValueError, match="bad"):
        fut.wait()
    child = fut.then(lambda f: f.value())
    # torch wraps the callback's error in a RuntimeError that quotes it
    with pytest.raises(ValueError if lib is futures else RuntimeError, match="bad"):
        child.wait()


def test_wait_drives_the_producer():
    calls = []
    fut = futures.Future()
    fut._wait_hook = lambda: (calls.append(1), fut.set_result("done"))
    assert fut.then(lambda f: f.value().upper()).wait() == "DONE"
    assert calls == [1]
    assert futures.wait_all([fut]) == ["done"]
    assert futures.collect_all([fut]).wait() == [fut]
