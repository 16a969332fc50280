"""Every public function of torch, torch.nn.functional, torch.special and torch.linalg that
retrograd has, called on 0-d tensors (a scalar parameter, a loss of one value): its value and
its gradients, plain and with create_graph, against torch's. NumPy returns scalars rather than
0-d arrays from ufuncs on 0-d operands, which kernels that write into their own intermediate
results must allow for (relu, tanh, sigmoid, mse_loss and norm's backward or forward did not)."""

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
          "feature_dropout"}
# the argument patterns tried, in order, for each function: "T" a 0-d tensor requiring grad
PATTERNS = [("T",), ("T", "T"), ("T", "T", "T"), ("T", 0), ("T", 2), ("T", 0.5),
            ("T", "T", 0.5), ("T", -1), ("T", 3), ("T", 1.5), ("T", "T", 2)]
TOLERANCE = {"float64": 1e-6, "float32": 1e-3, "float16": 5e-3}


def _module(lib, path: tuple):
    m = lib
    for part in path:
        if part:
            m = getattr(m, part)
    return m


def _outcome(lib, fn, pattern: tuple, dtype: str):
    """('ok', [value, grads..., grads with create_graph...]), ('nograd',) or ('error', text)."""
    values = iter([0.3, 0.7, -0.4])
    tensors, args = [], []
    for p in pattern:
        if p == "T":
            t = lib.tensor(next(values), dtype=getattr(lib, dtype), requires_grad=True)
            tensors.append(t)
            args.append(t)
        else:
            args.append(p)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = fn(*args)
            if isinstance(y, (tuple, list)):
                y = y[0]
            if not isinstance(y, lib.Tensor) or not y.requires_grad or not y.is_floating_point():
                return ("nograd",)
            found = [float(y.detach().double().sum())]
            for create_graph in (False, True):
                grads = lib.autograd.grad(y.sum(), tensors, allow_unused=True,
                                          create_graph=create_graph, retain_graph=True)
                found += [0.0 if g is None else float(g) for g in grads]
    except Exception as e:  # noqa: BLE001 - compared with torch's outcome
        return ("error", f"{type(e).__name__}: {e}")
    return ("ok", found)


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("where", list(MODULES))
def test_functions_on_zero_dim_tensors_match_torch(where, dtype):
    theirs_module = _module(torch, MODULES[where])
    ours_module = _module(retrograd, MODULES[where])
    compared, wrong = 0, []
    for name in sorted(dir(theirs_module)):
        if name.startswith("_") or name.endswith("_") or name in RANDOM:
            continue
        theirs, ours = getattr(theirs_module, name), getattr(ours_module, name, None)
        if ours is None or not callable(theirs) or isinstance(theirs, type):
            continue
        for pattern in PATTERNS:
            want = _outcome(torch, theirs, pattern, dtype)
            if want[0] != "ok":
                continue
            compared += 1
            got = _outcome(retrograd, ours, pattern, dtype)
            tol = TOLERANCE[dtype]
            if got[0] != "ok" or not np.allclose(got[1], want[1], rtol=tol, atol=tol,
                                                 equal_nan=True):
                wrong.append((name, pattern, want, got))
    assert compared > 5
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
