"""Argument and sample validation: on by default, torch's switches and error texts."""

from __future__ import annotations

import pytest

import retrograd
from retrograd.distributions import Bernoulli, Categorical, Distribution, Normal
from tests.parity.harness import both, error_of


@pytest.fixture(autouse=True)
def _restore_default():
    yield
    Distribution.set_default_validate_args(True)


def test_bad_parameters():
    def program(lib):
        D = lib.distributions
        t = lib.tensor
        return [
            error_of(D.Normal, t([0.0, 1.0]), t([1.0, -1.0])),
            error_of(D.Normal, 0.0, 0.0),
            error_of(D.Normal, t(float("nan")), 1.0),
            error_of(D.Bernoulli, t([0.5, 1.5])),
            error_of(D.Bernoulli, 0.5, 0.0),
            error_of(D.Bernoulli),
            error_of(D.Categorical, t([0.5, -0.5, 1.0])),
            error_of(D.Categorical, t([[float("nan"), 1.0]])),
            error_of(D.Categorical, logits=t(1.0)),
            error_of(D.Normal, "a", 1.0),
            error_of(lambda: D.Normal(0.0, -1.0, validate_args=False).scale),
        ]
    both(program)


def test_bad_values():
    def program(lib):
        D = lib.distributions
        t = lib.tensor
        n = D.Normal(t([0.0, 1.0]), t([1.0, 2.0]))
        b = D.Bernoulli(logits=t([0.0, 1.0, 2.0]))
        c = D.Categorical(logits=t([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]]))
        return [
            error_of(n.log_prob, t([0.0, float("nan")])),
            error_of(n.log_prob, 1.0),
            error_of(n.log_prob, t([1.0, 2.0, 3.0])),
            error_of(n.cdf, t([float("nan")])),
            error_of(b.log_prob, t([0.0, 0.5, 1.0])),
            error_of(b.log_prob, t([[0.0], [1.0]])),
            error_of(c.log_prob, t([0, 3])),
            error_of(c.log_prob, t([0.5, 1.0])),
            error_of(c.log_prob, t([[0, 1], [2, 2]])),
            error_of(lambda: D.Bernoulli(t([0.5]), validate_args=False).log_prob(t([0.5]))),
        ]
    both(program)


def test_set_default_validate_args():
    def program(lib):
        D = lib.distributions
        out = [error_of(D.Distribution.set_default_validate_args, 1.5)]
        D.Distribution.set_default_validate_args(False)
        try:
            n = D.Normal(0.0, -1.0)
            out += [n.scale, n.log_prob(lib.tensor(float("nan"))), n._validate_args,
                    error_of(D.Normal, 0.0, -1.0, validate_args=True)]
        finally:
            D.Distribution.set_default_validate_args(True)
        out.append(error_of(D.Normal, 0.0, -1.0))
        return out
    both(program)


def test_lazy_parameter_is_validated_only_when_given():
    # logits given: probs is computed later and never validated (torch skips lazy ones)
    def program(lib):
        b = lib.distributions.Bernoulli(logits=lib.tensor([100.0, -100.0]))
        return [repr(b), b.probs, repr(b)]
    both(program)


def test_expand_keeps_validation_flag_and_custom_init_refusal():
    class Sub(Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)

    n = Normal(retrograd.zeros(2), 1.0, validate_args=False)
    assert n.expand((3, 2))._validate_args is False
    with pytest.raises(NotImplementedError, match="Subclass Sub of Normal that defines a custom "
                       "__init__ method must also define a custom .expand"):
        Sub(retrograd.zeros(2)).expand((3, 2))


def test_missing_support_and_constraints_warn():
    class Bare(Distribution):
        pass

    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        d = Bare()
    with pytest.warns(UserWarning, match="does not define `support`"):
        d._validate_sample(retrograd.tensor(1.0))
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        _ = d.mode
    with pytest.warns(FutureWarning, match=r"`sample_n\(n\)` will be deprecated"):
        with pytest.raises(NotImplementedError):
            d.sample_n(3)


def test_default_is_on():
    assert Distribution._validate_args is True
    with pytest.raises(ValueError):
        Bernoulli(retrograd.tensor(2.0))
    with pytest.raises(ValueError):
        Categorical(retrograd.tensor([-1.0, 2.0]))
