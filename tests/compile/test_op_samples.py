"""Every op sample, compiled, gives eager's values, dtypes and gradients (ops that cannot be
captured run eagerly and must still agree)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from tests.op_harness import make_inputs, resolve, tensor_outputs
from tests.op_samples import all_samples

SAMPLES = all_samples()


def _run(sample, compiled: bool, dynamic: bool = False):
    retrograd.manual_seed(0)
    args, kwargs, leaves = make_inputs(retrograd, sample)
    op = resolve(retrograd, sample.op)
    fn = retrograd.compile(lambda *a, **k: op(*a, **k), dynamic=dynamic) if compiled else op
    retrograd.manual_seed(1)
    outs = tensor_outputs(fn(*args, **kwargs))
    diff = [o for o in outs if o.requires_grad]
    if diff:
        rng = np.random.default_rng(7)
        loss = sum((o * retrograd.tensor(rng.standard_normal(o.shape), dtype=o.dtype)).sum()
                   for o in diff)
        loss.backward()
    return outs, [leaf.grad for leaf in leaves]


def _assert_same(a, b, sample):
    if a is None or b is None:
        assert a is None and b is None
        return
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    x, y = a.detach()._data, b.detach()._data
    if x.dtype.kind == "V":
        x, y = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7, equal_nan=True)


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.id)
def test_compiled_matches_eager(sample, dynamic):
    """With dynamic=True the graph is captured at other sizes and serves the sample's sizes
    after the check against eager, or the sample compiles for its own (NOTE [Dynamic
    shapes]): either way eager's results."""
    try:
        eager_outs, eager_grads = _run(sample, False)
    except Exception as e:  # noqa: BLE001 - the sample is an error case: compiled must agree
        with pytest.raises(type(e)):
            _run(sample, True, dynamic)
        return
    outs, grads = _run(sample, True, dynamic)
    assert len(outs) == len(eager_outs)
    for a, b in zip(outs, eager_outs):
        _assert_same(a, b, sample)
    for a, b in zip(grads, eager_grads):
        _assert_same(a, b, sample)
