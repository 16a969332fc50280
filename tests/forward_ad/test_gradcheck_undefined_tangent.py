"""gradcheck(check_forward_ad=True, check_undefined_grad=True) also runs each differentiable
input with a zero tangent and with none, as torch's does: the same number of jvp calls as
torch on the same programs, and torch's error when the two disagree."""

from __future__ import annotations

import pytest

import retrograd

torch = pytest.importorskip("torch")


def _user_fn(lib, calls: list, undefined_as_ones: bool):
    class UserFn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.set_materialize_grads(not undefined_as_ones)
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            calls.append(1)
            if undefined_as_ones:  # wrong: an undefined tangent must act as zero
                x_t = lib.ones(1, dtype=lib.double) if x_t is None else x_t
                y_t = lib.ones(1, dtype=lib.double) if y_t is None else y_t
            return x_t, y_t

    return UserFn


def _count(lib, undefined: bool, batched: bool, y_requires_grad: bool = True) -> int:
    calls: list = []
    x = lib.rand(1, dtype=lib.double, requires_grad=True)
    y = lib.rand(1, dtype=lib.double, requires_grad=y_requires_grad)
    lib.autograd.gradcheck(_user_fn(lib, calls, False).apply, (x, y), check_forward_ad=True,
                           check_backward_ad=False, check_batched_grad=False,
                           check_undefined_grad=undefined, check_batched_forward_grad=batched)
    return len(calls)


@pytest.mark.parametrize("undefined,batched,y_grad", [
    (False, False, True), (True, False, True), (True, True, True), (True, True, False)])
def test_jvp_calls_match_torch(undefined, batched, y_grad):
    ours = _count(retrograd, undefined, batched, y_grad)
    assert ours == _count(torch, undefined, batched, y_grad)
    assert ours == {(False, False, True): 2, (True, False, True): 6, (True, True, True): 12,
                    (True, True, False): 5}[undefined, batched, y_grad]


@pytest.mark.parametrize("lib", [retrograd, torch], ids=["retrograd", "torch"])
def test_undefined_tangent_taken_as_ones_is_caught(lib):
    x = lib.rand(1, dtype=lib.double, requires_grad=True)
    y = lib.rand(1, dtype=lib.double, requires_grad=True)
    fn = _user_fn(lib, [], True).apply
    with pytest.raises(RuntimeError, match="Mismatch in tangent values for output with index"):
        lib.autograd.gradcheck(fn, (x, y), check_forward_ad=True, check_backward_ad=False,
                               check_batched_grad=False, check_undefined_grad=True,
                               check_batched_forward_grad=False)


@pytest.mark.parametrize("materialize", [True, False])
def test_jvp_receives_none_only_without_materializing(materialize):
    def run(lib):
        seen = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.set_materialize_grads(materialize)
                return x.clone(), y.clone()

            @staticmethod
            def jvp(ctx, x_t, y_t):
                seen.append(None if x_t is None else x_t.tolist())
                return lib.full((1,), 5.0) if x_t is None else x_t, y_t

        fw = lib.autograd.forward_ad
        with fw.dual_level():
            y = fw.make_dual(lib.tensor([2.0]), lib.tensor([3.0]))
            out, _ = F.apply(lib.tensor([1.0]), y)
            seen.append(fw.unpack_dual(out).tangent.tolist())
        return seen

    assert run(retrograd) == run(torch) == ([[0.0], [0.0]] if materialize else [None, [5.0]])
