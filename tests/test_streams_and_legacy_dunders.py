"""torch.Stream, torch.Event and torch.get_device_module on the CPU, and the Python 2 names
torch's Tensor keeps (__div__, __idiv__, __nonzero__, __long__) and its refusal of `del t[i]`:
each program runs on torch and on retrograd."""

from __future__ import annotations

import pytest

import retrograd
from tests.parity.harness import both, error_of

torch = pytest.importorskip("torch")


def _name(lib, text):
    return str(text).replace(lib.__name__ + ".", "LIB.")


def test_stream_as_torch():
    def prog(lib):
        s, s_cpu0 = lib.Stream(), lib.Stream("cpu:0")
        with s as entered:
            same = entered is s
        return [_name(lib, repr(s)), s == s_cpu0, hash(s) == hash(s_cpu0), s == 3,
                s.query(), s.synchronize(), s.is_capturing(), str(s.device), s.device_type,
                s.device_index, s.stream_id, _name(lib, repr(lib.Stream(priority=-1))),
                _name(lib, repr(lib.Stream(stream_id=3, device_type=0, device_index=0))),
                _name(lib, repr(lib.Stream(stream_id=1, device_type=9, device_index=2))),
                lib.Stream("meta").device_type, hasattr(lib.Event(), "device_type"),
                _name(lib, repr(lib.Stream("meta"))), same,
                s.wait_event(lib.Event())]

    both(prog)


@pytest.mark.parametrize("call", ["record_event", "wait_stream", "native_handle", "index",
                                  "two_positional"])
def test_stream_errors_as_torch(call):
    calls = {
        "record_event": lambda lib: lib.Stream().record_event(),
        "wait_stream": lambda lib: lib.Stream().wait_stream(lib.Stream()),
        "native_handle": lambda lib: lib.Stream().native_handle,
        "index": lambda lib: lib.Stream(3),
        "two_positional": lambda lib: lib.Stream("cpu", "x"),
    }
    ours = error_of(calls[call], retrograd)
    theirs = error_of(calls[call], torch)
    assert ours[0] == theirs[0] == "raised"
    assert ours[1] == theirs[1]
    if call != "two_positional":  # Python's own wording names the callable differently
        assert ours[2] == theirs[2]


def test_event_as_torch():
    def prog(lib):
        e, timed = lib.Event(), lib.Event(enable_timing=True)
        return [_name(lib, repr(e)), _name(lib, repr(timed)),
                _name(lib, repr(lib.Event("meta", blocking=True, interprocess=True))),
                e.query(), e.synchronize(), e.wait(), e.wait(lib.Stream()), str(e.device),
                e.event_id, e == lib.Event(),
                error_of(lambda: e.record()), error_of(lambda: e.elapsed_time(timed)),
                error_of(lambda: timed.elapsed_time(lib.Event(enable_timing=True))),
                error_of(lambda: e.ipc_handle())]

    both(prog)


def test_get_device_module_as_torch():
    def prog(lib):
        def name(m):
            return m.__name__.replace(lib.__name__, "LIB")

        return [name(lib.get_device_module()), name(lib.get_device_module("cpu")),
                name(lib.get_device_module(lib.device("cpu"))),
                name(lib.get_device_module("cuda")),
                error_of(lambda: lib.get_device_module("meta")),
                error_of(lambda: lib.get_device_module(3))]

    both(prog)


def test_python2_dunders_as_torch():
    def prog(lib):
        t = lib.arange(4.0, requires_grad=True)
        q = t.__div__(2)
        u = lib.arange(4.0)
        u.__idiv__(4)
        q.sum().backward()
        return [q, t.grad, u, lib.tensor(0.0).__nonzero__(), lib.tensor([2.5]).__nonzero__(),
                lib.tensor(3.7).__long__(), lib.tensor(-2.2).__long__(),
                error_of(lambda: lib.ones(2).__nonzero__())[:2]]

    both(prog)


def test_deleting_an_item_is_refused_as_torch():
    def prog(lib):
        t = lib.arange(3)

        def delete():
            del t[0]

        return error_of(delete), t

    result = both(prog)
    assert result[0] == ("raised", "TypeError", "Tensor does not support deleting items")
