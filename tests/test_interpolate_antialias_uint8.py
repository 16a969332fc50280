"""F.interpolate with antialias=True (bilinear, bicubic, lanczos) and on uint8 images, against
torch: float results to rounding, uint8 results bit for bit (torch's integer kernels), and
torch's refusals of other dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RS = np.random.RandomState(7)
SHAPES = [((1, 3, 17, 23), {"size": (5, 7)}), ((2, 1, 8, 9), {"size": (20, 4)}),
          ((1, 4, 10, 10), {"scale_factor": 0.37}),
          ((1, 2, 10, 12), {"scale_factor": (0.5, 2.5)}),
          ((1, 1, 7, 7), {"size": (3, 3), "align_corners": True}),
          ((1, 3, 9, 13), {"size": (16, 5), "align_corners": True}),
          ((1, 1, 5, 6), {"size": (1, 1)}), ((1, 2, 6, 6), {"size": (6, 6)})]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("shape,kw", SHAPES)
def test_antialiased_float_matches_torch(mode, shape, kw):
    if mode == "lanczos" and kw.get("align_corners"):
        return  # refused, below
    x = RS.randn(*shape)
    a = TF.interpolate(torch.tensor(x, requires_grad=True), mode=mode, antialias=True, **kw)
    b = F.interpolate(retrograd.tensor(x, requires_grad=True), mode=mode, antialias=True, **kw)
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-12, atol=1e-13)
    assert b.grad_fn.name() == a.grad_fn.name()
    g = RS.randn(*a.shape)
    (ga,) = torch.autograd.grad(a, a.grad_fn.next_functions[0][0].variable, torch.tensor(g))
    b.backward(retrograd.tensor(g))
    np.testing.assert_allclose(b.grad_fn.next_functions[0][0].variable.grad.numpy(),
                               ga.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode,antialias", [("bilinear", True), ("bilinear", False),
                                            ("bicubic", True), ("bicubic", False),
                                            ("lanczos", True),
                                            ("nearest", False), ("nearest-exact", False)])
@pytest.mark.parametrize("shape,kw", SHAPES)
def test_uint8_images_match_torch_bit_for_bit(mode, antialias, shape, kw):
    if (mode.startswith("nearest") or mode == "lanczos") and "align_corners" in kw:
        return  # (not an option of these modes)
    x = RS.randint(0, 256, shape).astype(np.uint8)
    a = TF.interpolate(torch.tensor(x), mode=mode, antialias=antialias, **kw)
    b = F.interpolate(retrograd.tensor(x), mode=mode, antialias=antialias, **kw)
    assert b.dtype == retrograd.uint8
    np.testing.assert_array_equal(b.numpy(), a.numpy())


def test_uint8_random_sizes_match_torch_bit_for_bit():
    rs = np.random.RandomState(0)
    for _ in range(20):
        h, w = rs.randint(3, 40, 2)
        oh, ow = rs.randint(1, 50, 2)
        x = rs.randint(0, 256, (1, 3, h, w)).astype(np.uint8)
        for mode in ("bilinear", "bicubic", "lanczos"):
            for antialias in (False, True) if mode != "lanczos" else (True,):
                a = TF.interpolate(torch.tensor(x), size=(int(oh), int(ow)), mode=mode,
                                   antialias=antialias)
                b = F.interpolate(retrograd.tensor(x), size=(int(oh), int(ow)), mode=mode,
                                  antialias=antialias)
                np.testing.assert_array_equal(b.numpy(), a.numpy())


def _outcome(lib, fn, shape, dtype, mode, antialias):
    try:
        r = fn(lib.zeros(shape, dtype=getattr(lib, dtype)), size=(2,) * (len(shape) - 2),
               mode=mode, antialias=antialias)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e)
    return "ok", str(r.dtype).split(".")[-1]


@pytest.mark.parametrize("dtype", ["uint8", "int32", "int64", "int16", "bool", "float16",
                                   "bfloat16", "float32"])
def test_dtypes_as_torch(dtype):
    for shape in ((1, 1, 4, 4), (1, 4, 4), (1, 1, 3, 3, 3)):
        modes = {1: ["nearest", "linear", "nearest-exact"],
                 2: ["nearest", "bilinear", "bicubic", "nearest-exact"],
                 3: ["nearest", "trilinear", "nearest-exact"]}[len(shape) - 2]
        for mode in modes:
            for aa in ((False, True) if mode in ("bilinear", "bicubic") else (False,)):
                assert _outcome(retrograd, F.interpolate, shape, dtype, mode, aa) == \
                    _outcome(torch, TF.interpolate, shape, dtype, mode, aa), (shape, mode, aa)


def test_half_precision_results_keep_their_dtype_and_torchs_accuracy():
    """Half types resample with float32 weights and round once, so they are at least as close
    to the exact result as torch's."""
    x = RS.randn(1, 2, 6, 7).astype(np.float32)
    for name in ("bfloat16", "float16"):
        for mode in ("bilinear", "bicubic", "nearest"):
            xt = torch.tensor(x).to(getattr(torch, name))
            exact = TF.interpolate(xt.double(), size=(4, 9), mode=mode).numpy()
            a = TF.interpolate(xt, size=(4, 9), mode=mode)
            b = F.interpolate(retrograd.tensor(x).to(getattr(retrograd, name)), size=(4, 9),
                              mode=mode)
            assert b.dtype == getattr(retrograd, name)
            ours = np.abs(b.float().numpy() - exact).max()
            assert ours <= np.abs(a.float().numpy() - exact).max() + 1e-12, (name, mode)


def test_antialias_refusals_as_torch():
    got = []
    for lib, fn in ((retrograd, F.interpolate), (torch, TF.interpolate)):
        errors = []
        for args, kw in (((lib.zeros(1, 2, 5),), {"size": 2, "mode": "linear"}),
                         ((lib.zeros(1, 1, 4, 4),), {"size": 2, "mode": "nearest"}),
                         ((lib.zeros(1, 1, 4, 4),), {"size": (0, 2), "mode": "bilinear"}),
                         ((lib.zeros(1, 1, 4, 4),), {"size": 2, "mode": "lanczos",
                                                     "align_corners": True}),
                         ((lib.zeros(1, 1, 4, 4),), {"size": 2, "mode": "lanczos",
                                                     "antialias": False}),
                         ((lib.zeros(1, 1, 4, 4),), {"size": 2, "mode": "lanczos",
                                                     "antialias": False,
                                                     "align_corners": True}),
                         ((lib.zeros(1, 1, 4, 4, dtype=lib.float16),),
                          {"size": 2, "mode": "lanczos"})):
            with pytest.raises(Exception) as e:
                fn(*args, **{"antialias": True, **kw})
            errors.append((type(e.value).__name__, str(e.value)))
        got.append(errors)
    assert got[0] == got[1]
