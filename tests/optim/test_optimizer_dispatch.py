"""Optimizer steps pass through the dispatcher as torch's do (NOTE [Optimizer dispatch]): a
TorchDispatchMode around step() sees torch's op names for the same flags, and the parameters
after several steps equal torch's."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from retrograd.utils._python_dispatch import TorchDispatchMode

torch = pytest.importorskip("torch")
from torch.utils._python_dispatch import TorchDispatchMode as TorchMode  # noqa: E402

# calls torch's mode sees that are not ops in retrograd: record_function ranges, item(),
# tensor() of a Python number, detach() and empty_like()
_NOT_OPS = ("aten._local_scalar_dense.", "aten.lift_fresh.", "aten.detach.",
            "aten.empty_like.")


class _Names(TorchDispatchMode):
    def __init__(self) -> None:
        self.names: list = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


class _TorchNames(TorchMode):
    def __init__(self) -> None:
        super().__init__()
        self.names: list = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func)
        if not name.startswith("profiler.") and not name.startswith(_NOT_OPS):
            self.names.append(name)
        return func(*args, **(kwargs or {}))


def _arrays(dtypes: tuple, n_steps: int) -> tuple:
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (4,), (2, 2)]
    params = [rng.standard_normal(shapes[i % 3]).astype(dt) for i, dt in enumerate(dtypes)]
    grads = [[rng.standard_normal(p.shape).astype(p.dtype) for p in params]
             for _ in range(n_steps)]
    return params, grads


def _run(lib, mode_cls, cls_name: str, kwargs: dict, dtypes: tuple, watched: tuple,
         n_steps: int = 4) -> tuple:
    """Steps with fixed gradients; the op names a mode sees in the `watched` steps."""
    params0, grads = _arrays(dtypes, n_steps)
    params = [lib.tensor(a.copy(), requires_grad=True) for a in params0]
    opt = getattr(lib.optim, cls_name)(params, lr=0.1, **kwargs)
    seen = []
    for i, gs in enumerate(grads):
        for p, g in zip(params, gs):
            p.grad = lib.tensor(g.copy())
        if i in watched:
            with mode_cls() as mode:
                opt.step()
            seen.append(mode.names)
        else:
            opt.step()
    return [p.detach().numpy() for p in params], seen


CASES = [
    ("Adam", {}),
    ("Adam", {"foreach": True}),
    ("Adam", {"fused": True}),
    ("Adam", {"foreach": False, "weight_decay": 0.1, "maximize": True}),
    ("Adam", {"foreach": True, "weight_decay": 0.1, "maximize": True, "amsgrad": True}),
    ("Adam", {"foreach": True, "weight_decay": 0.1}),
    ("Adam", {"fused": True, "weight_decay": 0.1, "maximize": True, "amsgrad": True}),
    ("Adam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"foreach": True}),
    ("AdamW", {"fused": True, "amsgrad": True}),
    ("NAdam", {}),
    ("NAdam", {"foreach": True}),
    ("NAdam", {"foreach": True, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"foreach": True, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("RAdam", {}),
    ("RAdam", {"foreach": True}),
    ("RAdam", {"foreach": True, "weight_decay": 0.1, "maximize": True}),
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    # rho_t passes 5 at the sixth step with beta2 = 0.9: the rectified update
    ("RAdam", {"betas": (0.9, 0.9)}),
    ("RAdam", {"betas": (0.9, 0.9), "foreach": True}),
    ("SGD", {}),
    ("SGD", {"momentum": 0.9}),
    ("SGD", {"momentum": 0.9, "foreach": True}),
    ("SGD", {"momentum": 0.9, "fused": True}),
    ("SGD", {"foreach": True, "weight_decay": 0.1}),
    ("SGD", {"fused": True, "weight_decay": 0.1, "maximize": True}),
    ("SGD", {"momentum": 0.9, "nesterov": True, "weight_decay": 0.1, "foreach": True}),
    ("SGD", {"momentum": 0.9, "nesterov": True, "maximize": True, "foreach": True}),
    ("SGD", {"momentum": 0.5, "dampening": 0.1, "fused": True, "maximize": True}),
]


@pytest.mark.parametrize("dtypes", [("float64",) * 3, ("float32", "float64", "float32")],
                         ids=["float64", "mixed"])
@pytest.mark.parametrize("cls_name, kwargs", CASES,
                         ids=[f"{c}-{'-'.join(f'{k}={v}' for k, v in kw.items())}"
                              for c, kw in CASES])
def test_a_mode_sees_torchs_ops_and_the_steps_agree(cls_name, kwargs, dtypes):
    # the first step makes the state; a later one must look the same
    watched, n_steps = ((1, 6), 8) if "betas" in kwargs else ((1, 2), 4)
    ours, our_names = _run(retrograd, _Names, cls_name, kwargs, dtypes, watched, n_steps)
    theirs, their_names = _run(torch, _TorchNames, cls_name, kwargs, dtypes, watched, n_steps)
    assert our_names == their_names
    assert our_names[0], "the mode saw no ops"
    fused = kwargs.get("fused", False)
    for o, t in zip(ours, theirs):
        assert o.dtype == t.dtype
        # torch's fused kernels round differently (FMA); the other paths are its ops
        rtol = (1e-5 if fused else 2e-6) if o.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(o, t, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("kwargs", [{}, {"foreach": True}, {"fused": True}],
                         ids=["single", "foreach", "fused"])
def test_every_path_gives_the_arrays_step(kwargs):
    """foreach and fused compute what the array step computes, bit for bit (the same kernels);
    the single-tensor ops a mode sees, to float32 rounding (retrograd's own pointwise ops)."""
    for cls_name, extra in [("Adam", {"weight_decay": 0.1, "amsgrad": True}),
                            ("SGD", {"momentum": 0.9, "weight_decay": 0.1, "nesterov": True})]:
        plain, _ = _run(retrograd, _Names, cls_name, extra, ("float32", "float64"), ())
        watched = (0, 1, 2, 3) if not kwargs else ()
        other, _ = _run(retrograd, _Names, cls_name, {**extra, **kwargs}, ("float32", "float64"),
                        watched)
        for a, b in zip(plain, other):
            if kwargs:
                np.testing.assert_array_equal(a, b)
            else:
                np.testing.assert_allclose(a, b, rtol=1e-6 if a.dtype == np.float32 else 1e-15)


def test_the_ops_bump_versions_and_refuse_to_be_recorded():
    a, b = retrograd.ones(3), retrograd.ones(3)
    retrograd._foreach_add_([a, b], 1.0)
    assert a._version == 1 and b._version == 1 and a.tolist() == [2.0] * 3
    leaf = retrograd.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        retrograd._foreach_mul_([leaf], 2.0)
    with pytest.raises(RuntimeError, match="has no derivative"):
        retrograd._foreach_mul_([leaf * 1], 2.0)


def test_the_step_counters_dtype_follows_torchs():
    """float64 under a float64 default, except for the fused kernels (float32)."""
    for kwargs in ({}, {"foreach": True}, {"fused": True}):
        dtypes = []
        for lib in (retrograd, torch):
            prev = lib.get_default_dtype()
            lib.set_default_dtype(lib.float64)
            try:
                p = lib.ones(2, requires_grad=True)
                p.grad = lib.ones(2)
                opt = lib.optim.Adam([p], **kwargs)
                opt.step()
                dtypes.append(str(opt.state[p]["step"].dtype).split(".")[-1])
            finally:
                lib.set_default_dtype(prev)
        assert dtypes[0] == dtypes[1], kwargs
