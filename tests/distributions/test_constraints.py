"""distributions.constraints: torch's names, reprs, flags and checks."""

from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import both, error_of

NAMES = ["boolean", "corr_cholesky", "dependent", "lower_cholesky", "lower_triangular",
         "nonnegative", "nonnegative_integer", "one_hot", "positive", "positive_definite",
         "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex", "square",
         "symmetric", "unit_interval"]

VALUES = {
    0: [[0.0, 1.0, -1.0, 0.5, 2.0, float("nan"), float("inf"), -float("inf")]],
    1: [[[0.2, 0.8], [1.0, 0.0], [0.5, 0.6], [-0.1, 1.1]], [[0.0, 1.0], [1.0, 1.0]]],
    2: [[[[2.0, 0.0], [1.0, 3.0]], [[2.0, 1.0], [1.0, 3.0]], [[1.0, 0.0], [0.0, -1.0]],
         [[0.6, 0.8], [0.8, 0.6]], [[1.0, 0.0], [0.6, 0.8]]]],
}


def _describe(lib, c):
    out = {"repr": repr(c), "is_discrete": error_of(lambda: c.is_discrete),
           "event_dim": error_of(lambda: c.event_dim)}
    dim = out["event_dim"][1] if out["event_dim"][0] == "ok" else 0
    for i, v in enumerate(VALUES.get(dim, [])):
        out[f"check[{i}]"] = error_of(c.check, lib.tensor(np.array(v)))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_named_constraint(name):
    both(lambda lib: _describe(lib, getattr(lib.distributions.constraints, name)))


PARAMETERIZED = [
    ("greater_than", (1.5,)), ("greater_than_eq", (0.5,)), ("less_than", (0.5,)),
    ("interval", (0, 1)), ("interval", (-1.0, 2.0)), ("half_open_interval", (0.0, 1.0)),
    ("integer_interval", (0, 3)), ("multinomial", (2,)),
]


@pytest.mark.parametrize("name,args", PARAMETERIZED)
def test_parameterized_constraint(name, args):
    both(lambda lib: _describe(lib, getattr(lib.distributions.constraints, name)(*args)))


def test_tensor_bound_repr():
    both(lambda lib: repr(lib.distributions.constraints.greater_than(lib.tensor(1.0))))


def test_independent_cat_stack():
    def program(lib):
        c = lib.distributions.constraints
        ind = c.independent(c.positive, 2)
        x = lib.tensor([[[1.0, 2.0], [3.0, 4.0]], [[1.0, -2.0], [3.0, 4.0]]])
        cat = c.cat([c.positive, c.real], dim=-1, lengths=[1, 1])
        st = c.stack([c.positive, c.unit_interval], dim=-1)
        y = lib.tensor([[0.5, -3.0], [-1.0, 0.5], [2.0, 0.5]])
        return {"ind": _describe(lib, ind), "ind.check": ind.check(x),
                "ind.low": error_of(ind.check, lib.tensor([1.0])),
                "cat": (repr(cat), cat.event_dim, cat.is_discrete, cat.check(y)),
                "stack": (repr(st), st.event_dim, st.is_discrete, st.check(y)),
                "is_dependent": [c.is_dependent(c.dependent), c.is_dependent(c.real)],
                "dep_call": repr(c.dependent(is_discrete=True, event_dim=1)),
                "dep_check": error_of(c.dependent.check, lib.tensor(1.0)),
                "dep_flags": [c.dependent(is_discrete=True, event_dim=1).is_discrete,
                              c.dependent(is_discrete=True, event_dim=1).event_dim]}
    both(program)


def test_all():
    both(lambda lib: sorted(lib.distributions.constraints.__all__))
