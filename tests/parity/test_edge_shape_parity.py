"""Every public op of torch, torch.nn.functional, torch.special and torch.linalg that retrograd
has, called on edge-case tensors: 0-d (a scalar parameter, a loss of one value), empty along
either dim, one element, and a transposed (non-contiguous) matrix; their values and gradients,
plain and with create_graph, against torch's. NumPy returns scalars rather than 0-d arrays from
ufuncs on 0-d operands, `reshape(-1, ...)` is ambiguous for empty arrays, and a binary forward
wrapper takes no `out=`: kernels that relied on those failed here (relu, tanh, sigmoid, mse_loss,
norm, lu_factor, clamp_min/clamp_max and ldexp of strided inputs, cumulative_trapezoid, ...).

Only the ops torch lets a __torch_function__ override (torch.overrides) are called: the other
public names set global state (set_printoptions, manual_seed, ...). The in-place methods run on
a copy of the tensor, and their version bump is compared too."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

MODULES = {"torch": ("", ""), "nn.functional": ("nn", "functional"), "special": ("special", ""),
           "linalg": ("linalg", "")}
RANDOM = {"bernoulli", "normal", "rand_like", "randn_like", "randint_like", "poisson", "dropout",
          "alpha_dropout", "feature_alpha_dropout", "rrelu", "gumbel_softmax", "empty_like",
          "multinomial", "native_dropout", "dropout1d", "dropout2d", "dropout3d",
          "feature_dropout", "svd_lowrank", "pca_lowrank"}
# where the two libraries may differ by design, and why: (name, kind), a kind of None for all
DIFFERENT = {
    # singular vectors' signs are the LAPACK's choice: torch's (MKL) and NumPy's (OpenBLAS)
    # differ, so functions of U or V that are not sign-invariant differ too
    ("svd", None): "signs", ("linalg.svd", None): "signs",
    # a positional rcond picks torch's gelsy rank decision (QR with column pivoting); NumPy has
    # only the SVD-based driver
    ("linalg.lstsq", None): "driver",
    # torch skips the target's dtype check for an empty input and returns uninitialized memory
    # as the mean of no losses; retrograd checks the target
    ("functional.multilabel_margin_loss", "empty rows"): "torch reads uninitialized memory",
}
# torch 2.13 itself crashes (a segmentation fault) differentiating these on these inputs
CRASHES_TORCH = {("pdist", "empty rows"), ("pdist", "empty columns")}
# the argument patterns tried, in order, for each function: "T" an edge tensor requiring grad
PATTERNS = [("T",), ("T", "T"), ("T", "T", "T"), ("T", 0), ("T", 1), ("T", 2), ("T", 0.5),
            ("T", "T", 0.5), ("T", -1), ("T", 3), ("T", 1.5), ("T", "T", 2)]
_VALUES = np.random.default_rng(0).uniform(0.1, 0.9, (3, 4, 3))
KINDS = {
    "0-d float64": (lambda i: np.array(_VALUES[i, 0, 0]), "float64"),
    "0-d float32": (lambda i: np.array(_VALUES[i, 0, 0]), "float32"),
    "0-d float16": (lambda i: np.array(_VALUES[i, 0, 0]), "float16"),
    "empty rows": (lambda i: np.zeros((0, 3)), "float64"),
    "empty columns": (lambda i: np.zeros((2, 0)), "float64"),
    "one element": (lambda i: _VALUES[i, :1, :1], "float64"),
    "transposed": (lambda i: _VALUES[i].T.copy().T, "float64"),
}
TOLERANCE = {"float64": 1e-6, "float32": 1e-3, "float16": 5e-3}


def _module(lib, path: tuple):
    m = lib
    for part in path:
        if part:
            m = getattr(m, part)
    return m


def _edge_tensor(lib, kind: str, i: int):
    make, dtype = KINDS[kind]
    a = make(i)
    if kind == "transposed":  # strided like its source: a row-major (3, 4), transposed
        return lib.tensor(a.T, dtype=getattr(lib, dtype)).t().requires_grad_()
    return lib.tensor(a, dtype=getattr(lib, dtype)).requires_grad_()


def _summary(t) -> list:
    return [list(t.shape), float(t.detach().double().nan_to_num(0.0, 1e30, -1e30).sum())]


def _outcome(lib, fn, pattern: tuple, kind: str, inplace: bool = False):
    """('ok', [shape and sum of the value, then of each gradient]), ('nograd',) or
    ('error', text). `inplace`: fn(target, *rest) runs on a copy of the first edge tensor
    (x * 1, not a leaf), and its version bump is recorded after the value."""
    tensors, args = [], []
    for p in pattern:
        if p == "T":
            tensors.append(_edge_tensor(lib, kind, len(tensors)))
            args.append(tensors[-1])
        else:
            args.append(p)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if inplace:
                target = args[0] * 1
                before = target._version
                y = fn(target, *args[1:])
            else:
                y = fn(*args)
            if isinstance(y, (tuple, list)):
                y = y[0]
            if not isinstance(y, lib.Tensor) or not y.requires_grad or not y.is_floating_point():
                return ("nograd",)
            found = [_summary(y)] + ([y._version - before] if inplace else [])
            for create_graph in (False, True):
                grads = lib.autograd.grad(y.sum(), tensors, allow_unused=True,
                                          create_graph=create_graph, retain_graph=True)
                found += [None if g is None else _summary(g) for g in grads]
    except Exception as e:  # noqa: BLE001 - compared with torch's outcome
        return ("error", f"{type(e).__name__}: {e}")
    return ("ok", found)


def _close(a, b, tol: float) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.isclose(a, b, rtol=tol, atol=tol, equal_nan=True))
    return a == b


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("where", list(MODULES))
def test_ops_on_edge_tensors_match_torch(where, kind):
    overridable = torch.overrides.get_testing_overrides()
    theirs_module = _module(torch, MODULES[where])
    ours_module = _module(retrograd, MODULES[where])
    prefix = "" if where == "torch" else where.split(".")[-1] + "."
    compared, wrong = 0, []
    for name in sorted(dir(theirs_module)):
        if name.startswith("_") or name.endswith("_") or name in RANDOM or \
                (prefix + name, None) in DIFFERENT or (prefix + name, kind) in DIFFERENT:
            continue
        theirs, ours = getattr(theirs_module, name), getattr(ours_module, name, None)
        if ours is None or theirs not in overridable or (name, kind) in CRASHES_TORCH:
            continue
        for pattern in PATTERNS:
            want = _outcome(torch, theirs, pattern, kind)
            if want[0] != "ok":
                continue
            compared += 1
            got = _outcome(retrograd, ours, pattern, kind)
            if got[0] != "ok" or not _close(got[1], want[1], TOLERANCE[KINDS[kind][1]]):
                wrong.append((prefix + name, pattern, want, got))
    assert compared > 5
    assert not wrong, wrong


# in-place methods that draw random numbers, change storage or metadata, or take no tensors
NOT_SWEPT_INPLACE = {"random_", "uniform_", "normal_", "bernoulli_", "cauchy_", "exponential_",
                     "geometric_", "log_normal_", "set_", "resize_", "resize_as_",
                     "share_memory_", "requires_grad_", "detach_", "map_", "apply_", "map2_",
                     "copy_", "put_", "index_put_"}


@pytest.mark.parametrize("kind", list(KINDS))
def test_inplace_methods_on_edge_tensors_match_torch(kind):
    overridable = torch.overrides.get_testing_overrides()
    compared, wrong = 0, []
    for name in sorted(dir(torch.Tensor)):
        if not name.endswith("_") or name.startswith("_") or name in NOT_SWEPT_INPLACE:
            continue
        if getattr(retrograd.Tensor, name, None) is None or \
                getattr(torch.Tensor, name) not in overridable:
            continue
        for pattern in PATTERNS:
            want = _outcome(torch, getattr(torch.Tensor, name), pattern, kind, inplace=True)
            if want[0] != "ok":
                continue
            compared += 1
            got = _outcome(retrograd, getattr(retrograd.Tensor, name), pattern, kind,
                           inplace=True)
            if got[0] != "ok" or not _close(got[1], want[1], TOLERANCE[KINDS[kind][1]]):
                wrong.append((name, pattern, want, got))
    assert compared > 100
    assert not wrong, wrong


@pytest.fixture
def warn_always():
    for lib in (torch, retrograd):
        lib.set_warn_always(True)
    yield
    for lib in (torch, retrograd):
        lib.set_warn_always(False)


def test_matrix_transposes_of_a_zero_dim_tensor_are_itself_with_torchs_warning(warn_always):
    def run(lib):
        x = lib.tensor(2.0, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            same = [x.mT is x, x.mH is x, x.adjoint() is x, lib.adjoint(x) is x]
        return same, [str(w.message).split(" (Triggered")[0] for w in caught]

    assert run(retrograd) == run(torch)


def test_tensordot_takes_its_dims_as_a_tensor():
    def run(lib):
        a, b = lib.arange(6.0).reshape(2, 3), lib.arange(6.0).reshape(3, 2)
        out = [lib.tensordot(a, b, lib.tensor(1)).tolist(),
               list(lib.tensordot(a, b, lib.tensor(0.7)).shape),
               lib.tensordot(a, b, lib.tensor([[1], [0]])).tolist()]
        with pytest.raises(RuntimeError) as err:
            lib.tensordot(a, b, lib.tensor(-1))
        return out, str(err.value)

    assert run(retrograd) == run(torch)
