"""Checkpoint's checks of the recomputation (count and metadata of saved tensors), debug=True,
and argument errors; against torch."""

from __future__ import annotations

import contextlib
import importlib
import logging
import warnings

import pytest

import retrograd
from tests.parity.harness import both, error_of


def _ck(lib):
    return importlib.import_module(lib.__name__ + ".utils.checkpoint")


def _save_3(x):
    return x.sin().exp().sin()


def _save_2(x):
    return x.sin().exp()


def _save_2_other_shape(lib):
    return lambda x: x.sin() * lib.tensor([1.0, 2.0])


def _changing(first, later):
    calls = [0]

    def fn(x):
        calls[0] += 1
        return first(x) if calls[0] == 1 else later(x)

    return fn


def _run(lib, fn, early_stop=True, **kwargs):
    ck = _ck(lib)

    def go():
        a = lib.tensor([0.4], requires_grad=True)
        with ck.set_checkpoint_early_stop(early_stop):
            out = ck.checkpoint(fn, a, use_reentrant=False, **kwargs)
        out.sum().backward()
        return a.grad

    return error_of(go)


@pytest.mark.parametrize("case", ["fewer", "more_no_early_stop", "more_early_stop", "metadata",
                                  "metadata_unchecked"])
def test_recomputation_that_differs_from_the_forward(case):
    def prog(lib):
        if case == "fewer":
            return _run(lib, _changing(_save_3, _save_2))
        if case == "more_no_early_stop":
            return _run(lib, _changing(_save_2, _save_3), early_stop=False)
        if case == "more_early_stop":  # stops before the extra tensor: no error, right grads
            return _run(lib, _changing(_save_2, _save_3))
        if case == "metadata":
            return _run(lib, _changing(_save_2, _save_2_other_shape(lib)))
        return _run(lib, _changing(_save_2, _save_2_other_shape(lib)),
                    determinism_check="none")

    result = both(prog)
    if case in ("fewer", "more_no_early_stop", "metadata"):
        assert result[0] == "raised" and result[1] == "CheckpointError"


def test_checkpoint_error_is_a_runtime_error():
    assert issubclass(retrograd.utils.checkpoint.CheckpointError, RuntimeError)


def _debug_parts(message: str) -> tuple:
    """The forward's op log (section 3) and the closing guidance of a debug=True error (the
    recomputation's log differs: torch also lists its internal detach and lift_fresh calls)."""
    start = message.index("Operations executed during the original forward:")
    end = message.index("Operations executed during recomputation:")
    trailer = message.index("+---", end)
    return message[start:end], message[trailer:]


@pytest.mark.parametrize("how", ["argument", "global_on", "global_off"])
def test_debug_error_lists_the_ops_of_forward_and_recomputation(how, monkeypatch):
    # torch logs its op records through `logging`; pytest's capture cannot format them
    monkeypatch.setattr(logging.getLogger("LoggingTensor"), "propagate", False)

    def prog(lib):
        ck = _ck(lib)
        fn = _changing(_save_2, _save_2_other_shape(lib))
        if how == "argument":
            result = _run(lib, fn, debug=True)
        else:
            with ck.set_checkpoint_debug_enabled(how == "global_on"):
                result = _run(lib, fn, debug=how == "global_off")
        if how == "global_off":
            return result
        kind, name, message = result
        return kind, name, _debug_parts(message)

    both(prog)


def test_debug_error_traces_point_at_the_user_code():
    ck = _ck(retrograd)
    fn = _changing(_save_2, _save_2_other_shape(retrograd))
    kind, name, message = _run(retrograd, fn, debug=True)
    assert (kind, name) == ("raised", "CheckpointError")
    assert "(1 of 2 in original)" in message and "(1 of 1 in recompute)" in message
    assert f"{__file__}:" in message and ":_save_2\n" in message
    assert "retrograd/utils" not in message.split("Operations executed")[0]
    del ck


def test_argument_errors():
    def prog(lib):
        ck = _ck(lib)
        x = lib.tensor([1.0], requires_grad=True)

        def context_fn():
            return contextlib.nullcontext(), contextlib.nullcontext()

        return [
            error_of(ck.checkpoint, _save_2, x, use_reentrant=False,
                     determinism_check="shapes"),
            error_of(ck.checkpoint, _save_2, x, use_reentrant=False, debug=True,
                     context_fn=context_fn),
            error_of(ck.checkpoint, _save_2, x, use_reentrant=True, context_fn=context_fn),
            error_of(ck.checkpoint, _save_2, x, use_reentrant=True, debug=True),
            error_of(ck.checkpoint, _save_2, x, use_reentrant=True, blah=1),
            error_of(ck.checkpoint_sequential, [_save_2], 1, x, use_reentrant=False, blah=1),
        ]

    both(prog)


def test_context_that_swallows_the_forward_error():
    def prog(lib):
        ck = _ck(lib)

        def boom(x):
            raise ValueError("inside")

        def context_fn():
            return contextlib.suppress(ValueError), contextlib.nullcontext()

        x = lib.tensor([1.0], requires_grad=True)
        return (error_of(ck.checkpoint, boom, x, use_reentrant=False),
                error_of(ck.checkpoint, boom, x, use_reentrant=False, context_fn=context_fn))

    both(prog)


def test_use_reentrant_warnings_and_default():
    def prog(lib):
        ck = _ck(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        fns = [lambda t: t * 2, lambda t: t.exp()]
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            out = ck.checkpoint(_save_2, x)
            ck.checkpoint_sequential(fns, 2, x)
            silent = len(rec)
            ck.checkpoint(_save_2, x, use_reentrant=False)
            ck.checkpoint_sequential(fns, 2, x, use_reentrant=True)
        return ([str(r.message) for r in rec], silent, len(rec),
                type(out.grad_fn).__name__)  # the default is still the reentrant variant

    both(prog)


@pytest.mark.parametrize("reentrant", [True, False])
def test_preserve_rng_state_false_is_not_passed_to_the_function(reentrant):
    def prog(lib):
        ck = _ck(lib)
        lib.manual_seed(0)
        x = lib.ones(20, requires_grad=True)

        def fn(t):
            return t * (lib.rand(20) > 0.5)

        same_mask = []
        for preserve in (True, False):
            lib.manual_seed(1)
            out = ck.checkpoint(fn, x, use_reentrant=reentrant, preserve_rng_state=preserve)
            out.sum().backward()
            same_mask.append(out.tolist() == x.grad.tolist())
            x.grad = None
        return same_mask[0]  # preserved: backward's mask is the forward's

    assert both(prog) is True


def test_verbose_context_fn_sees_forward_and_recompute_ops():
    def prog(lib):
        ck = _ck(lib)
        pd = importlib.import_module(lib.__name__ + ".utils._python_dispatch")

        class Verbose(pd.TorchDispatchMode):
            def __init__(self):
                self.ops = []

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.ops.append(func.__name__)
                return func(*args, **(kwargs or {}))

        x = lib.tensor(1.0, requires_grad=True)
        fwd, rec = Verbose(), Verbose()
        out = ck.checkpoint(lambda t: t.exp(), x, use_reentrant=False,
                            context_fn=lambda: (fwd, contextlib.nullcontext()))
        out2 = ck.checkpoint(lambda t: t.exp(), x, use_reentrant=False,
                             context_fn=lambda: (contextlib.nullcontext(), rec))
        before = list(rec.ops)
        out2.backward()
        del out
        # torch also logs the detach calls checkpoint makes; retrograd's detach is no op
        return fwd.ops, before, [o for o in rec.ops if o != "detach.default"]

    both(prog)
