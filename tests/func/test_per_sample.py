"""Per-sample gradients (vmap(grad) over functional_call) of an MLP and a small CNN: equal to a
loop of per-sample backward calls and to torch.func; functional_call and stack_module_state."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from tests.func._parity import errors_alike, same


def _model(lib, conv: bool, inplace: bool = False):
    nn = lib.nn
    if conv:
        model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(inplace), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(4 * 3 * 3, 10))
    else:
        model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(inplace), nn.Linear(32, 10))
    rs = np.random.RandomState(5)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rs.randn(*p.shape).astype(np.float32) * 0.3))
    return model


def _data(lib, conv: bool):
    rs = np.random.RandomState(0)
    x = rs.randn(6, 1, 8, 8) if conv else rs.randn(6, 16)
    return lib.tensor(x.astype(np.float32)), lib.tensor(np.arange(6) % 10)


def per_sample_grads(lib, conv: bool, inplace: bool = False):
    model = _model(lib, conv, inplace)
    x, y = _data(lib, conv)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


@pytest.mark.parametrize("inplace", [False, True], ids=["ReLU", "ReLU(inplace=True)"])
@pytest.mark.parametrize("conv", [False, True])
def test_per_sample_grads_match_torch(conv, inplace):
    import torch

    same(per_sample_grads(retrograd, conv, inplace), per_sample_grads(torch, conv, inplace),
         atol=1e-5)


@pytest.mark.parametrize("conv", [False, True])
def test_per_sample_grads_equal_a_loop_of_backward_calls(conv):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = per_sample_grads(retrograd, conv)
    model = _model(retrograd, conv)
    x, y = _data(retrograd, conv)
    names = [k for k, _ in model.named_parameters()]
    for i in range(6):
        model.zero_grad()
        retrograd.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        for k, p in zip(names, model.parameters()):
            np.testing.assert_allclose(got[k][i].numpy(), p.grad.numpy(), atol=1e-5)


def test_mlp_per_sample_grads_need_no_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        per_sample_grads(retrograd, conv=False)


def test_functional_call_swaps_and_restores():
    def prog(lib):
        model = _model(lib, conv=False)
        before = model[0].weight
        w = {"0.weight": lib.ones(32, 16), "2.bias": lib.zeros(10)}
        out = lib.func.functional_call(model, w, lib.ones(2, 16))
        assert model[0].weight is before
        return out, lib.func.functional_call(model, ({"0.bias": lib.ones(32)}, {}),
                                             (lib.ones(1, 16),), {})
    same(prog(retrograd), prog(__import__("torch")))


def test_functional_call_errors_and_strict():
    def dup(lib, x):
        model = lib.nn.Linear(2, 2)
        return lib.func.functional_call(model, ({"weight": x}, {"weight": x}), x)
    errors_alike(dup, np.ones((2, 2), np.float32))

    def strict(lib, x):
        model = lib.nn.Linear(2, 2)
        return lib.func.functional_call(model, {"weight": x, "extra": x}, x, strict=True)
    errors_alike(strict, np.ones((2, 2), np.float32))


def test_functional_call_ties_weights():
    def prog(lib):
        model = lib.nn.Sequential(lib.nn.Linear(3, 3, bias=False), lib.nn.Linear(3, 3,
                                                                                    bias=False))
        model[1].weight = model[0].weight
        return lib.func.functional_call(model, {"0.weight": lib.eye(3) * 2}, lib.ones(1, 3))
    same(prog(retrograd), prog(__import__("torch")))


def test_stack_module_state_and_ensembling():
    import torch

    def prog(lib):
        models = [_model(lib, conv=False) for _ in range(3)]
        with lib.no_grad():
            for i, m in enumerate(models):
                for p in m.parameters():
                    p.mul_(i + 1)
        params, buffers = lib.func.stack_module_state(models)
        base = models[0]

        def run(p, b, x):
            return lib.func.functional_call(base, (p, b), (x,))
        x = lib.tensor(np.random.RandomState(1).randn(4, 16).astype(np.float32))
        out = lib.func.vmap(run, in_dims=(0, 0, None))(params, buffers, x)
        return params, out, params["0.weight"].requires_grad
    same(prog(retrograd), prog(torch))
    errors_alike(lambda lib: lib.func.stack_module_state([]))
    errors_alike(lambda lib: lib.func.stack_module_state([lib.nn.Linear(1, 1),
                                                          lib.nn.ReLU()]))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 1])
@pytest.mark.parametrize("weighted", [False, True])
def test_per_sample_cross_entropy_variants(reduction, ignore_index, weighted):
    import torch

    x = np.random.RandomState(0).randn(4, 3, 5).astype(np.float32)
    t = np.array([[0, 1, 2], [1, 1, 4], [3, 1, 0], [2, 2, 2]])

    def prog(lib):
        w = lib.tensor(np.arange(1, 6).astype(np.float32)) if weighted else None

        def f(a, y):
            return lib.nn.functional.cross_entropy(a, y, weight=w, reduction=reduction,
                                                   ignore_index=ignore_index).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.func.vmap(lib.func.grad_and_value(f))(lib.tensor(x), lib.tensor(t))
    same(prog(retrograd), prog(torch), atol=1e-6)
