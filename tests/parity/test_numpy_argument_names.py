"""NumPy's argument names, `axis` and `keepdims`, where torch takes them (NOTE [NumPy argument
names]): in the functions torch binds from its op schemas, not in those it writes in Python."""

from __future__ import annotations

import inspect
import types

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

X = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.5

# (expression, whether it takes the NumPy names in torch); `lib` is torch or retrograd, `x` a
# 3x4 tensor of X, `F` lib.nn.functional
CALLS = [
    "lib.sum(x, axis=0)", "x.sum(axis=1, keepdims=True)", "lib.mean(x, axis=(0, 1))",
    "x.mean(axis=-1, keepdims=True)", "lib.cumsum(x, axis=0)", "lib.cumprod(x, axis=1)",
    "x.cumsum(axis=1)", "lib.cat([x, x], axis=1)", "lib.stack([x, x], axis=1)",
    "lib.concatenate([x, x], axis=0)", "x.softmax(axis=0)", "lib.softmax(x, axis=1)",
    "lib.log_softmax(x, axis=1)", "lib.max(x, axis=0)", "x.max(axis=1, keepdims=True)",
    "lib.min(x, axis=1)", "lib.argmax(x, axis=1)", "x.argmin(axis=0, keepdims=True)",
    "lib.amax(x, axis=0)", "lib.std(x, axis=0)", "x.var(axis=1, keepdims=True)",
    "lib.var_mean(x, axis=0)", "lib.logsumexp(x, axis=1)", "lib.all(x > 0, axis=0)",
    "lib.any(x > 0, axis=1, keepdims=True)", "lib.squeeze(x[None], axis=0)",
    "x.unsqueeze(axis=1)", "lib.gather(x, axis=1, index=lib.zeros(3, 2, dtype=lib.long))",
    "lib.index_select(x, axis=0, index=lib.tensor([2, 0]))",
    "lib.narrow(x, axis=1, start=1, length=2)",
    "x.chunk(2, axis=1)", "lib.chunk(x, 2, axis=0)", "lib.unbind(x, axis=1)", "lib.diff(x, axis=0)",
    "lib.topk(x, 2, axis=0)", "lib.sort(x, axis=0, descending=True)", "lib.argsort(x, axis=1)",
    "lib.median(x, axis=0)", "lib.cummax(x, axis=1)", "lib.logcumsumexp(x, axis=0)",
    "lib.take_along_dim(x, lib.zeros(1, 4, dtype=lib.long), axis=0)",
    "lib.repeat_interleave(x, 2, axis=0)", "x.tensor_split(2, axis=1)",
    "lib.quantile(x, 0.25, axis=0)", "x.nanquantile(0.5, axis=1, keepdims=True)",
    "lib.nanmean(x, axis=0)", "lib.nansum(x, axis=1)", "lib.count_nonzero(x, axis=0)",
    "lib.prod(x, axis=1)", "lib.cross(x[:, :3], x[:, 1:], axis=1)",
    "lib.linalg.norm(x, axis=0)", "lib.linalg.vector_norm(x, axis=1, keepdims=True)",
    "lib.linalg.matrix_norm(x, axis=(0, 1))", "lib.linalg.cross(x[:, :3], x[:, 1:], axis=1)",
    "lib.linalg.vecdot(x, x, axis=0)", "lib.special.logsumexp(x, axis=0)",
    "lib.special.softmax(x, axis=1)", "lib.special.log_softmax(x, axis=0)",
    "F.cosine_similarity(x, x + 1, axis=0)", "F.pairwise_distance(x, x + 1, keepdims=True)",
    "x.size(axis=1)", "x.stride(axis=0)", "lib._weight_norm(x, x[:, :1], axis=0)",
    # torch's Python functions take torch's names only
    "F.softmax(x, axis=0)", "F.normalize(x, axis=0)", "lib.split(x, 2, axis=1)",
    "x.split(2, axis=1)", "lib.norm(x, axis=0)", "lib.roll(x, 1, axis=0)",
    # a parameter given under both names, or a NumPy name where the function has none
    "lib.sum(x, 0, axis=1)", "lib.cumsum(x, dim=0, axis=1)",
    "x.mean(keepdims=True, axis=0, keepdim=True)",
    "lib.sin(x, axis=0)", "lib.cumsum(x, keepdims=True)",
]


def _run(lib, expr: str):
    x = lib.tensor(X)
    try:
        return eval(expr, {"lib": lib, "x": x, "F": lib.nn.functional})  # noqa: S307 - test table
    except (TypeError, RuntimeError) as e:
        return e


def _plain(v):
    if isinstance(v, (tuple, list)):
        return [_plain(t) for t in v]
    if hasattr(v, "numpy"):
        return np.asarray(v.detach().numpy(), dtype=np.float64)
    return v


@pytest.mark.parametrize("expr", CALLS)
def test_numpy_names_where_torch_takes_them(expr):
    theirs, ours = _run(torch, expr), _run(retrograd, expr)
    if isinstance(theirs, Exception):
        assert isinstance(ours, TypeError), f"{expr}: torch raised {theirs!r}, not {ours!r}"
        if "got an unexpected keyword argument" in str(theirs):
            # the same refusal, named as Python names the function (Tensor.sum for a method)
            assert str(ours).split("()", 1)[1] == str(theirs).split("()", 1)[1], (ours, theirs)
        return
    assert not isinstance(ours, Exception), f"{expr}: {ours!r}"
    a, b = _plain(ours), _plain(theirs)
    if isinstance(b, list):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_gradients_flow_through_numpy_names():
    def run(lib):
        x = lib.tensor(X.astype(np.float64), requires_grad=True)
        y = (x.softmax(axis=0) * lib.cumsum(x, axis=1)).sum(axis=1, keepdims=True)
        (y * lib.arange(3.0, dtype=lib.float64).reshape(3, 1)).sum().backward()
        return x.grad.numpy(), type(y.grad_fn).__name__

    (ga, na), (gb, nb) = run(retrograd), run(torch)
    np.testing.assert_allclose(ga, gb, rtol=1e-12)
    assert na == nb == "SumBackward1"


def test_missing_and_unknown_arguments_are_python_errors():
    x = retrograd.tensor(X)
    missing = r"\(\) missing 1 required positional argument: "
    with pytest.raises(TypeError, match=rf"^cumsum{missing}'dim'$"):
        retrograd.cumsum(x)
    with pytest.raises(TypeError, match=rf"^gather{missing}'index'$"):
        retrograd.gather(x, axis=0)
    with pytest.raises(TypeError, match=r"^Tensor.index_select\(\) missing 2 required positional "
                                        r"arguments: 'dim' and 'index'$"):
        x.index_select()
    unknown = r"\(\) got an unexpected keyword argument "
    with pytest.raises(TypeError, match=rf"^cumsum{unknown}'foo'$"):
        retrograd.cumsum(x, axis=0, foo=1)
    with pytest.raises(TypeError, match=rf"^Tensor.size{unknown}'ax'$"):
        x.size(ax=0)


def test_out_and_dtype_keep_working_with_numpy_names():
    x = retrograd.tensor(X)
    out = retrograd.empty(4)
    r = retrograd.sum(x, axis=0, out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), X.sum(axis=0), rtol=1e-6)
    c = retrograd.cumsum(x, axis=1, dtype=retrograd.float64)
    assert c.dtype is retrograd.float64
    np.testing.assert_allclose(c.numpy(), np.cumsum(X.astype(np.float64), axis=1))


def test_signatures_show_torch_names():
    # inspect, help() and the stubs see the documented signature: no **_np, required ones
    # required
    sig = inspect.signature(retrograd.gather)
    assert list(sig.parameters) == ["input", "dim", "index", "sparse_grad", "out"]
    assert sig.parameters["dim"].default is inspect.Parameter.empty
    assert "_np" not in inspect.signature(retrograd.Tensor.sum).parameters
    assert "_np" not in inspect.signature(retrograd.Tensor.size).parameters


_SPACES = [("", "torch", "retrograd"), ("linalg.", "torch.linalg", "retrograd.linalg"),
           ("special.", "torch.special", "retrograd.special"),
           ("nn.functional.", "torch.nn.functional", "retrograd.nn.functional"),
           ("Tensor.", "torch.Tensor", "retrograd.Tensor")]


def _takes_numpy_names(fn) -> bool:
    code = getattr(fn, "__code__", None)
    return code is not None and "_np" in code.co_varnames[:code.co_argcount +
                                                           code.co_kwonlyargcount + 1]


def test_every_function_torch_binds_takes_them_and_no_other():
    """Each public function with a `dim` or `keepdim` parameter takes the NumPy names exactly
    when torch's does: when torch's is bound from an op schema (a builtin), not written in
    Python."""
    import importlib

    def resolve(path):
        mod, _, attr = path.rpartition(".")
        return getattr(importlib.import_module(mod), attr) if attr == "Tensor" else \
            importlib.import_module(path)

    wrong, checked = [], 0
    for prefix, tpath, rpath in _SPACES:
        tspace, rspace = resolve(tpath), resolve(rpath)
        for name in dir(tspace):
            if name.startswith("__"):
                continue
            ours = getattr(rspace, name, None)
            if not isinstance(ours, types.FunctionType):
                continue
            try:
                params = inspect.signature(ours).parameters
            except (TypeError, ValueError):
                continue
            if not {"dim", "keepdim"} & set(params):
                continue
            theirs = getattr(tspace, name)
            native = type(theirs).__name__ in ("builtin_function_or_method", "method_descriptor")
            checked += 1
            if native != _takes_numpy_names(ours):
                wrong.append(f"{prefix}{name} (torch {'native' if native else 'Python'})")
    assert not wrong, wrong
    assert checked > 150
