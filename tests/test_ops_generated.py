"""Generated op tests: gradcheck, gradgradcheck and torch parity for every op sample."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd._ops.registry import OPS
from tests.op_harness import call, resolve, tensor_outputs, to_numpy, torch
from tests.op_samples import all_samples
from tests.op_samples.torch_opinfo_flags import (
    NO_BATCHED_FORWARD_GRAD,
    NO_BATCHED_GRAD,
    NO_FORWARD_AD,
)

SAMPLES = all_samples()
GRAD = [s for s in SAMPLES if s.gradcheck]
GRADGRAD = [s for s in SAMPLES if s.gradcheck and s.gradgrad]
PARITY = [s for s in SAMPLES if s.parity]


def _func(sample):
    """A function of the grad-requiring tensors only, for gradcheck."""
    out, leaves, args, kwargs = call(retrograd, sample)
    fn = resolve(retrograd, sample.op)
    ids = [id(t) for t in leaves]

    def substitute(x, new):
        if isinstance(x, retrograd.Tensor) and id(x) in ids:
            return new[ids.index(id(x))]
        if isinstance(x, list):
            return [substitute(v, new) for v in x]
        if isinstance(x, tuple):
            return tuple(substitute(v, new) for v in x)
        return x

    def f(*new):
        a = substitute(args, new)
        k = {key: substitute(v, new) for key, v in kwargs.items()}
        return tuple(o for o in tensor_outputs(fn(*a, **k)) if o.is_floating_point())

    return f, leaves


# Samples whose batched or forward-mode checks cannot run yet, each with the reason. Every
# other sample runs gradcheck with check_batched_grad, check_forward_ad and
# check_batched_forward_grad, as torch's test_ops_gradients does, unless torch's OpInfo of
# the same op leaves the check off (tests/op_samples/torch_opinfo_flags.py).
BATCHED_GRAD_GAPS: dict = {}
FORWARD_AD_GAPS = {
    "scatter_reduce-prod_two_zeros": "forward mode transposes the backward, whose double "
                                     "backward refuses two zeros scattered to one place",
}
BATCHED_FORWARD_GAPS = {
    **BATCHED_GRAD_GAPS,
}
# samples that draw random numbers (random ones, those that reseed on every call, and
# samplers whose result does not depend on the draw): the vmap of gradcheck's batched checks
# refuses a draw, as torch's does
_RANDOM_PREFIX = "seeded_"
_DRAWS = frozenset({"native_dropout-p0", "normal_tensor_float_times0",
                    "normal_float_tensor_times0", "normal_tensor_tensor_times0",
                    "normal_tensor_tensor_times0-broadcast"})


def _opinfo_name(sample) -> str:
    """The name torch's OpInfo for the sample's op has (Tensor.x is x, operator.x is __x__)."""
    if not isinstance(sample.op, str):
        return ""
    name = sample.op
    if name.startswith("Tensor."):
        return name[len("Tensor."):]
    if name.startswith("operator."):
        return f"__{name[len('operator.'):]}__"
    return name


def batched_checks(sample) -> dict:
    """gradcheck's batched and forward-mode flags for a sample (see BATCHED_GRAD_GAPS)."""
    name = _opinfo_name(sample)
    random = sample.random or sample.id.startswith(_RANDOM_PREFIX) or sample.id in _DRAWS
    forward = name not in NO_FORWARD_AD and sample.id not in FORWARD_AD_GAPS
    return {
        "check_batched_grad": (name not in NO_BATCHED_GRAD and not random
                               and sample.id not in BATCHED_GRAD_GAPS),
        "check_forward_ad": forward,
        "check_batched_forward_grad": (forward and name not in NO_BATCHED_FORWARD_GRAD
                                       and not random
                                       and sample.id not in BATCHED_FORWARD_GAPS),
    }


@pytest.mark.parametrize("sample", GRAD, ids=lambda s: s.id)
def test_gradcheck(sample):
    f, leaves = _func(sample)
    if not leaves:
        pytest.skip("no differentiable inputs")
    assert retrograd.autograd.gradcheck(f, tuple(leaves), atol=sample.atol, rtol=sample.rtol,
                                        **batched_checks(sample))


def test_batched_gaps_name_existing_samples():
    """A gap listed for a sample that no longer exists (or was renamed) is a stale entry."""
    ids = {s.id for s in GRAD}
    stale = sorted(set(BATCHED_GRAD_GAPS) | set(BATCHED_FORWARD_GAPS) | set(FORWARD_AD_GAPS)
                   | _DRAWS)
    assert [i for i in stale if i not in ids] == []


@pytest.mark.parametrize("sample", GRADGRAD, ids=lambda s: s.id)
def test_gradgradcheck(sample):
    f, leaves = _func(sample)
    if not leaves:
        pytest.skip("no differentiable inputs")
    assert retrograd.autograd.gradgradcheck(f, tuple(leaves), atol=sample.atol,
                                            rtol=sample.rtol)


def _weights(outs):
    rng = np.random.default_rng(7)
    return [rng.standard_normal(o.shape) for o in outs]


@pytest.mark.skipif(torch is None, reason="torch not installed")
@pytest.mark.parametrize("sample", PARITY, ids=lambda s: s.id)
def test_parity_with_torch(sample):
    ours, our_leaves, _, _ = call(retrograd, sample, sample.parity_dtype)
    theirs, their_leaves, _, _ = call(torch, sample, sample.parity_dtype)
    o_outs, t_outs = tensor_outputs(ours), tensor_outputs(theirs)
    assert len(o_outs) == len(t_outs)
    for o, t in zip(o_outs, t_outs):
        assert tuple(o.shape) == tuple(t.shape)
        assert o.dtype.name == str(t.dtype).replace("torch.", "")
        if not sample.random:
            np.testing.assert_allclose(to_numpy(o), to_numpy(t), rtol=sample.parity_rtol,
                                       atol=sample.parity_atol, equal_nan=True)
        if sample.check_strides:
            assert o.stride() == t.stride(), "strides differ"
            assert o._is_view() == t._is_view(), "view-ness differs"
        if sample.check_node:
            o_name = None if o.grad_fn is None else o.grad_fn.name()
            t_name = None if t.grad_fn is None else t.grad_fn.name()
            assert o_name == t_name
    diff_o = [o for o in o_outs if o.requires_grad]
    diff_t = [t for t in t_outs if t.requires_grad]
    assert len(diff_o) == len(diff_t)
    if not diff_o or sample.random:
        return
    ws = _weights(diff_o)
    loss_o = sum((o * retrograd.tensor(w, dtype=o.dtype)).sum() for o, w in zip(diff_o, ws))
    loss_t = sum((t * torch.tensor(w, dtype=t.dtype)).sum() for t, w in zip(diff_t, ws))
    loss_o.backward()
    loss_t.backward()
    for lo, lt in zip(our_leaves, their_leaves):
        go, gt = lo.grad, lt.grad
        assert (go is None) == (gt is None)
        if go is not None:
            np.testing.assert_allclose(to_numpy(go), to_numpy(gt), rtol=max(sample.parity_rtol,
                                       1e-4), atol=max(sample.parity_atol, 1e-5))


def test_every_differentiable_op_has_a_sample():
    """A declared op is tested the moment it is declared: this fails until it has samples."""
    from retrograd.utils._python_dispatch import TorchDispatchMode

    seen = set()

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.add(func.name())
            return func(*args, **(kwargs or {}))

    for sample in GRAD:
        f, leaves = _func(sample)
        with Recorder():
            outs = f(*leaves)
        # backward formulas run ops too; record those as well (double backward uses them)
        with Recorder():
            diff = [o for o in outs if o.requires_grad]
            if diff:
                retrograd.autograd.grad(diff, leaves, [retrograd.ones_like(o) for o in diff],
                                        allow_unused=True, create_graph=True)
    declared = {name for name, op in OPS.items() if op.formulas and not name.startswith("_")}
    missing = sorted(declared - seen)
    assert not missing, f"ops without gradcheck samples: {missing}"
