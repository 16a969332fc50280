"""nn.utils.fusion, skip_init and stateless.functional_call against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.parity.harness import both, error_of

pytest.importorskip("torch")

RNG = np.random.default_rng(5)


def _fill(lib, module, seed):
    rng = np.random.default_rng(seed)
    module.double()
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.from_numpy(rng.standard_normal(tuple(p.shape))))
        for b in module.buffers():
            if b.is_floating_point():
                b.copy_(lib.from_numpy(np.abs(rng.standard_normal(tuple(b.shape))) + 0.1))
    return module


CONVS = {
    "conv1d": (lambda lib: lib.nn.Conv1d(3, 4, 3), lambda lib: lib.nn.BatchNorm1d(4),
               (2, 3, 7), False),
    "conv2d": (lambda lib: lib.nn.Conv2d(3, 4, 3), lambda lib: lib.nn.BatchNorm2d(4),
               (2, 3, 6, 6), False),
    "conv2d_nobias": (lambda lib: lib.nn.Conv2d(3, 4, 3, bias=False),
                      lambda lib: lib.nn.BatchNorm2d(4, affine=False), (2, 3, 6, 6), False),
    "conv3d": (lambda lib: lib.nn.Conv3d(2, 3, 2), lambda lib: lib.nn.BatchNorm3d(3),
               (1, 2, 4, 4, 4), False),
    "convT2d": (lambda lib: lib.nn.ConvTranspose2d(3, 4, 3), lambda lib: lib.nn.BatchNorm2d(4),
                (2, 3, 5, 5), True),
}


@pytest.mark.parametrize("case", list(CONVS))
def test_fuse_conv_bn_eval(case):
    make_conv, make_bn, shape, transpose = CONVS[case]
    x = RNG.standard_normal(shape)

    def prog(lib):
        conv = _fill(lib, make_conv(lib), 1).eval()
        bn = _fill(lib, make_bn(lib), 2).eval()
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn, transpose=transpose)
        xt = lib.from_numpy(x.copy())
        y = fused(xt)
        y.sum().backward()
        return [y, bn(conv(xt)), type(fused).__name__, fused is conv, fused.state_dict(),
                type(fused.weight).__name__, type(fused.bias).__name__, fused.weight.grad,
                fused.bias.grad, conv.weight.grad]

    both(prog, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("bn_features", [3, 1])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_linear_bn_eval(bn_features, bias):
    x = RNG.standard_normal((4, 5))

    def prog(lib):
        lin = _fill(lib, lib.nn.Linear(5, 3, bias=bias), 3).eval()
        bn = _fill(lib, lib.nn.BatchNorm1d(bn_features), 4).eval()
        fused = lib.nn.utils.fuse_linear_bn_eval(lin, bn)
        xt = lib.from_numpy(x.copy())
        out = [fused(xt), fused.state_dict(), type(fused.bias).__name__]
        if bn_features == 3:
            out.append(bn(lin(xt)))
        return out

    both(prog, rtol=1e-6, atol=1e-9)


def test_fuse_weights_and_errors():
    def prog(lib):
        f = lib.nn.utils.fusion
        w = lib.from_numpy(RNG_W.copy()).requires_grad_()
        rm, rv = lib.tensor([0.1, -0.2], dtype=lib.float64), lib.tensor([0.5, 2.0],
                                                                        dtype=lib.float64)
        cw, cb = f.fuse_conv_bn_weights(w, None, rm, rv, 1e-5, None, None)
        lw, lb = f.fuse_linear_bn_weights(w.reshape(2, -1), None, rm, rv, 1e-3,
                                          lib.ones(2, dtype=lib.float64),
                                          lib.zeros(2, dtype=lib.float64))
        out = [cw, cb, cw.requires_grad, cb.requires_grad, lw, lb, lb.requires_grad,
               type(cw).__name__]
        conv, bn = lib.nn.Conv2d(3, 2, 1), lib.nn.BatchNorm2d(2)
        out.append(error_of(f.fuse_conv_bn_eval, conv, bn))
        lin = lib.nn.Linear(3, 2).eval()
        out.append(error_of(f.fuse_linear_bn_eval, lin, lib.nn.BatchNorm1d(4).eval()))
        out.append(error_of(f.fuse_linear_bn_eval, lin, lib.nn.BatchNorm1d(2)))
        nostats = lib.nn.BatchNorm1d(2, track_running_stats=False).eval()
        out.append(error_of(f.fuse_linear_bn_eval, lin, nostats))
        return out

    both(prog, rtol=1e-6, atol=1e-9)


RNG_W = np.random.default_rng(9).standard_normal((2, 3, 2, 2))


def test_skip_init():
    def prog(lib):
        m = lib.nn.utils.skip_init(lib.nn.Linear, 4, 3, dtype=lib.float64)
        bn = lib.nn.utils.skip_init(lib.nn.BatchNorm1d, 3)
        out = [type(m).__name__, repr(m), m.weight.shape, m.weight.dtype, m.bias.shape,
               m.weight.requires_grad, type(m.weight).__name__, list(bn.state_dict()),
               [v.shape for v in bn.state_dict().values()], str(m.weight.device)]

        class NoDevice(lib.nn.Module):
            def __init__(self, n):
                super().__init__()

        out.append(error_of(lib.nn.utils.skip_init, NoDevice, 3))
        out.append(error_of(lib.nn.utils.skip_init, int, 3))
        return out

    both(prog)


def test_stateless_functional_call():
    x = RNG.standard_normal((2, 4))

    def prog(lib):
        m = _fill(lib, lib.nn.Linear(4, 3), 6)
        w = lib.from_numpy(RNG_W.reshape(-1)[:12].reshape(3, 4).copy()).requires_grad_()
        xt = lib.from_numpy(x.copy())
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = lib.nn.utils.stateless.functional_call(m, {"weight": w}, xt)
            y2 = lib.nn.utils.stateless.functional_call(m, {"weight": w}, (xt,))
        y.sum().backward()
        out = [y, y2, w.grad, m.weight.grad, m.weight,
               [(c.category.__name__, str(c.message)) for c in caught]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            out.append(error_of(lib.nn.utils.stateless.functional_call, m, {"weight": w}, xt,
                                strict=True))
            out.append(error_of(lib.nn.utils.stateless.functional_call, m,
                                {"weight": w, "other": w}, xt, strict=True))
            # a parametrized module takes its original by its state_dict name
            lib.nn.utils.parametrizations.weight_norm(m)
            g = lib.ones(3, 1, dtype=lib.float64)
            out.append(lib.nn.utils.stateless.functional_call(
                m, {"parametrizations.weight.original0": g}, xt))
            out.append(m(xt))
        return out

    both(prog, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_convert_conv_weight_memory_format(fmt):
    x2 = RNG.standard_normal((1, 3, 5, 5))

    def prog(lib):
        mf = getattr(lib, fmt)
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.ReLU(),
                                lib.nn.Sequential(lib.nn.ConvTranspose2d(4, 2, 2)),
                                lib.nn.Conv3d(1, 1, 1), lib.nn.Linear(3, 3))
        _fill(lib, net, 8)
        w = net[0].weight
        out = lib.nn.utils.convert_conv2d_weight_memory_format(net, mf)
        net3 = lib.nn.utils.convert_conv3d_weight_memory_format(
            lib.nn.Sequential(lib.nn.Conv3d(2, 3, 2)), lib.channels_last_3d)
        return [out is net, net[0].weight is w, net[0].weight.stride(),
                net[2][0].weight.stride(), net[3].weight.stride(), net[4].weight.stride(),
                net3[0].weight.stride(), net[2](net[0](lib.from_numpy(x2.copy())))]

    both(prog, rtol=1e-6, atol=1e-9)
