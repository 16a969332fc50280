"""gradcheck's batched checks against torch: check_batched_grad runs vmap over the backward
pass for a batch of grad_outputs and check_batched_forward_grad runs vmap over a forward-mode
evaluation for a batch of tangents; each is compared with a loop. Outcomes and messages as
torch's (a backward or a tangent that differs under vmap, one that cannot run under vmap)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd


def _libs():
    torch = pytest.importorskip("torch")
    return (retrograd, torch)


def _functions(lib):
    class ItemInBackward(lib.autograd.Function):
        """A backward that reads a Python number: cannot run under vmap."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * float(g.sum().item() * 0 + 2)

    class DependsOnTheBatch(lib.autograd.Function):
        """A backward right one grad_output at a time and wrong under vmap (torch's
        gradcheck, on its legacy vmap, does not see the difference: retrograd only)."""

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 if _is_plain(lib, g) else g * 3

    class TangentItem(lib.autograd.Function):
        """A jvp that reads a Python number from the tangent: cannot run under vmap."""

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * float(t.sum().item() * 0 + 2)

    return {"item_bwd": ItemInBackward.apply, "batch_bwd": DependsOnTheBatch.apply,
            "item_jvp": TangentItem.apply}


def _is_plain(lib, t) -> bool:
    """Whether t is an ordinary tensor (not a vmap wrapper) in either library."""
    if lib is retrograd:
        return type(t) is retrograd.Tensor
    import torch

    return not torch._C._functorch.is_batchedtensor(t)


def _outcome(lib, fn, x, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", lib.autograd.gradcheck(fn, (x,), **kwargs))
    except Exception as e:  # noqa: BLE001 - the point is to compare any error
        text = str(e).replace("torch.", "retrograd.")
        head = text.split("\n\nGot:")[0]  # the tensors printed after it differ in format
        if head.startswith("While computing batched gradients, got: "):
            # the error vmap raised inside is vmap's own (torch's gradcheck runs its legacy
            # vmap here, whose messages differ from torch.func.vmap's): compared as raised
            head = "While computing batched gradients, got: <vmap error>\n\n" + \
                head.split("\n\n", 1)[1]
        return (type(e).__name__, head)


PROGRAMS = {
    "ops": lambda lib, fns: (lambda t: (t.sin() * t.exp()).cumsum(0).flip(0)[:3] @ t[:3].t(),
                             dict(check_batched_grad=True, check_forward_ad=True,
                                  check_batched_forward_grad=True)),
    "in_place_on_view": lambda lib, fns: (_in_place_on_view,
                                          dict(check_batched_grad=True)),
    "item_in_backward": lambda lib, fns: (fns["item_bwd"], dict(check_batched_grad=True)),
    "item_in_jvp": lambda lib, fns: (fns["item_jvp"],
                                     dict(check_forward_ad=True, check_backward_ad=False,
                                          check_batched_forward_grad=True)),
    "raise_exception_false": lambda lib, fns: (fns["item_bwd"],
                                               dict(check_batched_grad=True,
                                                    raise_exception=False)),
}


def _in_place_on_view(t):
    y = t.clone()
    y.narrow(0, 1, 2).mul_(t[:2] * 3)
    return y


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_batched_gradcheck_as_torch(name):
    got = []
    for lib in _libs():
        fn, kwargs = PROGRAMS[name](lib, _functions(lib))
        x = lib.tensor(np.linspace(0.2, 1.4, 12).reshape(4, 3), dtype=lib.float64,
                       requires_grad=True)
        got.append(_outcome(lib, fn, x, **kwargs))
    assert got[0] == got[1]


def test_batched_forward_grad_needs_forward_ad():
    got = []
    for lib in _libs():
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        got.append(_outcome(lib, lib.sin, x, check_batched_forward_grad=True))
    assert got[0] == got[1] and got[0][0] == "AssertionError"


def test_batched_mismatch_prints_the_batch():
    fns = _functions(retrograd)
    x = retrograd.ones(3, dtype=retrograd.float64, requires_grad=True)
    from retrograd.autograd.gradcheck import GradcheckError

    with pytest.raises(GradcheckError) as e:
        retrograd.autograd.gradcheck(fns["batch_bwd"], (x,), check_batched_grad=True)
    text = str(e.value)
    assert text.startswith("For output 0 and input 0:")
    got, expected = text.split("\n\nGot:\n")[1].split("\n\nExpected:\n")
    assert "shape" not in got and got.count("[") == expected.count("[") == 3  # both (2, 3)
