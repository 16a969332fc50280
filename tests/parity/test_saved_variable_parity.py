"""Seed 001: what is saved, version checks, freeing, hooks on saved tensors; against torch."""

from __future__ import annotations

import inspect
import re

import pytest

import retrograd
from tests.parity.harness import both, error_of, torch_or_skip


def _shared_part(msg: str) -> str:
    """torch 2.13 prints the forward op's name ("Exp") where the seed (and retrograd) prints the
    node's name ("ExpBackward0"), and a longer hint; compare what both say."""
    msg = re.sub(r"output (\d+) of \w+,", r"output \1 of <node>,", msg)
    return msg.split(" Hint:")[0]


def _version_error(lib):
    y = lib.ones(3, requires_grad=True)
    e = y.exp()
    e.add_(1)
    return error_of(lambda: e.sum().backward())


def test_version_mismatch_message():
    torch_or_skip()
    import torch

    ours = _version_error(retrograd)
    theirs = _version_error(torch)
    assert ours[0] == theirs[0] == "raised"
    assert ours[1] == theirs[1] == "RuntimeError"
    assert _shared_part(ours[2]) == _shared_part(theirs[2]).replace("torch.", "retrograd.")
    # retrograd follows the seed's wording exactly
    assert ours[2].startswith(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [retrograd.FloatTensor [3]], which is output 0 of ExpBackward0, is at "
        "version 1; expected version 0 instead. Hint: enable anomaly detection to find the "
        "operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True).")


def test_version_error_names_the_mutating_op_and_line():
    y = retrograd.ones(3, requires_grad=True)
    e = y.exp()
    e.mul_(2)  # the line the message must point at
    line = inspect.currentframe().f_lineno - 1
    with pytest.raises(RuntimeError) as info:
        e.sum().backward()
    msg = str(info.value)
    assert f"the last in-place change was mul_ at {__file__}:{line})" in msg


def test_version_error_names_a_write_made_without_grad():
    # in-place ops that build no graph take the generated fast path; it records the site too
    x = retrograd.ones(3, requires_grad=True)
    w = retrograd.ones(3)
    out = x * w  # saves w for x's gradient
    with retrograd.no_grad():
        w.add_(1, alpha=2)
    line = inspect.currentframe().f_lineno - 1
    with pytest.raises(RuntimeError) as info:
        out.sum().backward()
    msg = str(info.value)
    assert "is at version 1; expected version 0 instead" in msg
    assert f"the last in-place change was add_ at {__file__}:{line})" in msg


def test_increment_version_clears_the_recorded_site():
    x = retrograd.ones(3, requires_grad=True)
    w = retrograd.ones(3)
    out = x * w
    w.mul_(2)
    retrograd.autograd.graph.increment_version(w)
    with pytest.raises(RuntimeError) as info:
        out.sum().backward()
    msg = str(info.value)
    assert "is at version 2; expected version 0 instead" in msg
    assert msg.endswith("(retrograd: the last in-place change was increment_version)")


def test_modified_input_through_a_view_is_caught():
    def prog(lib):
        base = lib.ones(2, 3, requires_grad=True).clone()
        w = lib.ones(2, 3, requires_grad=True)
        out = base * w  # saves base (for w's gradient)
        base[0].mul_(2)  # writes through a view
        return _shared_part(error_of(lambda: out.sum().backward())[2])

    both(prog)


def test_backward_twice_message():
    def prog(lib):
        x = lib.ones(2, requires_grad=True)
        y = (x * x).sum()
        y.backward()
        return error_of(y.backward)

    both(prog)


def test_saved_tensor_accessors():
    def prog(lib):
        y = lib.tensor([1.0, 2.0], requires_grad=True)
        z = y * 2
        w = z * z
        e = y.exp()
        return (w.grad_fn._saved_self is z, w.grad_fn._saved_other is z,
                e.grad_fn._saved_result, e.grad_fn._saved_result.grad_fn is e.grad_fn,
                e.grad_fn._saved_result is e, y.sum().grad_fn._saved_self_sym_sizes)

    both(prog)


def test_saved_output_has_no_reference_cycle():
    import gc
    import weakref

    gc.disable()
    try:
        x = retrograd.ones(3, requires_grad=True)
        y = x.exp()  # ExpBackward0 saves its own output
        node_ref = weakref.ref(y.grad_fn)
        data_ref = weakref.ref(y)
        del y
        assert node_ref() is None and data_ref() is None
    finally:
        gc.enable()


def test_register_hooks_errors():
    def prog(lib):
        x = lib.ones(2, requires_grad=True)
        y = x.exp()
        raw = y.grad_fn._raw_saved_result
        raw.register_hooks(lambda t: t * 1, lambda t: t)
        twice = error_of(raw.register_hooks, lambda t: t, lambda t: t)
        z = x.exp()
        z.sum().backward()
        freed = error_of(z.grad_fn._raw_saved_result.register_hooks, lambda t: t, lambda t: t)
        return twice, freed, error_of(raw.register_hooks, 1, 2)[:2]

    both(prog)


def test_hooks_on_one_saved_tensor_run_and_skip_version_check():
    def prog(lib):
        log = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        out = y * 3
        raw = y.grad_fn._raw_saved_result
        raw.register_hooks(lambda t: (log.append("pack"), t.clone())[1],
                           lambda t: (log.append("unpack"), t)[1])
        out.sum().backward()
        return log, x.grad

    both(prog)


def test_pack_hook_modifying_input_errors():
    def prog(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2

        def pack(t):
            t.add_(1)
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            err = error_of(lambda: y * y)
        # the seed says "can not"; torch 2.13 says "cannot": retrograd keeps the seed's words
        return err[:2] + (err[2].replace("can not", "cannot"),)

    both(prog)


def test_inference_tensor_cannot_be_saved():
    torch_or_skip()
    import torch

    def prog(lib):
        with lib.inference_mode():
            it = lib.ones(2)
        y = lib.ones(2, requires_grad=True)
        return error_of(lambda: it * y), it.is_inference(), y.is_inference()

    ours, theirs = prog(retrograd), prog(torch)
    assert ours[1:] == theirs[1:] == (True, False)
    assert ours[0][1] == theirs[0][1] == "RuntimeError"
    # the seed's wording (torch 2.13 words it longer); both start alike
    assert ours[0][2] == ("Inference tensors cannot be saved for backward. To work around you "
                          "can make a clone to get a normal tensor and use it in autograd.")
    assert theirs[0][2].startswith("Inference tensors cannot be saved for backward.")


def test_inference_tensor_inplace_outside_inference_mode():
    def prog(lib):
        with lib.inference_mode():
            it = lib.ones(2)
            it.add_(1)  # allowed inside
        return error_of(lambda: it.add_(1)), it

    torch_or_skip()
    import torch

    ours, theirs = prog(retrograd), prog(torch)
    assert ours[0] == theirs[0]
    # torch writes the tensor before refusing; retrograd refuses first and leaves it unchanged
    assert ours[1].tolist() == [2.0, 2.0] and theirs[1].tolist() == [3.0, 3.0]


def test_detached_in_place_saved_tensor():
    def prog(lib):
        x = lib.ones(2, requires_grad=True)
        z = x * 2
        out = z * z
        z.detach_()
        return error_of(lambda: out.grad_fn._saved_self)

    both(prog)


def test_register_hooks_on_a_saved_none():
    def prog(lib):
        class SavesNone(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, None)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                x, nothing = ctx.saved_tensors
                return g * 2

        x = lib.ones(2, requires_grad=True)
        y = SavesNone.apply(x)
        raw = y.grad_fn._raw_saved_tensors
        err = error_of(raw[1].register_hooks, lambda t: t, lambda t: t)
        y.sum().backward()
        return len(raw), err, y.grad_fn is not None, x.grad

    both(prog)


def test_version_message_with_anomaly_mode_on():
    import warnings

    y = retrograd.ones(3, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with retrograd.autograd.detect_anomaly():
            e = y.exp()
            e.add_(1)
            with pytest.raises(RuntimeError) as info:
                e.sum().backward()
    assert (" is at version 1; expected version 0 instead. Hint: the backtrace further above "
            "shows the operation that failed to compute its gradient. The variable in question "
            "was changed in there or anywhere later. Good luck!") in str(info.value)
