"""nn.utils against torch: gradient clipping and parameter/vector conversion."""

from __future__ import annotations

import math
import warnings

import pytest

from tests.parity.harness import both, error_of

pytest.importorskip("torch")


def _params_with_grads(lib, dtype="float32"):
    dt = getattr(lib, dtype)
    a = lib.nn.Parameter(lib.tensor([[3.0, -4.0], [1.0, 2.0]], dtype=dt))
    b = lib.nn.Parameter(lib.tensor([0.5, -12.0, 2.0], dtype=dt))
    c = lib.nn.Parameter(lib.tensor([1.0], dtype=dt))  # no grad: skipped
    a.grad = lib.tensor([[3.0, -4.0], [1.0, 2.0]], dtype=dt)
    b.grad = lib.tensor([0.5, -12.0, 2.0], dtype=dt)
    return [a, b, c]


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf", 0.5])
@pytest.mark.parametrize("max_norm", [1.0, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    def prog(lib):
        ps = _params_with_grads(lib)
        nt = float(norm_type) if isinstance(norm_type, str) else norm_type
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=nt)
        return total, [p.grad for p in ps], total.requires_grad

    both(prog)


# scaling by an infinite norm makes inf * 0 = nan; NumPy warns about it, torch does not
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_clip_grad_norm_variants_match_torch():
    def prog(lib):
        out = []
        ps = _params_with_grads(lib, "float64")
        out.append(lib.nn.utils.clip_grad_norm_(iter(ps), 2.0))  # a generator of parameters
        single = _params_with_grads(lib)[1]
        out.append(lib.nn.utils.clip_grad_norm_(single, 1.0))
        out.append(single.grad)
        out.append(lib.nn.utils.clip_grad_norm_([lib.nn.Parameter(lib.ones(2))], 1.0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out.append(lib.nn.utils.clip_grad_norm_((p for p in []), 1.0))
        out.append([str(w.message) for w in caught])
        bad = _params_with_grads(lib)
        bad[0].grad[0, 0] = float("nan")
        out.append(error_of(lib.nn.utils.clip_grad_norm_, bad, 1.0, error_if_nonfinite=True))
        inf = _params_with_grads(lib)
        inf[1].grad[0] = float("inf")
        out.append(error_of(lib.nn.utils.clip_grad_norm_, inf, 1.0, norm_type=1,
                            error_if_nonfinite=True))
        out.append(lib.nn.utils.clip_grad_norm_(inf, 1.0))  # no error: scales by inf norm
        out.append([p.grad for p in inf])
        return out

    both(prog)


def test_clip_grad_norm_on_a_trained_model():
    def prog(lib):
        m = lib.nn.Linear(3, 2)
        m.load_state_dict({"weight": lib.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]]),
                           "bias": lib.tensor([0.1, -0.2])})
        (m(lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])) ** 2).sum().backward()
        total = lib.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        return total, m.weight.grad, m.bias.grad

    both(prog)


def test_clip_grad_value_matches_torch():
    def prog(lib):
        ps = _params_with_grads(lib)
        res = lib.nn.utils.clip_grad_value_(ps, 2.5)
        single = _params_with_grads(lib)[0]
        lib.nn.utils.clip_grad_value_(single, 1)
        return res, [p.grad for p in ps], single.grad

    both(prog)


def test_parameters_to_vector_and_back():
    def prog(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Linear(3, 1))
        m.load_state_dict({k: lib.arange(v.numel(), dtype=lib.float32).reshape(v.shape)
                           for k, v in m.state_dict().items()})
        vec = lib.nn.utils.parameters_to_vector(m.parameters())
        grad_fn = vec.grad_fn.name()
        new = lib.arange(vec.numel(), dtype=lib.float32) * -1
        lib.nn.utils.vector_to_parameters(new, m.parameters())
        new[0] = 100.0  # the parameters view the vector's memory
        return (vec, grad_fn, [p for p in m.parameters()],
                [type(p).__name__ for p in m.parameters()],
                error_of(lib.nn.utils.vector_to_parameters, [1.0], m.parameters()))

    both(prog)
