"""Tensor.volatile (removed in torch, still readable with a warning) and autograd.torch."""

from __future__ import annotations

import warnings

import retrograd
from tests.parity.harness import both


def _volatile(lib):
    t = lib.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        value = t.volatile
        t.volatile = True
        after = t.volatile
    return [value, after, t.requires_grad, [(w.category.__name__, str(w.message)) for w in got]]


def test_volatile_reads_false_and_warns_like_torch():
    both(_volatile)


def test_volatile_warning_points_at_the_caller():
    t = retrograd.ones(1)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        t.volatile  # noqa: B018 - reading it is the point
    assert got[0].filename == __file__


def test_autograd_torch_is_the_library():
    both(lambda lib: lib.autograd.torch is lib)
