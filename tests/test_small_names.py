"""Small names torch programs reach for, compared with torch 2.13: device movers of other
backends (refused: retrograd computes on the CPU), Generator offsets, the deprecated
testing.assert_allclose, Optimizer.profile_hook_step."""

import warnings

import numpy as np
import pytest

import retrograd
from tests.parity.harness import error_of, torch_or_skip


@pytest.mark.parametrize("name", ["cuda", "xpu", "mtia", "ipu"])
def test_other_device_movers_are_refused(name):
    for obj in (retrograd.ones(2), retrograd.nn.Linear(2, 2)):
        with pytest.raises(RuntimeError, match=f"retrograd runs on the CPU; device '{name}'"):
            getattr(obj, name)()
    t = retrograd.ones(2)
    assert t.cpu() is t
    for args, kwargs in (((name,), {}), ((), {"device": name}), ((f"{name}:0", retrograd.int64),
                                                               {})):
        with pytest.raises(RuntimeError, match=f"retrograd runs on the CPU; device '{name}"):
            t.to(*args, **kwargs)
    with pytest.raises(RuntimeError, match="device 'cuda:0'"):
        t.to(0)  # an index names a CUDA device
    assert t.to("cpu") is t and t.to("meta", retrograd.float64).dtype == retrograd.float64


def _index_as_device(lib):
    """Every way a device index reaches a tensor or module: each raises, none stays silently on
    the CPU."""
    m, t = lib.nn.Linear(2, 2), lib.ones(2)
    calls = (lambda: m.to(0), lambda: m.to(device=1), lambda: m.to(0, lib.float64),
             lambda: t.to(0), lambda: t.to(device=1), lambda: lib.zeros(2, device=0))
    raised = [error_of(c)[:2] for c in calls]
    return raised, m.weight.dtype, m.to("cpu") is m, lib.zeros(2, device=lib.device("cpu")).shape


def test_device_index_is_refused_everywhere_like_torch():
    torch = torch_or_skip()
    ours, theirs = _index_as_device(retrograd), _index_as_device(torch)
    assert ours[0] == theirs[0] == [("raised", "RuntimeError")] * 6
    assert ours[1] == retrograd.float32 and theirs[1] == torch.float32  # nothing half-moved
    assert ours[2] and theirs[2] and tuple(ours[3]) == tuple(theirs[3]) == (2,)
    with pytest.raises(RuntimeError, match="device 'cuda:1'"):
        retrograd.nn.Linear(2, 2).to(device=1)


def _to_arguments(lib):
    """Tensor.to / Module.to with positional flags and with arguments of no kind they read."""
    t, m = lib.ones(2), lib.nn.Linear(2, 2)
    copied = t.to(lib.float32, False, True)
    calls = (lambda: t.to(object()), lambda: t.to(lib.float32, object()),
             lambda: m.to(object()), lambda: t.to(lib.float32, False, True, True))
    return (copied is t, copied.tolist(), t.to(lib.float32, False, False) is t,
            [error_of(c) for c in calls])


def test_to_reads_positional_flags_and_refuses_other_arguments_like_torch():
    torch = torch_or_skip()
    ours, theirs = _to_arguments(retrograd), _to_arguments(torch)
    assert ours == theirs
    assert ours[0] is False and ours[2] is True
    assert [e[:2] for e in ours[3]] == [("raised", "TypeError")] * 4
    assert ours[3][0][2].startswith("to() received an invalid combination of arguments - got "
                                    "(object), but expected one of:\n * (torch.device device")


def test_cpu_generator_has_no_offset_like_torch():
    torch = torch_or_skip()
    for lib in (retrograd, torch):
        g = lib.Generator()
        assert error_of(g.get_offset) == ("raised", "RuntimeError",
                                          "CPU Generator does not use offset")
        assert error_of(g.set_offset, 3)[:3] == ("raised", "RuntimeError",
                                                 "CPU Generator does not use offset")


def _allclose_program(lib):
    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out.append(error_of(lib.testing.assert_allclose, lib.ones(2), lib.ones(2) + 5e-5))
        out.append(error_of(lib.testing.assert_allclose, lib.ones(2), [1.0, 1.001]))
        out.append(error_of(lib.testing.assert_allclose, lib.tensor([1, 2]), [1, 2]))
        out.append(error_of(lib.testing.assert_allclose, lib.tensor([1, 2]), [1, 3]))
        out.append(error_of(lib.testing.assert_allclose, lib.ones(2, dtype=lib.float64),
                            lib.ones(2) * (1 + 2e-5)))
        out.append(error_of(lib.testing.assert_allclose, lib.tensor([float("nan")]),
                            [float("nan")]))
        out.append(error_of(lib.testing.assert_allclose, lib.ones(2), lib.zeros(2), msg="mine"))
    out.append(sorted({(w.category.__name__, str(w.message)) for w in caught}))
    return [o[:2] if o[0] == "raised" else o for o in out[:-1]] + [out[-1]], \
        [o[2] for o in out[:-1] if o[0] == "raised"]


def test_assert_allclose_is_torchs():
    torch = torch_or_skip()
    (ours, our_msgs), (theirs, their_msgs) = _allclose_program(retrograd), \
        _allclose_program(torch)
    assert ours == theirs
    assert [m.splitlines()[0] for m in our_msgs] == [m.splitlines()[0] for m in their_msgs]
    assert our_msgs[-1] == "mine"


def test_profile_hook_step_wraps_a_step_with_the_hooks():
    calls = []

    class Plain(retrograd.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        @retrograd.optim.Optimizer.profile_hook_step
        def step(self, closure=None):
            calls.append("step")
            for group in self.param_groups:
                for p in group["params"]:
                    p.add_(p.grad, alpha=-group["lr"])

    w = retrograd.nn.Parameter(retrograd.ones(2))
    opt = Plain([w])
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    (w * w).sum().backward()
    opt.step()
    assert calls == ["pre", "step", "post"]  # once each: the decorated step is not wrapped again
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 0.8])
    assert retrograd.optim.Optimizer.OptimizerPreHook is not None
