"""out= for the linalg functions, against torch: the results written into the given tensors
(returned as torch's `<name>_out` named tuples), and torch's errors, in torch's order, with the
out tensors left as they were when a call is refused."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

RS = np.random.RandomState(0)
A_NP = RS.randn(3, 3)
SPD_NP = A_NP @ A_NP.T + 3 * np.eye(3)
B_NP = RS.randn(3, 2)


def _inputs(lib):
    A, S, B = (lib.tensor(a.copy()) for a in (A_NP, SPD_NP, B_NP))
    LU, piv = lib.linalg.lu_factor(A)
    return {"A": A, "S": S, "B": B, "LU": LU, "piv": piv, "U": lib.triu(S)}


# name -> (call(lib, inputs, **out), number of results)
CASES = {
    "linalg.inv": (lambda lib, x, **k: lib.linalg.inv(x["A"], **k), 1),
    "inverse": (lambda lib, x, **k: lib.inverse(x["A"], **k), 1),
    "linalg.inv_ex": (lambda lib, x, **k: lib.linalg.inv_ex(x["A"], **k), 2),
    "linalg.det": (lambda lib, x, **k: lib.linalg.det(x["A"], **k), 1),
    "linalg.slogdet": (lambda lib, x, **k: lib.linalg.slogdet(x["A"], **k), 2),
    "linalg.solve_ex": (lambda lib, x, **k: lib.linalg.solve_ex(x["A"], x["B"], **k), 2),
    "linalg.solve": (lambda lib, x, **k: lib.linalg.solve(x["A"], x["B"], **k), 1),
    "linalg.solve_triangular": (lambda lib, x, **k: lib.linalg.solve_triangular(
        x["U"], x["B"], upper=True, **k), 1),
    "linalg.cholesky_ex": (lambda lib, x, **k: lib.linalg.cholesky_ex(x["S"], **k), 2),
    "linalg.cholesky": (lambda lib, x, **k: lib.linalg.cholesky(x["S"], **k), 1),
    "linalg.eigh": (lambda lib, x, **k: lib.linalg.eigh(x["S"], **k), 2),
    "linalg.eigvalsh": (lambda lib, x, **k: lib.linalg.eigvalsh(x["S"], **k), 1),
    "linalg.svd": (lambda lib, x, **k: lib.linalg.svd(x["A"], **k), 3),
    "linalg.svdvals": (lambda lib, x, **k: lib.linalg.svdvals(x["A"], **k), 1),
    "svd": (lambda lib, x, **k: lib.svd(x["A"], **k), 3),
    "linalg.pinv": (lambda lib, x, **k: lib.linalg.pinv(x["A"], **k), 1),
    "linalg.lu_factor_ex": (lambda lib, x, **k: lib.linalg.lu_factor_ex(x["A"], **k), 3),
    "linalg.lu_factor": (lambda lib, x, **k: lib.linalg.lu_factor(x["A"], **k), 2),
    "linalg.lu": (lambda lib, x, **k: lib.linalg.lu(x["A"], **k), 3),
    "linalg.lu_solve": (lambda lib, x, **k: lib.linalg.lu_solve(x["LU"], x["piv"], x["B"],
                                                                **k), 1),
    "lu_unpack": (lambda lib, x, **k: lib.lu_unpack(x["LU"], x["piv"], **k), 3),
}


def _outcome(fn):
    """(kind, detail): the result, or the error's type and message."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = fn()
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return ("error", type(e).__name__, str(e).split("\n")[0]), caught
    return ("ok", r), caught


def _empty_like(lib, r, dtype=None):
    return lib.empty(tuple(r.shape), dtype=dtype or r.dtype)


def _run(lib, name, make_out):
    call, n = CASES[name]
    x = _inputs(lib)
    ref = call(lib, x)
    refs = ref if n > 1 else (ref,)
    out = make_out(lib, refs, n)
    before = [o.numpy().copy() for o in (out if isinstance(out, tuple) else (out,))
              if isinstance(o, lib.Tensor)]
    outcome, caught = _outcome(lambda: call(lib, x, out=out))
    return refs, out, before, outcome, caught


def _good(lib, refs, n):
    outs = tuple(_empty_like(lib, r) for r in refs)
    return outs[0] if n == 1 else outs


@pytest.mark.parametrize("name", list(CASES))
def test_results_written_into_out(name):
    for lib in (retrograd, torch):
        refs, out, _, outcome, caught = _run(lib, name, _good)
        assert outcome[0] == "ok", (lib.__name__, outcome)
        result = outcome[1]
        outs = out if isinstance(out, tuple) else (out,)
        if len(refs) == 1:
            assert result is out
        else:
            assert all(a is b for a, b in zip(result, outs))
        for o, r in zip(outs, refs):
            np.testing.assert_allclose(o.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)
            if lib is retrograd:  # (torch.svd's out V counts three internal writes)
                assert o._version == 1
        assert not caught


@pytest.mark.parametrize("name", [n for n, (_, k) in CASES.items() if k > 1])
def test_named_tuple_types_match_torch(name):
    names = []
    for lib in (retrograd, torch):
        _, _, _, outcome, _ = _run(lib, name, _good)
        names.append(type(outcome[1]).__name__)
        fields = getattr(outcome[1], "_fields", None) or [
            f for f in dir(type(outcome[1])) if not f.startswith("_") and f not in (
                "count", "index", "n_fields", "n_sequence_fields", "n_unnamed_fields")]
        names.append(tuple(sorted(fields)))
    assert names[0] == names[2] and names[1] == names[3]


def _refusal(name, make_out, message=True):
    got = []
    for lib in (retrograd, torch):
        _, out, before, outcome, _ = _run(lib, name, make_out)
        assert outcome[0] == "error", (lib.__name__, outcome)
        got.append(outcome[1:] if message else outcome[1])
        if lib is torch:  # torch may write or resize out before it refuses
            continue
        after = [o.numpy() for o in (out if isinstance(out, tuple) else (out,))
                 if isinstance(o, lib.Tensor)]
        assert len(after) == len(before)
        for a, b in zip(before, after):  # a refused call writes nothing
            np.testing.assert_array_equal(a, b)
    assert got[0] == got[1]


@pytest.mark.parametrize("name", list(CASES))
def test_wrong_kind_of_out(name):
    def wrong(lib, refs, n):
        outs = tuple(_empty_like(lib, r) for r in refs)
        return outs if n == 1 else outs[0]
    # pinv: torch's overload resolution lists its four signatures; retrograd names the
    # argument, as for every other function here
    _refusal(name, wrong, message=name != "linalg.pinv")


@pytest.mark.parametrize("name", [n for n, (_, k) in CASES.items() if k > 1])
def test_wrong_number_of_outs(name):
    _refusal(name, lambda lib, refs, n: tuple(_empty_like(lib, r) for r in refs)[:-1])


def _other_dtype(lib, r):
    return lib.float32 if r.dtype == lib.float64 else lib.int64


@pytest.mark.parametrize("name", list(CASES))
def test_out_dtype(name):
    def bad(lib, refs, n):
        outs = tuple(_empty_like(lib, r, _other_dtype(lib, r)) for r in refs)
        return outs[0] if n == 1 else outs
    if name in ("linalg.pinv",):  # a composite: its result is cast into out, as torch's
        for lib in (retrograd, torch):
            refs, out, _, outcome, _ = _run(lib, name, bad)
            assert outcome[0] == "ok" and out.dtype == lib.float32
            np.testing.assert_allclose(out.numpy(), refs[0].numpy(), rtol=1e-5)
        return
    _refusal(name, bad)


@pytest.mark.parametrize("name", list(CASES))
def test_out_with_an_argument_requiring_grad(name):
    call, n = CASES[name]
    got = []
    for lib in (retrograd, torch):
        x = _inputs(lib)
        refs = call(lib, x)
        refs = refs if n > 1 else (refs,)
        for k in ("A", "S", "B", "U", "LU"):
            x[k].requires_grad_(True)
        outs = tuple(_empty_like(lib, r) for r in refs)
        run = functools.partial(call, lib, x, out=outs[0] if n == 1 else outs)
        outcome, _ = _outcome(run)
        got.append(outcome if outcome[0] == "error" else ("ok",))
        with lib.no_grad():  # without grad mode the call is allowed
            r, _ = _outcome(run)
            assert r[0] == "ok", r
    assert got[0] == got[1]


def test_out_is_resized_with_torchs_warning():
    msgs = []
    for lib in (retrograd, torch):
        out = lib.empty(7, dtype=lib.float64)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = lib.linalg.inv(lib.tensor(A_NP.copy()), out=out)
        assert r is out and tuple(out.shape) == (3, 3)
        np.testing.assert_allclose(out.numpy(), np.linalg.inv(A_NP), rtol=1e-12)
        msgs.append([str(w.message).split(" (Triggered")[0] for w in caught])
        assert caught[0].filename == __file__
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1


def test_out_keeps_its_layout_and_identity():
    A = retrograd.tensor(A_NP.copy())
    out = retrograd.empty(3, 3, dtype=retrograd.float64).t()
    v = out._version
    assert retrograd.linalg.inv(A, out=out) is out
    assert out.stride() == (1, 3) and out._version == v + 1
    np.testing.assert_allclose(out.numpy(), np.linalg.inv(A_NP), rtol=1e-12)


def test_out_may_be_the_input():
    A = retrograd.tensor(A_NP.copy())
    assert retrograd.linalg.inv(A, out=A) is A
    np.testing.assert_allclose(A.numpy(), np.linalg.inv(A_NP), rtol=1e-12)


def test_singular_matrix_error_leaves_out_unchanged():
    got = []
    for lib in (retrograd, torch):
        out = lib.full((3, 3), 7.0, dtype=lib.float64)
        with pytest.raises(Exception) as e:
            lib.linalg.inv(lib.zeros(3, 3, dtype=lib.float64), out=out)
        got.append(str(e.value))
        # torch leaves the failed inverse's nan and inf in out; retrograd writes nothing
        assert (out.numpy() == 7.0).all() or lib is torch
    assert got[0] == got[1]


def test_compiled_function_writing_out_matches_eager():
    def f(a, o):
        retrograd.linalg.inv(a, out=o)
        return o * 2

    compiled = retrograd.compile(f)
    for _ in range(2):
        a = retrograd.tensor(RS.randn(3, 3))
        o1, o2 = retrograd.empty(3, 3, dtype=retrograd.float64), \
            retrograd.empty(3, 3, dtype=retrograd.float64)
        r1, r2 = f(a, o1), compiled(a, o2)
        np.testing.assert_allclose(r1.numpy(), r2.numpy(), rtol=1e-12)
        np.testing.assert_allclose(o1.numpy(), o2.numpy(), rtol=1e-12)
