"""distributions.transforms and TransformedDistribution against torch: values, inverses,
log|det J|, shapes, domains, reprs, caching; gradients through them."""

from __future__ import annotations

import numpy as np
import pytest

from tests.distributions.harness import check_parity, leaf
from tests.parity.harness import both, error_of

RNG = np.random.default_rng(2)
X = RNG.normal(size=(2, 3))


def _transforms(lib):
    T = lib.distributions.transforms
    return {
        "exp": T.ExpTransform(),
        "affine": T.AffineTransform(1.5, -2.0),
        "affine_tensor": T.AffineTransform(lib.tensor([0.5, 1.0, -1.0], dtype=lib.float64),
                                           lib.tensor([2.0, -1.0, 0.5], dtype=lib.float64)),
        "affine_event": T.AffineTransform(0.0, lib.tensor([2.0, 3.0, 4.0], dtype=lib.float64),
                                          event_dim=1),
        "sigmoid": T.SigmoidTransform(),
        "tanh": T.TanhTransform(),
        "softplus": T.SoftplusTransform(),
        "power": T.PowerTransform(lib.tensor(2.0, dtype=lib.float64)),
        "abs": T.AbsTransform(),
        "softmax": T.SoftmaxTransform(),
        "stick": T.StickBreakingTransform(),
        "compose": T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.SigmoidTransform(),
                                       T.AffineTransform(-1.0, 3.0)]),
        "compose_event": T.ComposeTransform([T.ExpTransform(), T.SoftmaxTransform()]),
        "identity": T.identity_transform,
        "independent": T.IndependentTransform(T.ExpTransform(), 1),
        "reshape": T.ReshapeTransform((3,), (3, 1)),
        "stack": T.StackTransform([T.ExpTransform(), T.SigmoidTransform(),
                                   T.AffineTransform(1.0, 2.0)], dim=-1),
        "inverse": T.ExpTransform().inv,
        "cat": T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], dim=-1,
                              lengths=[1, 2]),
        "corr_cholesky": T.CorrCholeskyTransform(),
    }


NAMES = sorted(_transforms(__import__("retrograd")))


def _describe(lib, name):
    t = _transforms(lib)[name]
    x = leaf(lib, X if name not in ("power", "inverse") else np.abs(X) + 0.1)
    out = {"repr": repr(t), "bijective": t.bijective, "domain": error_of(lambda: repr(t.domain)),
           "codomain": error_of(lambda: repr(t.codomain)),
           "event_dim": error_of(lambda: t.event_dim), "sign": error_of(lambda: t.sign),
           "forward_shape": error_of(t.forward_shape, (2, 3)),
           "inverse_shape": error_of(t.inverse_shape, (2, 3)),
           "inv.repr": repr(t.inv), "eq": [t == t, t == t.inv, t.inv.inv is t]}
    y = error_of(t, x)
    out["y"] = y
    if y[0] == "ok":
        out["inv(y)"] = error_of(t.inv, y[1])
        ladj = error_of(t.log_abs_det_jacobian, x, y[1])
        out["ladj"] = ladj
        loss = y[1].sum() + (ladj[1].sum() if ladj[0] == "ok" else 0)
        out["grad"] = lib.autograd.grad(loss, x)[0]
    return out


@pytest.mark.parametrize("name", NAMES)
def test_transform(name):
    both(_describe, name, rtol=1e-7, atol=1e-9)


def test_cache_and_errors():
    def program(lib):
        T = lib.distributions.transforms
        t = T.ExpTransform(cache_size=1)
        x = lib.tensor([1.0, 2.0])
        y = t(x)
        c = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], cache_size=1)
        return [t.inv(y) is x, t(x) is y, t.with_cache(1) is t, t.with_cache(0)._cache_size,
                error_of(T.ExpTransform, cache_size=2),
                error_of(lambda: T.AffineTransform(0.0, 1.0).with_cache(1)._cache_size),
                c.inv(c(x)) is x, repr(c.inv),
                error_of(T.ReshapeTransform, (2,), (3,)),
                error_of(T.ReshapeTransform((3,), (3, 1)).forward_shape, (2, 2)),
                error_of(lambda: T.StackTransform([T.ExpTransform()])(lib.ones(2, 2))),
                error_of(lambda: T.SoftmaxTransform().event_dim),
                error_of(lambda: T.ComposeTransform([T.ExpTransform(),
                                                     T.SoftmaxTransform()]).event_dim),
                T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0),
                T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 3.0),
                T.ExpTransform() == T.ExpTransform(),
                T.AffineTransform(0.0, -2.0).sign, T.ComposeTransform([
                    T.AffineTransform(0.0, -2.0), T.ExpTransform()]).sign]
    both(program)


TD_CASES = {
    "affine_normal": (lambda lib, loc, s: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(loc, s), [lib.distributions.transforms.AffineTransform(
            1.0, -2.0)]), [np.array([0.5, -1.0, 3.0])]),
    "sigmoid_normal": (lambda lib, loc, s: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(loc, s), lib.distributions.transforms.SigmoidTransform()),
        [np.array([0.1, 0.5, 0.99])]),
    "tanh_normal": (lambda lib, loc, s: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(loc, s), [lib.distributions.transforms.TanhTransform()]),
        [np.array([0.1, -0.5, 0.9])]),
    "stick_normal": (lambda lib, loc, s: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(loc, s), [lib.distributions.transforms.StickBreakingTransform()]),
        [np.array([0.1, 0.2, 0.3, 0.4])]),
    "exp_uniform": (lambda lib, loc, s: lib.distributions.TransformedDistribution(
        lib.distributions.Uniform(loc, loc + s), [lib.distributions.transforms.ExpTransform()]),
        [np.exp([0.2, 0.0, 0.5])]),
}


@pytest.mark.parametrize("name", sorted(TD_CASES))
def test_transformed_distribution(name):
    make, values = TD_CASES[name]
    params = {"loc": np.array([0.1, -0.2, 0.3]),
              "s": np.array([0.5, 1.0, 1.5])}
    check_parity(make, params, values)


def test_transformed_errors_and_broadcast():
    def program(lib):
        D = lib.distributions
        T = D.transforms
        n = D.Normal(lib.zeros(3), lib.ones(3))
        wide = D.TransformedDistribution(D.Normal(0.0, 1.0),
                                         T.AffineTransform(lib.zeros(2), lib.ones(2)))
        return [error_of(D.TransformedDistribution, n, "exp"),
                error_of(D.TransformedDistribution, n, [T.ExpTransform(), 1]),
                error_of(D.TransformedDistribution, D.Normal(0.0, 1.0), T.SoftmaxTransform()),
                tuple(wide.batch_shape), repr(wide.base_dist),
                error_of(lambda: D.TransformedDistribution(n, T.ExpTransform()).log_prob(
                    lib.tensor([-1.0, 1.0, 1.0])))]
    both(program)


MATRICES = np.array([[[0.5, 0.2, -0.1], [0.3, -0.4, 0.8], [1.0, 0.1, 0.2]],
                     [[0.1, 0.0, 0.0], [-0.5, 0.2, 0.3], [0.4, 0.4, -1.0]]])


@pytest.mark.parametrize("name", ["LowerCholeskyTransform", "PositiveDefiniteTransform"])
def test_matrix_transforms(name):
    def program(lib):
        t = getattr(lib.distributions.transforms, name)()
        x = leaf(lib, MATRICES)
        y = t(x)
        return [repr(t), repr(t.domain), repr(t.codomain), y, t.inv(y),
                lib.autograd.grad(y.sum(), x)[0], t == type(t)(),
                error_of(t.log_abs_det_jacobian, x, y)]
    both(program, rtol=1e-7, atol=1e-9)


REGISTRY = ["real", "positive", "nonnegative", "unit_interval", "simplex", "real_vector",
            "lower_cholesky", "positive_definite", "positive_semidefinite", "corr_cholesky",
            "boolean", "nonnegative_integer", "integer_interval(0, 3)", "greater_than(1.5)",
            "greater_than_eq(-2.0)", "less_than(3.0)", "interval(-1.0, 2.0)",
            "half_open_interval(0, 1)", "independent(positive, 1)",
            "cat([positive, real], -1, [1, 2])", "stack([positive, unit_interval, real], -1)"]


@pytest.mark.parametrize("spec", REGISTRY)
def test_biject_to_transform_to(spec):
    def program(lib):
        c = eval(spec, vars(lib.distributions.constraints))  # noqa: S307 - fixed test specs
        out = {}
        for name in ("biject_to", "transform_to"):
            made = error_of(getattr(lib.distributions, name), c)
            if made[0] != "ok":
                out[name] = made
                continue
            t = made[1]
            x = leaf(lib, MATRICES[0] if c.event_dim == 2 else X[0])
            y = error_of(t, x)
            inside = error_of(c.check, y[1]) if y[0] == "ok" else None
            out[name] = (repr(t), y, inside)
        return out
    both(program, rtol=1e-7, atol=1e-9)


def test_registry_register():
    def program(lib):
        from importlib import import_module
        registry = import_module(lib.distributions.__name__ + ".constraint_registry")
        reg = registry.ConstraintRegistry()
        reg.register(lib.distributions.constraints.positive, lambda c: "made")
        return [reg(lib.distributions.constraints.positive),
                error_of(reg, lib.distributions.constraints.real),
                error_of(reg.register, 3, lambda c: None)]
    both(program)
