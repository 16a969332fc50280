"""F.ctc_loss, nn.CTCLoss and torch._ctc_loss against torch: losses, gradients and node names
for every option (blank, reduction, zero_infinity, padded or concatenated targets, lengths as
lists, tuples or tensors, unbatched input), impossible alignments, and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from tests.nn_functional_helpers import raises_like

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
T, N, C = 12, 4, 6
LOGITS = RNG.standard_normal((T, N, C))
# repeats (which need a blank between them), a label equal to a non-default blank, an empty one
PADDED = np.array([[1, 1, 2, 5], [3, 4, 0, 0], [2, 2, 2, 2], [5, 0, 0, 0]])
TARGET_LENGTHS = [4, 2, 4, 0]
INPUT_LENGTHS = [12, 9, 7, 3]
FLAT = np.concatenate([PADDED[b, :n] for b, n in enumerate(TARGET_LENGTHS)])
# entry 2 (2, 2, 2, 2 in 6 steps) cannot be aligned: its loss is inf
SHORT = [12, 9, 6, 3]


def _log_probs(lib, dtype: str, requires_grad: bool = True, logits=LOGITS):
    x = lib.from_numpy(np.array(logits, dtype=dtype))
    return x.log_softmax(-1).detach().requires_grad_(requires_grad)


def _lengths(lib, values, kind: str):
    if kind == "tensor":
        return lib.tensor(values)
    return tuple(values) if kind == "tuple" else list(values)


def _run(lib, dtype, targets, input_lengths, target_lengths, kind="list", module=False,
         logits=LOGITS, **kwargs):
    lp = _log_probs(lib, dtype, logits=logits)
    args = (lp, lib.from_numpy(np.array(targets)), _lengths(lib, input_lengths, kind),
            _lengths(lib, target_lengths, kind))
    if module:
        loss = lib.nn.CTCLoss(**kwargs)(*args)
    else:
        loss = lib.nn.functional.ctc_loss(*args, **kwargs)
    # a weighted sum so each entry's incoming gradient differs
    weights = lib.from_numpy(np.arange(1, loss.numel() + 1, dtype=dtype).reshape(loss.shape))
    (loss * weights).sum().backward()
    return (loss.detach().numpy(), lp.grad.numpy(), type(loss.grad_fn).__name__,
            type(loss.grad_fn.next_functions[0][0]).__name__ if loss.grad_fn.next_functions
            else None)


def _compare(ours, theirs, dtype):
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (1e-5, 2e-6)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=rtol, atol=atol)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=rtol, atol=atol)
    assert ours[0].dtype == theirs[0].dtype
    assert ours[2:] == theirs[2:]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("layout", ["padded", "flat"])
def test_values_and_gradients(dtype, reduction, zero_infinity, layout):
    targets = PADDED if layout == "padded" else FLAT
    kw = {"reduction": reduction, "zero_infinity": zero_infinity}
    _compare(_run(retrograd, dtype, targets, INPUT_LENGTHS, TARGET_LENGTHS, **kw),
             _run(torch, dtype, targets, INPUT_LENGTHS, TARGET_LENGTHS, **kw), dtype)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_impossible_alignment(reduction, zero_infinity):
    """inf loss (and nan gradient) for an entry too short for its target, unless zeroed."""
    kw = {"reduction": reduction, "zero_infinity": zero_infinity}
    ours = _run(retrograd, "float64", PADDED, SHORT, TARGET_LENGTHS, **kw)
    theirs = _run(torch, "float64", PADDED, SHORT, TARGET_LENGTHS, **kw)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)  # nan where torch's
    assert np.isinf(theirs[0]).any() != zero_infinity
    assert ours[2:] == theirs[2:]


@pytest.mark.parametrize("kind", ["list", "tuple", "tensor"])
@pytest.mark.parametrize("blank", [0, 2, 5])
def test_blank_and_length_kinds(kind, blank):
    kw = {"blank": blank, "reduction": "none"}
    _compare(_run(retrograd, "float32", PADDED, INPUT_LENGTHS, TARGET_LENGTHS, kind, **kw),
             _run(torch, "float32", PADDED, INPUT_LENGTHS, TARGET_LENGTHS, kind, **kw),
             "float32")


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_module(reduction):
    kw = {"blank": 1, "reduction": reduction, "zero_infinity": True}
    _compare(_run(retrograd, "float32", FLAT, SHORT, TARGET_LENGTHS, "tensor", module=True, **kw),
             _run(torch, "float32", FLAT, SHORT, TARGET_LENGTHS, "tensor", module=True, **kw),
             "float32")
    assert repr(retrograd.nn.CTCLoss(blank=1)) == repr(torch.nn.CTCLoss(blank=1))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_unbatched(reduction):
    logits = LOGITS[:, 0]
    kw = {"reduction": reduction}
    _compare(_run(retrograd, "float64", PADDED[0], [10], [4], logits=logits, **kw),
             _run(torch, "float64", PADDED[0], [10], [4], logits=logits, **kw), "float64")


def test_long_sequences():
    """A longer batch with varied lengths, against torch in float64."""
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((40, 5, 7))
    lengths = [9, 0, 15, 3, 12]
    targets = rng.integers(1, 7, size=(5, 15))
    inputs = [40, 17, 33, 40, 25]
    for zi in (False, True):
        _compare(_run(retrograd, "float64", targets, inputs, lengths, logits=logits,
                      zero_infinity=zi, reduction="none"),
                 _run(torch, "float64", targets, inputs, lengths, logits=logits,
                      zero_infinity=zi, reduction="none"), "float64")


def test_private_op_outputs():
    """torch._ctc_loss: the loss and log_alpha (compared where torch computes it)."""
    out = []
    for lib in (retrograd, torch):
        lp = _log_probs(lib, "float64")
        nll, alpha = lib._ctc_loss(lp, lib.from_numpy(PADDED), INPUT_LENGTHS, TARGET_LENGTHS)
        out.append((nll.detach().numpy(), alpha.numpy(), type(nll.grad_fn).__name__,
                    alpha.requires_grad))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-10)
    assert out[0][1].shape == out[1][1].shape
    for b, (il, tl) in enumerate(zip(INPUT_LENGTHS, TARGET_LENGTHS)):
        np.testing.assert_allclose(out[0][1][b, :il, :2 * tl + 1], out[1][1][b, :il, :2 * tl + 1],
                                   rtol=1e-10)
    assert out[0][2:] == out[1][2:]


def test_double_backward_raises():
    def fn(lib):
        lp = _log_probs(lib, "float64")
        loss = lib.nn.functional.ctc_loss(lp, lib.from_numpy(PADDED), INPUT_LENGTHS,
                                          TARGET_LENGTHS)
        (g,) = lib.autograd.grad(loss, lp, create_graph=True)
        assert type(g.grad_fn).__name__ == "NotImplemented"
        g.sum().backward()

    raises_like(lambda: fn(retrograd), lambda: fn(torch))


def _call(lib, shape=(5, 2, 4), targets=((1, 2), (3, 3)), il=(5, 5), tl=(2, 2), dtype="float32",
          **kwargs):
    lp = lib.from_numpy(np.array(RNG.standard_normal(shape), dtype=dtype))
    t = targets if not isinstance(targets, tuple) else np.array(targets)
    il = il(lib) if callable(il) else il
    tl = tl(lib) if callable(tl) else tl
    return lib.nn.functional.ctc_loss(lp, lib.from_numpy(np.array(t)), il, tl, **kwargs)


ERRORS = {
    "blank_high": {"blank": 4},
    "blank_negative": {"blank": -1},
    "input_lengths_size": {"il": [5, 5, 5]},
    "target_lengths_size": {"tl": [2, 2, 2]},
    "input_too_long": {"il": [6, 5]},
    "input_negative": {"il": [-1, 5]},
    "target_too_long": {"tl": [3, 2]},
    "target_negative": {"tl": [-1, 2]},
    "flat_size": {"targets": np.array([1, 2, 3])},
    "padded_batch": {"targets": ((1, 2), (3, 3), (1, 1))},
    "targets_3d": {"targets": np.zeros((2, 2, 1), np.int64)},
    "targets_0d": {"targets": np.array(3)},
    "log_probs_4d": {"shape": (1, 5, 2, 4)},
    "unbatched_lengths": {"shape": (2, 4)},
    "half": {"dtype": "float16"},
    "int": {"dtype": "int32"},
    "float_input_lengths": {"il": lambda lib: lib.tensor([5.0, 5.0]),
                            "tl": lambda lib: lib.tensor([2, 2])},
    "float_target_lengths": {"il": lambda lib: lib.tensor([5, 5]),
                             "tl": lambda lib: lib.tensor([2.0, 2.0])},
    "reduction": {"reduction": "avg"},
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    kw = ERRORS[case]
    raises_like(lambda: _call(retrograd, **kw), lambda: _call(torch, **kw))


@pytest.mark.parametrize("il, tl", [([5, 5], "tensor"), (5, 2)])
def test_mixed_length_kinds_type_error(il, tl):
    """No overload takes a list with a tensor, or plain ints: torch's TypeError (first line)."""
    msgs = []
    for lib in (retrograd, torch):
        with pytest.raises(TypeError) as e:
            _call(lib, il=il, tl=lib.tensor([2, 2]) if tl == "tensor" else tl)
        msgs.append(str(e.value).splitlines()[0])
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float64", "bool"])
def test_targets_of_other_dtypes(dtype):
    """Targets are converted to int64 first, whatever their dtype."""
    targets = np.array([[1, 2], [3, 3]] if dtype != "bool" else [[1, 0], [1, 1]]).astype(dtype)
    state = RNG.bit_generator.state
    ours = _call(retrograd, targets=targets, tl=[2, 1])
    RNG.bit_generator.state = state
    theirs = _call(torch, targets=targets, tl=[2, 1])
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("layout", ["padded", "flat"])
def test_gradcheck(reduction, layout):
    """The gradient against finite differences, through log_softmax as torch's OpInfo checks
    it (torch's formula is the gradient of the composition); zero_infinity zeroes an
    impossible alignment. No forward mode: torch has none for _ctc_loss."""
    targets = retrograd.from_numpy(PADDED if layout == "padded" else FLAT)
    x = retrograd.from_numpy(LOGITS.copy()).requires_grad_()

    def f(logits):
        return retrograd.nn.functional.ctc_loss(logits.log_softmax(2), targets, SHORT,
                                                TARGET_LENGTHS, reduction=reduction,
                                                zero_infinity=True)

    assert retrograd.autograd.gradcheck(f, (x,), check_forward_ad=False,
                                        check_batched_grad=False)
