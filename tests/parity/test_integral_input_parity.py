"""Functions given integral, bool and 16-bit float tensors, against torch: the same result
dtype and values, or the same error (torch refuses integral inputs to its floating-only
kernels by name, "mse_cpu" not implemented for 'Long', where NumPy would compute happily), and
the stacking functions given a tensor where they take a sequence of tensors (iterating its
rows would be a silent wrong answer)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

DTYPES = ["int64", "int32", "uint8", "bool", "float16", "bfloat16", "float32"]
A = [[3, 0], [1, 2], [4, 4], [2, 1]]
B = [[1, 0], [1, 1], [0, 4], [2, 0]]

CALLS = {
    "mse_loss": lambda L, a, b: L.nn.functional.mse_loss(a, b),
    "huber_loss": lambda L, a, b: L.nn.functional.huber_loss(a, b),
    "smooth_l1_loss": lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b),
    "glu": lambda L, a, b: L.nn.functional.glu(a),
    "group_norm": lambda L, a, b: L.nn.functional.group_norm(a.reshape(2, 2, 2), 1),
    "bce_with_logits": lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(a, b),
    "bce_with_logits float input":
        lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(a.double(), b),
    "top-level bce_with_logits": lambda L, a, b: L.binary_cross_entropy_with_logits(a, b),
    "kl_div": lambda L, a, b: L.nn.functional.kl_div(a, b),
    "kl_div float input": lambda L, a, b: L.nn.functional.kl_div(a.double(), b),
    "max_pool1d": lambda L, a, b: L.nn.functional.max_pool1d(a.reshape(1, 4, 2), 1),
    "soft_margin_loss": lambda L, a, b: L.nn.functional.soft_margin_loss(a, b),
    "gaussian_nll_loss": lambda L, a, b: L.nn.functional.gaussian_nll_loss(a, b, b),
    "gaussian_nll_loss float var": lambda L, a, b: L.nn.functional.gaussian_nll_loss(a, b, 0.5),
    "hinge_embedding_loss": lambda L, a, b: L.nn.functional.hinge_embedding_loss(a, b),
    "top-level hinge_embedding_loss": lambda L, a, b: L.hinge_embedding_loss(a, b),
    "margin_ranking_loss": lambda L, a, b: L.nn.functional.margin_ranking_loss(a, b, b),
    "top-level margin_ranking_loss": lambda L, a, b: L.margin_ranking_loss(a, b, b),
    "median": lambda L, a, b: L.median(a),
    "median dim": lambda L, a, b: L.median(a, 0).values,
    "nanmedian": lambda L, a, b: L.nanmedian(a),
    "nanmedian dim": lambda L, a, b: L.nanmedian(a, 1).values,
    "searchsorted": lambda L, a, b: L.searchsorted(a[:, 0].sort().values, b),
    "gradient": lambda L, a, b: L.gradient(a)[0],
    "linalg.vander": lambda L, a, b: L.linalg.vander(a[:, 0]),
    "matrix_norm fro": lambda L, a, b: L.linalg.matrix_norm(a[:2]),
    "matrix_norm 1": lambda L, a, b: L.linalg.matrix_norm(a[:2], 1),
    "matrix_norm 2": lambda L, a, b: L.linalg.matrix_norm(a[:2], 2),
    "sigmoid": lambda L, a, b: L.sigmoid(a * 0.37),
}


def _outcome(lib, name: str, dtype: str):
    a = lib.tensor(A).to(getattr(lib, dtype))
    b = lib.tensor(B).to(getattr(lib, dtype))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = CALLS[name](lib, a, b)
    except Exception as e:  # noqa: BLE001 - compared with torch's outcome
        return type(e).__name__, str(e).split("\n")[0]
    values = out.double().numpy() if out.dtype != lib.bool else out.numpy()
    return str(out.dtype).split(".")[1], list(out.shape), np.round(values, 5).tolist()


# torch computes these in place in the target's (or input's) 16-bit dtype, rounding after each
# step, and gives a float64 input's loss the dtype of a float target; retrograd rounds once
DIFFERENT = {("bce_with_logits float input", dt) for dt in ("float16", "bfloat16", "float32")}
DIFFERENT |= {("soft_margin_loss", "bfloat16"), ("bce_with_logits", "bfloat16")}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CALLS))
def test_dtypes_as_torch_takes_them(name, dtype):
    if (name, dtype) in DIFFERENT:
        pytest.skip("rounding in torch's in-place steps")
    assert _outcome(retrograd, name, dtype) == _outcome(torch, name, dtype)


STACKING = ["cat", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack"]


@pytest.mark.parametrize("args", ["a tensor", "a tensor and a dim", "a list with a number",
                                  "a number", "an empty list", "a list"])
@pytest.mark.parametrize("name", STACKING)
def test_stacking_takes_a_sequence_of_tensors_as_torch(name, args):
    def run(lib):
        x = lib.ones(2, 3)
        call = {"a tensor": (x,), "a tensor and a dim": (x, 0), "a list with a number": ([x, 1],),
                "a number": (3,), "an empty list": ([],), "a list": ([x, x],)}[args]
        try:
            return list(getattr(lib, name)(*call).shape)
        except Exception as e:  # noqa: BLE001 - compared with torch's outcome
            return type(e).__name__, str(e)

    assert run(retrograd) == run(torch)


FUNCTION_FORMS = {
    "flip list": lambda L, x: L.flip(x, [0]), "flip int": lambda L, x: L.flip(x, 0),
    "flip by keyword": lambda L, x: L.flip(x, dims=0), "flip varargs": lambda L, x: L.flip(x, 0, 1),
    "flip without dims": lambda L, x: L.flip(x),
    "flip a tensor": lambda L, x: L.flip(x, L.tensor([0])),
    "tile tuple": lambda L, x: L.tile(x, (2,)), "tile int": lambda L, x: L.tile(x, 2),
    "reshape tuple": lambda L, x: L.reshape(x, (6,)), "reshape int": lambda L, x: L.reshape(x, -1),
    "reshape varargs": lambda L, x: L.reshape(x, 3, 2),
    "reshape a Size": lambda L, x: L.reshape(x, L.Size([6])),
    "method flip varargs": lambda L, x: x.flip(0, 1),
    "method reshape int": lambda L, x: x.reshape(-1),
    "method tile int": lambda L, x: x.tile(2),
    "rms_norm int": lambda L, x: L.rms_norm(x, 3), "rms_norm list": lambda L, x: L.rms_norm(x, [3]),
    "F.rms_norm int": lambda L, x: L.nn.functional.rms_norm(x, 3),
    "RMSNorm int": lambda L, x: L.nn.RMSNorm(3)(x),
}


@pytest.mark.parametrize("name", list(FUNCTION_FORMS))
def test_function_forms_take_their_sizes_as_torchs_parser(name):
    # torch's functions take sizes as one list where the methods take varargs
    def run(lib):
        try:
            return list(FUNCTION_FORMS[name](lib, lib.ones(2, 3)).shape)
        except TypeError as e:
            return str(e)

    assert run(retrograd) == run(torch)
