"""Names that older public programs still use: autograd.Variable, the nn.init functions without
the trailing underscore, nn.init.sparse_, and torch.spmm on dense matrices."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd
from tests.parity.harness import both, error_of

torch = pytest.importorskip("torch")


def _variable_program(lib):
    from_lib = lib.autograd.Variable
    leaf = lib.ones(3, requires_grad=True)
    inner = leaf * 2
    v = from_lib(inner)
    w = from_lib(lib.ones(2), requires_grad=True)
    (w * 3).sum().backward()
    shared = from_lib(leaf)
    with lib.no_grad():
        shared[0] = 5.0  # same memory as leaf
    return {
        "is_tensor": isinstance(v, lib.Tensor),
        "requires_grad": v.requires_grad, "leaf": v.is_leaf, "grad_fn": v.grad_fn is None,
        "w": (w.requires_grad, w.is_leaf, w.grad), "shared": leaf.detach().clone(),
        "isinstance": isinstance(lib.zeros(1), from_lib), "not_list": isinstance([1], from_lib),
        "bad": error_of(from_lib, [1, 2]), "empty": from_lib().shape,
    }


def test_variable_matches_torch():
    both(_variable_program)


def test_variable_volatile_warns_like_torch():
    for lib in (retrograd, torch):
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            v = lib.autograd.Variable(lib.ones(2), volatile=True)
        assert not v.requires_grad


@pytest.mark.parametrize("old,args", [
    ("uniform", (-0.1, 0.1)), ("normal", (0.0, 0.5)), ("constant", (0.3,)), ("eye", ()),
    ("xavier_uniform", ()), ("xavier_normal", ()), ("kaiming_uniform", ()),
    ("kaiming_normal", ()), ("orthogonal", ()), ("sparse", (0.5,)),
])
def test_init_aliases_warn_and_fill(old, args):
    for lib in (retrograd, torch):
        w = lib.zeros(6, 4)
        with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of "
                                               f"`nn.init.{old}_`"):
            out = getattr(lib.nn.init, old)(w, *args)
        assert out is w
        assert w.abs().sum().item() > 0


def test_init_dirac_alias():
    for lib in (retrograd, torch):
        w = lib.zeros(2, 2, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.nn.init.dirac(w)
        assert w[0, 0, 1].item() == 1.0 and w.sum().item() == 2.0


def test_sparse_init_zeroes_a_fraction_of_each_column():
    def program(lib):
        lib.manual_seed(0)
        w = lib.empty(10, 6)
        lib.nn.init.sparse_(w, 0.3, std=0.5)
        return {"zeros": (w == 0).sum(dim=0).tolist(), "error": error_of(
            lib.nn.init.sparse_, lib.empty(2, 2, 2), 0.5)}

    ours = both(program)
    assert ours["zeros"] == [3] * 6  # ceil(0.3 * 10) per column


def test_spmm_on_dense_is_mm():
    a = np.random.default_rng(0).standard_normal((3, 4))
    b = np.random.default_rng(1).standard_normal((4, 2))

    def program(lib):
        x = lib.tensor(a, requires_grad=True)
        y = lib.tensor(b, requires_grad=True)
        out = lib.spmm(x, y)
        out.pow(2).sum().backward()
        return {"out": out, "node": type(out.grad_fn).__name__, "gx": x.grad, "gy": y.grad,
                "vector": error_of(lib.spmm, lib.ones(3), y),
                "dtype": error_of(lib.spmm, x.float(), y),
                "method": hasattr(lib.Tensor, "spmm")}

    assert both(program)["node"] == "MmBackward0"


def test_compile_hands_back_the_model_and_functions():
    model = retrograd.nn.Linear(2, 2)
    assert retrograd.compile(model) is model
    assert list(retrograd.compile(model).state_dict()) == ["weight", "bias"]

    @retrograd.compile
    def double(x):
        return x * 2

    @retrograd.compile(mode="reduce-overhead", fullgraph=True)
    def triple(x):
        return x * 3

    assert double(retrograd.ones(1)).item() == 2.0 and triple(retrograd.ones(1)).item() == 3.0
    # torch's error type here depends on which of its compiler modules are already imported in
    # the process; retrograd raises what a fresh torch raises
    with pytest.raises(AssertionError, match="A callable function is expected, but <class 'int'> "
                                             "is provided."):
        retrograd.compile(3)
