"""vmap over every op sample, three ways, each against a loop over the examples:
  forward  vmap(f) equals f on each example;
  grad     vmap(grad(f)) equals grad(f) on each example (per-example gradients);
  jvp      vmap(jvp(f)) with batched primals and tangents equals jvp per example.
Formulas and composites that looked at values through a tensor's array read zeros from a
batched value (its array holds only the geometry) and gave wrong results without an error;
these run every op's backward and tangent rules with batched inputs."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest

import retrograd
from tests.test_ops_generated import GRAD, _func

_VIEW_WRITE = "an in-place write into an unfolded (overlapping) view of a batched value"
# samples vmap still refuses (or gets wrong in shape) where torch.func computes them, with why
_BATCHING: dict = {}  # none left
KNOWN = {
    "forward": _BATCHING,
    "jvp": _BATCHING,
    "grad": {**_BATCHING, "unfold_then_write": _VIEW_WRITE},
}
# torch refuses these too: a random op under randomness="error", a check on the values
# that would branch per example (gaussian_nll_loss's var >= 0), and tangents for an op with no
# forward derivative in torch (segment_reduce)
REFUSALS = ("vmap: called random operation while in randomness error mode",
            "data-dependent control flow",
            "that does not support it because it has not been implemented yet")


def _batch(leaves: list, size: int = 3) -> tuple:
    """Primals: the sample's own values first (zeros and ties kept), then perturbed copies;
    tangents: random."""
    rng = np.random.default_rng(0)
    primals, tangents = [], []
    for t in leaves:
        base = t.detach()
        primals.append(retrograd.stack([base] + [base + retrograd.tensor(
            rng.standard_normal(tuple(base.shape)) * 0.01, dtype=base.dtype)
            for _ in range(size - 1)]))
        tangents.append(retrograd.tensor(rng.standard_normal((size,) + tuple(base.shape)),
                                         dtype=base.dtype))
    return primals, tangents


def _mismatch(mode: str, sample) -> str | None:
    """What differs between vmap and the loop, or None; an error is returned as its text (so
    no traceback keeps batched values, and with them the dispatch mode, alive)."""
    f, leaves = _func(sample)
    n = len(leaves)
    primals, tangents = _batch(leaves)
    if mode == "forward":
        fn, args = f, primals
    elif mode == "grad":
        def loss(*xs):
            return sum((o * (1.0 + 0.1 * k)).sum() for k, o in enumerate(f(*xs)))

        fn, args = retrograd.func.grad(loss, argnums=tuple(range(n))), primals
    else:
        def fn(*a):
            return retrograd.func.jvp(f, tuple(a[:n]), tuple(a[n:]))[1]

        args = primals + tangents
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the loop-and-stack fallback's performance warning
            try:
                got = retrograd.func.vmap(fn)(*args)
            except (RuntimeError, NotImplementedError) as e:
                if any(r in str(e) for r in REFUSALS):
                    return None
                raise
            # each example on its own storage: as_strided's offsets count from its start
            want = [fn(*[a[i].clone() for a in args]) for i in range(len(args[0]))]
        for j in range(len(want[0])):
            w = np.stack([want[i][j].numpy() for i in range(len(want))])
            np.testing.assert_allclose(got[j].numpy(), w, rtol=1e-6, atol=1e-8,
                                       err_msg=f"output {j}")
    except Exception as e:  # noqa: BLE001 - reported by the test
        return f"{type(e).__name__}: {e}"
    return None


@pytest.mark.parametrize("sample", GRAD, ids=lambda s: s.id)
@pytest.mark.parametrize("mode", ["forward", "grad", "jvp"])
def test_vmap_equals_a_loop_over_examples(mode, sample):
    if not _func(sample)[1]:
        pytest.skip("no differentiable inputs")
    failure = _mismatch(mode, sample)
    if failure is not None:
        gc.collect()  # frames of the error, in cycles with it, held batched values
    known = KNOWN[mode].get(sample.id)
    if known is not None:
        assert failure is not None, f"{sample.id} now works under vmap: take it out of KNOWN"
        pytest.xfail(known)
    assert failure is None, failure


_DIAGONAL_WRITE = "double backward through fill_diagonal_'s write into a view of a batched value"
HESSIAN_KNOWN = {"setitem-scalar": "fill_ of a view with a batched 0-d value, under jacfwd",
                 "unfold_then_write": _VIEW_WRITE, "fill_diagonal_": _DIAGONAL_WRITE,
                 "fill_diagonal_-wrap": _DIAGONAL_WRITE, "fill_diagonal_-cube": _DIAGONAL_WRITE}
SMALL_SINGLE = [s for s in GRAD if s.gradgrad]


@pytest.mark.parametrize("sample", SMALL_SINGLE, ids=lambda s: s.id)
def test_hessian_forward_over_reverse_equals_reverse_over_reverse(sample):
    """hessian (jacfwd of jacrev: tangents through every backward formula, batched over the
    basis) against jacrev of jacrev, for one-input float64 samples of up to 12 elements."""
    f, leaves = _func(sample)
    if len(leaves) != 1 or leaves[0].numel() > 12 or leaves[0].dtype != retrograd.float64:
        pytest.skip("one float64 input of up to 12 elements")
    x = leaves[0].detach()

    def loss(a):
        return sum((o * (1.0 + 0.1 * k)).sum() for k, o in enumerate(f(a)))

    def mismatch() -> str | None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    got = retrograd.func.hessian(loss)(x)
                except RuntimeError as e:
                    if any(r in str(e) for r in REFUSALS):
                        return None
                    raise
                want = retrograd.func.jacrev(retrograd.func.jacrev(loss))(x)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-8)
        except Exception as e:  # noqa: BLE001 - reported by the test
            return f"{type(e).__name__}: {e}"
        return None

    failure = mismatch()
    if failure is not None:
        gc.collect()
    if sample.id in HESSIAN_KNOWN:
        assert failure is not None, f"{sample.id} now works: take it out of HESSIAN_KNOWN"
        pytest.xfail(HESSIAN_KNOWN[sample.id])
    assert failure is None, failure
