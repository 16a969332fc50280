"""F.linear_cross_entropy against torch's: argument checks, the reference path (options=None),
the chunked path (values, gradients, node names and edges, the consumed-once backward,
allow_retain_graph, reduction="none"'s recomputing backward, unbatched input, low precision),
and the warning and fallback of configurations the chunked path does not take."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from tests.parity.harness import assert_same, error_of

torch = pytest.importorskip("torch")

N, IN, C = 7, 4, 5


def _arrays(seed=0, n=N, f=IN, c=C, ignore=None):
    rng = np.random.default_rng(seed)
    t = rng.integers(0, c, n)
    if ignore is not None and n > 4:
        t[[1, 4]] = ignore
    return dict(x=rng.standard_normal((n, f)), w=rng.standard_normal((c, f)),
                b=rng.standard_normal(c), cw=rng.random(c) + 0.1, t=t,
                up=rng.standard_normal(n))


def _run(lib, a, *, dtype="float64", reduction="mean", bias=True, class_weight=False,
         ignore_index=None, unbatched=False, options=None, grads=(True, True, True)):
    """The loss, its node's name and edges, and the gradients of a weighted backward."""
    dt = getattr(lib, dtype)
    x = lib.from_numpy(a["x"].copy()).to(dt).requires_grad_(grads[0])
    w = lib.from_numpy(a["w"].copy()).to(dt).requires_grad_(grads[1])
    b = lib.from_numpy(a["b"].copy()).to(dt).requires_grad_(grads[2]) if bias else None
    t = lib.from_numpy(a["t"].copy())
    cw = lib.from_numpy(a["cw"].copy()).to(dt) if class_weight else None
    if unbatched:
        x_in, t_in = x[2], t[2]
    else:
        x_in, t_in = x, t
    opts = None if options is None else lib.nn.LinearCrossEntropyOptions(**options)
    loss = lib.nn.functional.linear_cross_entropy(
        x_in, w, t_in, linear_bias=b, weight=cw, reduction=reduction,
        ignore_index=ignore_index, options=opts)
    out = {"loss": loss, "requires_grad": loss.requires_grad}
    if loss.grad_fn is not None:
        out["node"] = type(loss.grad_fn).__name__
        out["edges"] = [None if n is None else type(n).__name__
                        for n, _ in loss.grad_fn.next_functions]
        up = np.resize(a["up"], loss.numel()).reshape(tuple(loss.shape))
        up = lib.from_numpy(up).to(dt)
        loss.backward(up)
        out["grads"] = [None if v is None else v.grad for v in (x, w, b)]
    return out


CASES = [
    dict(), dict(class_weight=True), dict(ignore_index=2), dict(ignore_index=-100),
    dict(ignore_index=-100, class_weight=True), dict(ignore_index=3, class_weight=True),
    dict(bias=False), dict(unbatched=True), dict(unbatched=True, class_weight=True),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("chunk", [1, 3, N, None])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_chunked_matches_torch(reduction, chunk, case):
    a = _arrays(ignore=case.get("ignore_index"))
    options = {} if chunk is None else {"batch_chunk_size": chunk}
    kw = dict(case, reduction=reduction, options=options)
    assert_same(_run(retrograd, a, **kw), _run(torch, a, **kw), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_chunked_equals_reference(reduction, case):
    """The chunked path computes what the reference path computes (retrograd alone)."""
    a = _arrays(seed=3, ignore=case.get("ignore_index"))
    chunked = _run(retrograd, a, reduction=reduction, options={"batch_chunk_size": 2}, **case)
    reference = _run(retrograd, a, reduction=reduction, **case)
    assert_same(chunked["loss"], reference["loss"], rtol=1e-12, atol=1e-12)
    assert_same(chunked["grads"], reference["grads"], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("grads", [(True, False, False), (False, True, False),
                                   (False, False, True), (False, False, False)])
def test_only_some_arguments_require_grad(reduction, grads):
    a = _arrays(seed=1)
    kw = dict(reduction=reduction, options={"batch_chunk_size": 3}, grads=grads)
    assert_same(_run(retrograd, a, **kw), _run(torch, a, **kw), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_no_grad_mode(reduction):
    a = _arrays(seed=2)
    results = []
    for lib in (retrograd, torch):
        with lib.no_grad():
            results.append(_run(lib, a, reduction=reduction, options={}))
    assert_same(*results, rtol=1e-10, atol=1e-12)
    assert results[0]["requires_grad"] is False


def _widened(result):
    """Low-precision tensors as float64 (the harness compares torch's bfloat16 as float32)."""
    def wide(v):
        if isinstance(v, list):
            return [wide(u) for u in v]
        return v.detach().double() if hasattr(v, "detach") else v
    return {k: wide(v) for k, v in result.items()}


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_low_precision_accumulates_in_float32(dtype, reduction):
    """float16/bfloat16 under "auto" accumulate in float32 and return the input's dtype."""
    a = _arrays(seed=4, n=16, f=8, c=33)
    tol = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2}[dtype]
    kw = dict(dtype=dtype, reduction=reduction, options={"batch_chunk_size": 5})
    ours, theirs = _run(retrograd, a, **kw), _run(torch, a, **kw)
    assert ours["loss"].dtype == getattr(retrograd, dtype)
    assert_same(_widened(ours), _widened(theirs), rtol=tol, atol=tol)
    # and the float32 accumulation is as close to the float64 loss as the dtype allows
    exact = _run(retrograd, a, reduction=reduction)["loss"].detach().numpy()
    np.testing.assert_allclose(ours["loss"].float().detach().numpy(), exact, rtol=tol * 2,
                               atol=tol * 2)


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float16", "bfloat16"),
                                    ("float64", "float32"), ("bfloat16", "float16")])
def test_unsupported_accumulation_dtype(dtypes):
    a = _arrays()

    def call(lib):
        return _run(lib, a, dtype=dtypes[0],
                    options={"acc_dtype": getattr(lib, dtypes[1])})["loss"]

    assert_same(error_of(call, retrograd), error_of(call, torch))


def _twice(lib, reduction, allow, retain):
    a = _arrays(seed=5)
    x = lib.from_numpy(a["x"].copy()).requires_grad_()
    w = lib.from_numpy(a["w"].copy()).requires_grad_()
    opts = lib.nn.LinearCrossEntropyOptions(allow_retain_graph=allow, batch_chunk_size=2)
    loss = lib.nn.functional.linear_cross_entropy(x, w, lib.from_numpy(a["t"].copy()),
                                                  reduction=reduction, options=opts).sum()
    loss.backward(retain_graph=retain)
    first = (x.grad.clone(), w.grad.clone())
    second = error_of(lambda: loss.backward())
    return first, second, (x.grad, w.grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("allow", [False, True])
@pytest.mark.parametrize("retain", [False, True])
def test_second_backward(reduction, allow, retain):
    """mean/sum consume their stored gradients (a second backward raises torch's error) unless
    allow_retain_graph; "none" recomputes, so retain_graph=True works."""
    assert_same(_twice(retrograd, reduction, allow, retain),
                _twice(torch, reduction, allow, retain), rtol=1e-10, atol=1e-12)


def test_second_backward_message():
    _, second, _ = _twice(retrograd, "mean", False, True)
    assert second == ("raised", "RuntimeError",
                      "linear_cross_entropy chunked backward called twice; retain_graph=True / "
                      "double backward are not supported.")


def _grad_of_grad(lib, reduction, upstream_requires_grad):
    a = _arrays(seed=6)
    x = lib.from_numpy(a["x"].copy()).requires_grad_()
    w = lib.from_numpy(a["w"].copy()).requires_grad_()
    opts = lib.nn.LinearCrossEntropyOptions(allow_retain_graph=True)
    loss = lib.nn.functional.linear_cross_entropy(
        x, w, lib.from_numpy(a["t"].copy()), reduction=reduction, options=opts)
    v = lib.ones(tuple(loss.shape), dtype=lib.float64, requires_grad=upstream_requires_grad)
    (gx,) = lib.autograd.grad(loss, x, v, create_graph=True)
    if not gx.requires_grad:
        return gx, None, None
    # x is not behind the first derivative's node in either library
    wrt_x = lib.autograd.grad(gx.sum(), x, allow_unused=True, retain_graph=True)
    return gx, wrt_x, error_of(lambda: gx.sum().backward())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_create_graph_with_a_constant_upstream_gradient(reduction):
    """Nothing in the first derivative requires grad, in both (torch's custom op backward is
    not recorded; retrograd's once_differentiable backward records nothing either)."""
    ours, theirs = _grad_of_grad(retrograd, reduction, False), _grad_of_grad(
        torch, reduction, False)
    assert not ours[0].requires_grad and not theirs[0].requires_grad
    assert_same(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_create_graph_differentiating_again_raises(reduction):
    """With an upstream gradient that requires grad, differentiating the first derivative
    again raises here (once_differentiable). torch records only the product with the upstream
    gradient for mean/sum, so backward through it runs and silently leaves out the second
    derivative with respect to input and weights; for "none" its recomputing backward fails
    already in the first derivative (an out= op under grad mode)."""
    gx, wrt_x, second = _grad_of_grad(retrograd, reduction, True)
    assert gx.requires_grad and wrt_x == (None,)
    assert second == ("raised", "RuntimeError", "trying to differentiate twice a function that "
                      "was marked with @once_differentiable")
    if reduction == "none":
        assert error_of(_grad_of_grad, torch, reduction, True)[0] == "raised"
        return
    theirs_gx, theirs_wrt_x, theirs = _grad_of_grad(torch, reduction, True)
    assert_same(gx.detach(), theirs_gx.detach(), rtol=1e-10, atol=1e-12)
    assert theirs_wrt_x == (None,) and theirs[0] == "ok"


def test_mean_of_all_ignored_and_empty_batches():
    for n, ignore in ((N, "all"), (0, None)):
        a = _arrays(seed=7, n=n)
        if ignore == "all":
            a["t"][:] = -100
        for reduction in ("mean", "sum", "none"):
            kw = dict(reduction=reduction, options={"batch_chunk_size": 3})
            assert_same(_run(retrograd, a, **kw), _run(torch, a, **kw), rtol=1e-10,
                        atol=1e-12, path=f"n={n} {reduction}")


def _errors_of(lib, case):
    x, w, t, kw = case(lib)
    return error_of(lambda: lib.nn.functional.linear_cross_entropy(x, w, t, **kw))


def _bad_cases():
    def f(xs, ws, ts, tdtype="int64", **kw):
        def make(lib):
            x = lib.zeros(xs)
            w = lib.zeros(ws)
            t = lib.zeros(ts, dtype=getattr(lib, tdtype))
            kw2 = {k: (lib.zeros(v) if isinstance(v, tuple) else v) for k, v in kw.items()}
            return x, w, t, kw2
        return make

    return [
        f((), (3, 2), ()), f((2, 3, 2), (3, 2), (2,)), f((2, 2), (2,), (2,)),
        f((2, 4), (3, 2), (2,)), f((2, 2), (3, 2), (2,), linear_bias=(2,)),
        f((2, 2), (3, 4, 2), (2, 4), linear_bias=(3,)),
        f((2,), (3, 4, 2), (4,)),
        f((2, 2), (3, 2), (2, 3), "float32", ignore_index=-100),
        f((2,), (3, 2), (3,), "float32", ignore_index=1),
        f((2, 2), (3, 2), (2, 3), "float32", ignore_index=1,
          options=None),
    ]


@pytest.mark.parametrize("case", _bad_cases())
@pytest.mark.parametrize("with_options", [False, True])
def test_argument_errors(case, with_options):
    def run(lib):
        x, w, t, kw = case(lib)
        if with_options:
            kw["options"] = lib.nn.LinearCrossEntropyOptions()
        return lib.nn.functional.linear_cross_entropy(x, w, t, **kw)

    assert_same(error_of(run, retrograd), error_of(run, torch))


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = error_of(fn)
    return result, [(w.category.__name__, str(w.message)) for w in caught]


FALLBACKS = [
    dict(label_smoothing=0.1), dict(reduction="mean", probabilities=True),
    dict(kdim=True), dict(kdim=True, bias=True, reduction="none"), dict(reduction="batchmean"),
    dict(target_dtype="int32"),
]


@pytest.mark.parametrize("case", FALLBACKS, ids=[str(c) for c in FALLBACKS])
def test_unsupported_configurations_warn_and_use_the_reference_path(case):
    rng = np.random.default_rng(8)
    kdim = case.get("kdim", False)
    ws = (C, 2, IN) if kdim else (C, IN)
    arrays = dict(x=rng.standard_normal((N, IN)), w=rng.standard_normal(ws),
                  b=rng.standard_normal(ws[:-1]))
    if case.get("probabilities"):
        p = rng.random((N, C))
        arrays["t"] = p / p.sum(1, keepdims=True)
    elif kdim:
        arrays["t"] = rng.integers(0, C, (N, 2))
    else:
        arrays["t"] = rng.integers(0, C, N).astype(case.get("target_dtype", "int64"))

    def program(lib):
        x = lib.from_numpy(arrays["x"].copy()).requires_grad_()
        w = lib.from_numpy(arrays["w"].copy()).requires_grad_()
        b = lib.from_numpy(arrays["b"].copy()) if case.get("bias") else None
        t = lib.from_numpy(arrays["t"].copy())

        def call():
            loss = lib.nn.functional.linear_cross_entropy(
                x, w, t, linear_bias=b, reduction=case.get("reduction", "mean"),
                label_smoothing=case.get("label_smoothing", 0.0),
                options=lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
            loss.sum().backward()
            # (the probability-target mean's node is DivBackward1 in torch: cross_entropy's)
            name = type(loss.grad_fn).__name__.replace("DivBackward1", "DivBackward0")
            return loss, name, x.grad, w.grad

        return _caught(call)

    ours, theirs = program(retrograd), program(torch)
    assert theirs[1], "torch warns"
    assert_same(ours, theirs, rtol=1e-10, atol=1e-12)


def test_warning_points_at_the_caller():
    a = _arrays()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        retrograd.nn.functional.linear_cross_entropy(
            retrograd.from_numpy(a["x"]), retrograd.from_numpy(a["w"]),
            retrograd.from_numpy(a["t"]), label_smoothing=0.2,
            options=retrograd.nn.LinearCrossEntropyOptions())
    assert caught and caught[0].filename == __file__


def test_tracing_takes_the_reference_path():
    a = _arrays(seed=9)

    def program(lib):
        x = lib.from_numpy(a["x"].copy())
        w = lib.from_numpy(a["w"].copy())
        t = lib.from_numpy(a["t"].copy())

        def f(x):
            return lib.nn.functional.linear_cross_entropy(
                x, w, t, options=lib.nn.LinearCrossEntropyOptions())

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            traced = lib.jit.trace(f, (x,))
        # torch's trace runs the function again to check it: one message, maybe twice
        messages = sorted({str(m.message) for m in caught
                           if "linear_cross_entropy" in str(m.message)})
        return traced(x), messages

    assert_same(program(retrograd), program(torch), rtol=1e-10, atol=1e-12)


REFERENCE = [
    dict(), dict(reduction="sum", class_weight=True), dict(reduction="none", ignore_index=2),
    dict(unbatched=True, reduction="none"), dict(bias=False, ignore_index=-100),
]


@pytest.mark.parametrize("case", REFERENCE, ids=[str(c) for c in REFERENCE])
def test_reference_path_matches_torch(case):
    a = _arrays(seed=10, ignore=case.get("ignore_index"))
    ours, theirs = _run(retrograd, a, **case), _run(torch, a, **case)
    # retrograd's NllLossBackward0 has edges for target and weight too (cross_entropy's node)
    del ours["edges"], theirs["edges"]
    assert_same(ours, theirs, rtol=1e-10, atol=1e-12)


BAD_DATA = ["target_out_of_range", "negative_target", "short_target", "2d_target",
            "short_class_weight", "integer_input", "float64_weight", "float64_bias",
            "bad_reduction"]


@pytest.mark.parametrize("kind", BAD_DATA)
@pytest.mark.parametrize("with_options", [False, True])
def test_bad_targets_and_dtypes(kind, with_options):
    """Both paths fail (or not) as torch's do on inputs the argument checks let through."""
    def run(lib):
        x, w, t = lib.ones(4, 3), lib.ones(5, 3), lib.tensor([0, 1, 2, 3])
        kw: dict = {}
        if kind == "target_out_of_range":
            t = lib.tensor([0, 5, 2, 3])
        elif kind == "negative_target":
            t = lib.tensor([0, -1, 2, 3])
        elif kind == "short_target":
            t = lib.tensor([0, 1, 2])
        elif kind == "2d_target":
            t = t.reshape(4, 1)
        elif kind == "short_class_weight":
            kw["weight"] = lib.ones(4)
        elif kind == "integer_input":
            x = lib.ones(4, 3, dtype=lib.int64)
        elif kind == "float64_weight":
            w = w.double()
        elif kind == "float64_bias":
            kw["linear_bias"] = lib.zeros(5, dtype=lib.float64)
        elif kind == "bad_reduction":
            kw["reduction"] = "avg"
        options = lib.nn.LinearCrossEntropyOptions() if with_options else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.nn.functional.linear_cross_entropy(x, w, t, options=options, **kw)

    assert_same(error_of(run, retrograd), error_of(run, torch))


def test_signatures():
    import inspect

    def params(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    assert params(retrograd.nn.functional.linear_cross_entropy) == params(
        torch.nn.functional.linear_cross_entropy)
    assert params(retrograd.nn.LinearCrossEntropyLoss.__init__) == params(
        torch.nn.LinearCrossEntropyLoss.__init__)
    assert params(retrograd.nn.LinearCrossEntropyOptions) == params(
        torch.nn.LinearCrossEntropyOptions)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("policy", ["accurate", "balanced", "compact"])
def test_accumulation_policies(dtype, policy):
    """Every policy computes as "accurate" does here (all intermediates in acc_dtype); torch's
    "balanced"/"compact" keep some in the input dtype, and it sums a bfloat16 loss in
    bfloat16: the results agree to the input dtype's precision."""
    a = _arrays(seed=11, n=32, f=8, c=50)
    tol = {"float16": 2e-3, "bfloat16": 2e-2}[dtype]
    results = []
    for lib in (retrograd, torch):
        options = {"batch_chunk_size": 8, "acc_policy": policy, "acc_dtype": lib.float32}
        results.append(_widened(_run(lib, a, dtype=dtype, options=options)))
    assert_same(*results, rtol=tol, atol=tol)
    accurate = _run(retrograd, a, dtype=dtype, options={"batch_chunk_size": 8,
                                                        "acc_dtype": retrograd.float32})
    assert_same(results[0], _widened(accurate), rtol=0, atol=0)
