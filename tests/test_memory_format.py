"""Memory formats: torch's objects, channels_last strides (with torch's size-1 and size-0 rules),
contiguity checks and the ops that keep or set a format, compared with torch."""

import pickle

import numpy as np
import pytest
import torch

import retrograd

SHAPES_4D = [(2, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (1, 3, 1, 1), (2, 3, 1, 5), (1, 1, 1, 1),
             (0, 3, 4, 5)]
SHAPES_5D = [(2, 3, 4, 5, 6), (2, 1, 4, 1, 6), (1, 2, 1, 3, 1)]
FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def _pair(shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return torch.tensor(a), retrograd.tensor(a)


@pytest.mark.parametrize("name", FORMATS)
def test_format_objects(name):
    fmt = getattr(retrograd, name)
    assert repr(fmt) == str(fmt) == repr(getattr(torch, name)).replace("torch", "retrograd")
    assert isinstance(fmt, retrograd.memory_format)
    assert repr(retrograd.memory_format) == repr(torch.memory_format).replace("torch",
                                                                              "retrograd")
    assert pickle.loads(pickle.dumps(fmt)) is fmt
    assert fmt == getattr(retrograd, name) and fmt != retrograd.contiguous_format or \
        name == "contiguous_format"


@pytest.mark.parametrize("shape", SHAPES_4D)
def test_channels_last_strides_match_torch(shape):
    t, r = _pair(shape)
    for lib, x in ((torch, t), (retrograd, r)):
        assert isinstance(x.is_contiguous(memory_format=lib.channels_last), bool)
    assert r.is_contiguous(memory_format=retrograd.channels_last) == \
        t.is_contiguous(memory_format=torch.channels_last)
    tc = t.contiguous(memory_format=torch.channels_last)
    rc = r.contiguous(memory_format=retrograd.channels_last)
    assert rc.stride() == tc.stride()
    np.testing.assert_array_equal(rc.numpy(), tc.numpy())
    te = torch.empty(shape, memory_format=torch.channels_last)
    re_ = retrograd.empty(shape, memory_format=retrograd.channels_last)
    assert re_.stride() == te.stride()
    assert re_.is_contiguous() == te.is_contiguous()
    assert re_.is_contiguous(memory_format=retrograd.channels_last)
    assert retrograd.zeros_like(r, memory_format=retrograd.channels_last).stride() == \
        torch.zeros_like(t, memory_format=torch.channels_last).stride()
    assert retrograd.empty_like(r, memory_format=retrograd.channels_last).stride() == \
        torch.empty_like(t, memory_format=torch.channels_last).stride()
    # back to the standard layout
    assert rc.contiguous().stride() == tc.contiguous().stride()
    assert rc.to(memory_format=retrograd.contiguous_format).stride() == \
        tc.to(memory_format=torch.contiguous_format).stride()


@pytest.mark.parametrize("shape", [s for s in SHAPES_4D if 0 not in s])
def test_preserving_ops_keep_channels_last(shape):
    t, r = _pair(shape)
    tc = t.contiguous(memory_format=torch.channels_last)
    rc = r.contiguous(memory_format=retrograd.channels_last)
    def lib(x):
        return torch if isinstance(x, torch.Tensor) else retrograd

    for f in (lambda x: x.clone(), lambda x: lib(x).empty_like(x), lambda x: x.double(),
              lambda x: x.to(memory_format=lib(x).preserve_format)):
        assert f(rc).stride() == f(tc).stride()
    # pointwise ops follow their input's layout (size-1 dims may differ in stride value only)
    for f in (lambda x: x * 2 + 1, lambda x: x.exp(), lambda x: x.relu()):
        ro, to = f(rc), f(tc)
        assert ro.is_contiguous(memory_format=retrograd.channels_last)
        if 1 not in shape:
            assert ro.stride() == to.stride()
        np.testing.assert_allclose(ro.detach().numpy(), to.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("shape", SHAPES_5D)
def test_channels_last_3d(shape):
    t, r = _pair(shape)
    tc = t.contiguous(memory_format=torch.channels_last_3d)
    rc = r.contiguous(memory_format=retrograd.channels_last_3d)
    assert rc.stride() == tc.stride()
    assert retrograd.empty(shape, memory_format=retrograd.channels_last_3d).stride() == \
        torch.empty(shape, memory_format=torch.channels_last_3d).stride()
    assert r.is_contiguous(memory_format=retrograd.channels_last_3d) == \
        t.is_contiguous(memory_format=torch.channels_last_3d)


def test_to_with_dtype_and_format():
    t, r = _pair((2, 3, 4, 5))
    to = t.to(torch.float64, memory_format=torch.channels_last)
    ro = r.to(retrograd.float64, memory_format=retrograd.channels_last)
    assert ro.stride() == to.stride() and ro.dtype == retrograd.float64
    rc = r.contiguous(memory_format=retrograd.channels_last)
    assert rc.to(memory_format=retrograd.channels_last) is rc
    assert rc.contiguous(memory_format=retrograd.channels_last) is rc
    assert r.clone(memory_format=retrograd.channels_last).stride() == \
        t.clone(memory_format=torch.channels_last).stride()


def test_wrong_rank_raises_torchs_error():
    for lib in (torch, retrograd):
        x = lib.zeros(2, 3)
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            x.contiguous(memory_format=lib.channels_last)
        with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
            lib.empty(2, 3, memory_format=lib.channels_last_3d)
        assert x.is_contiguous(memory_format=lib.channels_last) is False
        assert x.is_contiguous(memory_format=lib.preserve_format) is True


def test_channels_last_gradient_flows():
    a = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    t = torch.tensor(a, requires_grad=True)
    r = retrograd.tensor(a, requires_grad=True)
    (t.contiguous(memory_format=torch.channels_last) * 3).sum().backward()
    (r.contiguous(memory_format=retrograd.channels_last) * 3).sum().backward()
    np.testing.assert_array_equal(r.grad.numpy(), t.grad.numpy())
    rc = r.to(memory_format=retrograd.channels_last)
    assert rc.grad_fn.name() == \
        t.to(memory_format=torch.channels_last).grad_fn.name()


def test_module_to_channels_last_converts_conv_weights_only():
    strides = []
    for lib in (torch, retrograd):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Flatten(),
                              lib.nn.Linear(4, 2))
        w = m[0].weight
        m.to(memory_format=lib.channels_last)
        assert m[0].weight is w  # the Parameter object survives
        m.to(lib.float64, memory_format=lib.channels_last)
        strides.append([tuple(p.shape) + p.stride() for p in m.parameters()])
        assert m[0].weight.is_contiguous(memory_format=lib.channels_last)
        assert str(m[0].weight.dtype).endswith("float64")
    assert strides[1] == strides[0]


def test_conv_on_channels_last_input_gives_torchs_values():
    a = np.random.default_rng(2).standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = np.random.default_rng(3).standard_normal((4, 3, 3, 3)).astype(np.float32)
    outs = []
    for lib in (torch, retrograd):
        x = lib.tensor(a).contiguous(memory_format=lib.channels_last).requires_grad_()
        y = lib.nn.functional.conv2d(x, lib.tensor(w))
        y.sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("where", ["input", "weight", "both", "neither"])
def test_convolution_output_follows_channels_last(where):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    out = []
    for lib in (torch, retrograd):
        x, k = lib.tensor(a), lib.tensor(w)
        if where in ("input", "both"):
            x = x.contiguous(memory_format=lib.channels_last)
        if where in ("weight", "both"):
            k = k.contiguous(memory_format=lib.channels_last)
        y = lib.nn.functional.conv2d(x, k, padding=1)
        yt = lib.nn.functional.conv_transpose2d(x, k.transpose(0, 1).contiguous())
        out.append((y.stride(), yt.stride() if where != "weight" else None, y.numpy()))
    assert out[1][:2] == out[0][:2]
    np.testing.assert_allclose(out[1][2], out[0][2], rtol=1e-4, atol=1e-4)
