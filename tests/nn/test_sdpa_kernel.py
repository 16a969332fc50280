"""nn.attention.sdpa_kernel and SDPBackend against torch on the CPU: which backend runs
(the node names of the flash and math paths), torch's errors when no enabled backend can run,
the switches restored after the block, and the argument check."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

Q = np.random.RandomState(0).randn(1, 2, 4, 8).astype(np.float32)


def _outcome(lib, backends, **kw):
    from importlib import import_module

    attention = import_module(f"{lib.__name__}.nn.attention")
    chosen = [getattr(attention.SDPBackend, b) for b in backends] \
        if isinstance(backends, list) else getattr(attention.SDPBackend, backends)
    q = lib.tensor(Q, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with attention.sdpa_kernel(chosen):
                r = lib.nn.functional.scaled_dot_product_attention(q, q, q, **kw)
            result = ("ok", type(r.grad_fn).__name__, r.detach().numpy())
        except RuntimeError as e:
            result = ("error", str(e), None)
    messages = [str(w.message).split(" (Triggered")[0] for w in caught]
    switches = (lib.backends.cuda.flash_sdp_enabled(), lib.backends.cuda.math_sdp_enabled(),
                lib.backends.cuda.mem_efficient_sdp_enabled())
    return result, messages, switches


@pytest.mark.parametrize("backends,kw", [
    ("MATH", {}), ("FLASH_ATTENTION", {}), ("EFFICIENT_ATTENTION", {}), ("CUDNN_ATTENTION", {}),
    ("OVERRIDEABLE", {}), (["EFFICIENT_ATTENTION", "MATH"], {}),
    (["MATH", "FLASH_ATTENTION"], {}), ("FLASH_ATTENTION", {"dropout_p": 0.5}),
    ("MATH", {"is_causal": True})])
def test_backend_choice_as_torch(backends, kw):
    ours, theirs = _outcome(retrograd, backends, **kw), _outcome(torch, backends, **kw)
    assert ours[0][:2] == theirs[0][:2]
    if ours[0][0] == "ok" and "dropout_p" not in kw:
        np.testing.assert_allclose(ours[0][2], theirs[0][2], rtol=1e-5, atol=1e-6)
    assert ours[1] == theirs[1]
    assert ours[2] == theirs[2] == (True, True, True)  # restored after the block


def test_backend_enum_and_argument_check():
    from torch.nn.attention import SDPBackend as TorchBackend
    from torch.nn.attention import sdpa_kernel as torch_sdpa_kernel

    from retrograd.nn.attention import SDPBackend, sdpa_kernel

    assert [(b.name, b.value) for b in SDPBackend] == \
        [(k, v.value) for k, v in TorchBackend.__members__.items()]
    assert repr(SDPBackend.MATH) == repr(TorchBackend.MATH)
    assert str(SDPBackend.FLASH_ATTENTION) == str(TorchBackend.FLASH_ATTENTION)
    for bad in ((SDPBackend.MATH,), 3, "math"):
        errors = []
        for fn in (sdpa_kernel, torch_sdpa_kernel):
            with pytest.raises(AssertionError) as e:
                with fn(bad):
                    pass
            errors.append(str(e.value))
        assert errors[0] == errors[1]


def _deprecated_outcome(lib, flags):
    q = lib.tensor(Q)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.backends.cuda.sdp_kernel(**flags) as context:
            inside = (lib.backends.cuda.flash_sdp_enabled(), lib.backends.cuda.math_sdp_enabled(),
                      lib.backends.cuda.mem_efficient_sdp_enabled(),
                      lib.backends.cuda.cudnn_sdp_enabled())
            try:
                r = lib.nn.functional.scaled_dot_product_attention(q, q, q)
                result = ("ok", r.numpy())
            except RuntimeError as e:
                result = ("error", str(e))
    after = (lib.backends.cuda.flash_sdp_enabled(), lib.backends.cuda.math_sdp_enabled())
    warned = [(w.category.__name__, str(w.message).replace("torch", "LIB")) for w in caught]
    return context, inside, result, after, warned


@pytest.mark.parametrize("flags", [dict(), dict(enable_flash=False),
                                   dict(enable_flash=False, enable_math=False,
                                        enable_mem_efficient=False)],
                         ids=["all", "no_flash", "none_on_cpu"])
def test_deprecated_sdp_kernel_as_torch(flags):
    ours = _deprecated_outcome(retrograd, flags)
    theirs = _deprecated_outcome(torch, flags)
    assert ours[:2] == theirs[:2] and ours[3:] == theirs[3:]
    assert ours[2][0] == theirs[2][0]
    if ours[2][0] == "ok":
        np.testing.assert_allclose(ours[2][1], theirs[2][1], rtol=1e-6, atol=1e-6)
    else:
        assert ours[2][1] == theirs[2][1]
    assert ours[4] == [("FutureWarning", ours[4][0][1])] and "deprecated" in ours[4][0][1]


def test_cuda_attention_queries_as_torch():
    for lib in (retrograd, torch):
        cuda = lib.backends.cuda
        assert cuda.is_flash_attention_available() is False
        assert cuda.fp16_bf16_reduction_math_sdp_allowed() is False
        cuda.allow_fp16_bf16_reduction_math_sdp(True)
        assert cuda.fp16_bf16_reduction_math_sdp_allowed() is True
        cuda.allow_fp16_bf16_reduction_math_sdp(False)
        assert cuda.SDPBackend.MATH.name == "MATH"
