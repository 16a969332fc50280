"""histogramdd against torch: hist and bin_edges bit for bit (dtype, shape, values) over every
form of bins, range, weight and density, edge cases (points on edges, empty and single-point
input, equal values, NaN, unsorted edges, 16-bit dtypes, thread chunks), errors and nodes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd
from tests.test_statistics import both as run
from tests.test_statistics import same_error

NAN = float("nan")
INF = float("inf")


def _np(t) -> np.ndarray:
    return t.detach().float().numpy() if t.dtype in (torch.bfloat16,) else t.detach().numpy()


def _rg_np(t) -> np.ndarray:
    return _np(torch.from_numpy(np.asarray(t.detach().float().numpy()))) \
        if str(t.dtype) == "retrograd.bfloat16" else t.detach().numpy()


def exact(ours, theirs) -> None:
    """Same named tuple, dtypes, shapes and bit-equal values (NaN where torch has NaN)."""
    assert type(ours).__name__ == type(theirs).__name__ == "histogramdd"
    assert isinstance(ours.bin_edges, tuple) and isinstance(theirs.bin_edges, tuple)
    assert len(ours.bin_edges) == len(theirs.bin_edges)
    for a, b in [(ours.hist, theirs.hist), *zip(ours.bin_edges, theirs.bin_edges)]:
        assert str(a.dtype).rpartition(".")[2] == str(b.dtype).rpartition(".")[2]
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(_rg_np(a), _np(b))




RNG = np.random.default_rng(0)
PTS = RNG.normal(size=(50, 3)).astype(np.float32)
# coordinates on the evenly spaced edges of [0, 1] in 10 bins, and on the outer edges
GRID = np.stack(np.meshgrid(np.linspace(0, 1, 11), np.linspace(0, 1, 11)), -1)
GRID = GRID.reshape(-1, 2).astype(np.float32)
EDGES = [np.array([-1.0, -0.2, 0.1, 1.0], np.float32), np.array([-2.0, 0.0, 3.0], np.float32),
         np.array([-0.5, 0.5], np.float32)]

CASES = {
    "int_bins": (lambda lib, x: lib.histogramdd(x, 4), PTS),
    "int_list": (lambda lib, x: lib.histogramdd(x, [2, 3, 4]), PTS),
    "int_tuple_keywords": (lambda lib, x: lib.histogramdd(input=x, bins=(5, 1, 2)), PTS),
    "range": (lambda lib, x: lib.histogramdd(x, [3, 2, 4], range=[-1, 1, -0.5, 0.5, 0, 2.0]),
              PTS),
    "range_positional": (lambda lib, x: lib.histogramdd(x, 3, (-1.0, 1.0, -1, 1, 0, 1)), PTS),
    "weight": (lambda lib, x: lib.histogramdd(x, 3, weight=x[:, 0].abs()), PTS),
    "density": (lambda lib, x: lib.histogramdd(x, [4, 3, 2], density=True), PTS),
    "weight_density": (lambda lib, x: lib.histogramdd(x, 3, weight=x[:, 1].abs() + 1,
                                                      density=True), PTS),
    "edges": (lambda lib, x: lib.histogramdd(x, [lib.tensor(e) for e in EDGES]), PTS),
    "edges_tuple_weight_density": (lambda lib, x: lib.histogramdd(
        x, tuple(lib.tensor(e) for e in EDGES), weight=x[:, 2].abs(), density=True), PTS),
    "edges_with_range": (lambda lib, x: lib.histogramdd(
        x, [lib.tensor(e) for e in EDGES], range=[0.0, 1.0] * 3), PTS),
    "grid_on_edges": (lambda lib, x: lib.histogramdd(x, 10), GRID),
    "grid_on_edges_range": (lambda lib, x: lib.histogramdd(x, [10, 5], range=[0, 1, 0, 1]), GRID),
    "grid_given_edges": (lambda lib, x: lib.histogramdd(
        x, [lib.linspace(0, 1, 11), lib.tensor([0.0, 0.3, 0.7, 1.0])]), GRID),
    "outside_range": (lambda lib, x: lib.histogramdd(x, [3, 3, 3], range=[0, 0.5] * 3), PTS),
    "more_dims": (lambda lib, x: lib.histogramdd(x.reshape(5, 10, 3), 2,
                                                 weight=x[:, 0].reshape(5, 10)), PTS),
    "one_dim": (lambda lib, x: lib.histogramdd(x[:, :1], 7), PTS),
    "float64": (lambda lib, x: lib.histogramdd(x.double(), [3, 4, 5],
                                               weight=x[:, 0].double(), density=True), PTS),
    "empty": (lambda lib, x: lib.histogramdd(x[:0], [2, 3, 1]), PTS),
    "empty_density": (lambda lib, x: lib.histogramdd(x[:0], 2, density=True), PTS),
    "empty_edges": (lambda lib, x: lib.histogramdd(x[:0], [lib.tensor(e) for e in EDGES]), PTS),
    "single_point": (lambda lib, x: lib.histogramdd(x[:1], 3), PTS),
    "single_point_scalar_weight": (lambda lib, x: lib.histogramdd(
        x[:1], 2, weight=lib.tensor(2.5)), PTS),
    "equal_values": (lambda lib, x: lib.histogramdd(x[:, :2] * 0 + 1.5, [3, 2]), PTS),
    "equal_values_density": (lambda lib, x: lib.histogramdd(x[:, :2] * 0 - 2, 4, density=True),
                             PTS),
    "empty_range": (lambda lib, x: lib.histogramdd(x, 2, range=[1.0, 1.0] * 3), PTS),
    "no_dims": (lambda lib, x: lib.histogramdd(x[:, :0], 3), PTS),
    "no_dims_density": (lambda lib, x: lib.histogramdd(x[:, :0], [], density=True), PTS),
    "nan_points": (lambda lib, x: lib.histogramdd(
        lib.where(x > 1, lib.tensor(NAN), x), [lib.tensor(e) for e in EDGES]), PTS),
    "nan_points_range": (lambda lib, x: lib.histogramdd(
        lib.where(x > 1, lib.tensor(NAN), x), 3, range=[-2.0, 2.0] * 3), PTS),
    "unsorted_edges": (lambda lib, x: lib.histogramdd(
        x, [lib.tensor([-2.0, 1.0, -0.5, 0.5, 2.0]), lib.tensor([-3.0, 3.0]),
            lib.tensor([-3.0, 0.0, -1.0, 3.0])]), PTS),
    "one_edge_each": (lambda lib, x: lib.histogramdd(x, [lib.tensor([0.0, 1.0])] * 3), PTS),
    "half_range": (lambda lib, x: lib.histogramdd(x.half(), 3, range=[-1, 1] * 3), PTS),
    "half_edges": (lambda lib, x: lib.histogramdd(
        x.half(), [lib.tensor(e).half() for e in EDGES], weight=x[:, 0].half(),
        density=True), PTS),
    "bfloat16_range": (lambda lib, x: lib.histogramdd(x.bfloat16(), [2, 3, 4],
                                                      range=[-1, 1] * 3, density=True), PTS),
    "int_input_empty_range": (lambda lib, x: lib.histogramdd(x[:0].double(), 2), PTS),
}


@pytest.mark.parametrize("case", CASES)
def test_histogramdd(case):
    fn, data = CASES[case]
    exact(*run(fn, data))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random(seed, dtype):
    """Random points of every size (past torch's thread chunks), scales, bin counts and forms,
    rounded coordinates too, so that many lie exactly on edges."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(0, 1500)), int(rng.integers(1, 4))
    pts = (rng.normal(size=(n, d)) * 10 ** rng.uniform(-3, 3)).astype(dtype)
    if seed % 2:
        pts = np.round(pts * 4) / 4
    bins = [int(b) for b in rng.integers(1, 9, d)]
    w = rng.uniform(-1, 2, n).astype(dtype)
    lo = (pts.min(0) if n else np.zeros(d)) - rng.uniform(0, 1)
    rng_list = [float(v) for pair in zip(lo, lo + rng.uniform(0.1, 5, d)) for v in pair]
    edges = [np.sort(rng.normal(size=b + 1)).astype(dtype) * 3 for b in bins]
    forms = [
        lambda lib, x, w: lib.histogramdd(x, bins),
        lambda lib, x, w: lib.histogramdd(x, bins[0], weight=w),
        lambda lib, x, w: lib.histogramdd(x, bins, range=rng_list, weight=w, density=True),
        lambda lib, x, w: lib.histogramdd(x, bins, density=True),
        lambda lib, x, w: lib.histogramdd(x, [lib.tensor(e) for e in edges], weight=w),
        lambda lib, x, w: lib.histogramdd(x, [lib.tensor(e) for e in edges], density=True),
    ]
    for fn in forms:
        exact(*run(fn, pts, w))


ERRORS = {
    "int_input": lambda lib, x: lib.histogramdd(x.long(), 2),
    "int_input_range": lambda lib, x: lib.histogramdd(x.long(), 2, range=[0.0, 1.0] * 3),
    "int_input_edges": lambda lib, x: lib.histogramdd(x.long(), [lib.tensor([0, 1])] * 3),
    "half_no_range": lambda lib, x: lib.histogramdd(x.half(), 2),
    "bins_length": lambda lib, x: lib.histogramdd(x, [2, 3]),
    "bins_length_long": lambda lib, x: lib.histogramdd(x, [2, 3, 4, 5]),
    "zero_bins": lambda lib, x: lib.histogramdd(x, 0),
    "zero_bins_second": lambda lib, x: lib.histogramdd(x, [1, 0, 2]),
    "minus_one_bins": lambda lib, x: lib.histogramdd(x, [2, -1, 2]),
    "minus_two_bins": lambda lib, x: lib.histogramdd(x, [2, -2, 2]),
    "range_length": lambda lib, x: lib.histogramdd(x, 2, range=[0.0, 1.0]),
    "range_order": lambda lib, x: lib.histogramdd(x, 2, range=[0.0, 1.0, 2.0, 1.0, 0.0, 1.0]),
    "range_inf": lambda lib, x: lib.histogramdd(x, 2, range=[0.0, 1.0, INF, 1.0, 0.0, 1.0]),
    "range_nan": lambda lib, x: lib.histogramdd(x, 2, range=[NAN, 1.0, 0.0, 1.0, 0.0, 1.0]),
    "range_tensor": lambda lib, x: lib.histogramdd(x, 2, range=lib.tensor([0.0, 1.0] * 3)),
    "inf_data": lambda lib, x: lib.histogramdd(lib.where(x > 1, lib.tensor(-INF), x), 2),
    "weight_shape": lambda lib, x: lib.histogramdd(x, 2, weight=lib.ones(49)),
    "weight_shape_2d": lambda lib, x: lib.histogramdd(x, 2, weight=lib.ones(50, 1)),
    "weight_dtype": lambda lib, x: lib.histogramdd(x, 2, weight=lib.ones(50).double()),
    "weight_int": lambda lib, x: lib.histogramdd(x, 2, weight=lib.ones(50).long()),
    "range_before_weight": lambda lib, x: lib.histogramdd(
        x, 2, range=[1.0, 0.0] * 3, weight=lib.ones(3)),
    "one_dim_input": lambda lib, x: lib.histogramdd(x[:, 0], 2),
    "one_dim_input_list": lambda lib, x: lib.histogramdd(x[:, 0], [2]),
    "zero_dim_input": lambda lib, x: lib.histogramdd(x[0, 0], 2),
    "zero_dim_input_list": lambda lib, x: lib.histogramdd(x[0, 0], [2]),
    "one_dim_input_edges": lambda lib, x: lib.histogramdd(x[:, 0], [lib.tensor([0.0, 1.0])]),
    "edges_count": lambda lib, x: lib.histogramdd(x, [lib.tensor([0.0, 1.0])]),
    "edges_dtype": lambda lib, x: lib.histogramdd(
        x, [lib.tensor([0.0, 1.0]), lib.tensor([0.0, 1.0]).double(), lib.tensor([0.0, 1.0])]),
    "edges_2d": lambda lib, x: lib.histogramdd(x, [lib.tensor([[0.0, 1.0]])] * 3),
    "edges_0d": lambda lib, x: lib.histogramdd(x, [lib.tensor(1.0), lib.tensor([0.0, 1.0]),
                                                   lib.tensor([0.0, 1.0])]),
    "edges_and_int": lambda lib, x: lib.histogramdd(x, [lib.tensor([0.0, 1.0]), 2, 2]),
    "edges_empty": lambda lib, x: lib.histogramdd(x, [lib.tensor([0.0, 1.0]), lib.tensor([]),
                                                      lib.tensor([0.0, 1.0])]),
    "edges_one": lambda lib, x: lib.histogramdd(x, [lib.tensor([0.0, 1.0]), lib.tensor([1.0]),
                                                    lib.tensor([0.0, 1.0])]),
    "float_bins": lambda lib, x: lib.histogramdd(x, 2.5),
    "float_list_bins": lambda lib, x: lib.histogramdd(x, [2.0, 3.0, 1.0]),
    "tensor_bins": lambda lib, x: lib.histogramdd(x, lib.tensor([2, 3, 1])),
    "out": lambda lib, x: lib.histogramdd(x, 2, out=None),
    "int_density": lambda lib, x: lib.histogramdd(x, 2, density=1),
    "method": lambda lib, x: x.histogramdd(2),
    "backward_input": lambda lib, x: lib.histogramdd(
        x.requires_grad_(), 2).hist.sum().backward(),
    "backward_edges": lambda lib, x: lib.histogramdd(
        x.requires_grad_(), 2).bin_edges[1].sum().backward(),
    "backward_weight": lambda lib, x: lib.histogramdd(
        x, 2, weight=lib.ones(50, requires_grad=True)).hist.sum().backward(),
    "backward_given_edges": lambda lib, x: lib.histogramdd(
        x, [lib.tensor([0.0, 1.0], requires_grad=True)] * 3).hist.sum().backward(),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors(case):
    same_error(ERRORS[case], PTS)


def _grad_state(lib, fn):
    r = fn(lib)
    return ([r.hist.requires_grad, type(r.hist.grad_fn).__name__]
            + [(e.requires_grad, type(e.grad_fn).__name__) for e in r.bin_edges])


def _edge_tensor(lib):
    return lib.tensor([-3.0, 0.0, 3.0], requires_grad=True)


GRAD_CASES = {
    "input": lambda lib: lib.histogramdd(lib.tensor(PTS, requires_grad=True), 2),
    "weight": lambda lib: lib.histogramdd(lib.tensor(PTS), [1, 2, 3],
                                          weight=lib.ones(50, requires_grad=True)),
    "input_edges": lambda lib: lib.histogramdd(lib.tensor(PTS, requires_grad=True),
                                               [lib.tensor(e) for e in EDGES]),
    "edges": lambda lib: lib.histogramdd(lib.tensor(PTS), [_edge_tensor(lib)] * 3),
    "none": lambda lib: lib.histogramdd(lib.tensor(PTS), 2),
}


@pytest.mark.parametrize("case", GRAD_CASES)
def test_requires_grad_and_nodes(case):
    assert _grad_state(retrograd, GRAD_CASES[case]) == _grad_state(torch, GRAD_CASES[case])


def test_no_grad_mode():
    for lib in (retrograd, torch):
        with lib.no_grad():
            r = lib.histogramdd(lib.tensor(PTS, requires_grad=True), 2)
        assert not r.hist.requires_grad and not r.bin_edges[0].requires_grad


def test_given_edges_are_returned_as_is():
    edges = [retrograd.tensor(e) for e in EDGES]
    r = retrograd.histogramdd(retrograd.tensor(PTS), edges)
    assert all(a is b for a, b in zip(r.bin_edges, edges))


def test_node_name_and_repr():
    r = retrograd.histogramdd(retrograd.tensor(PTS, requires_grad=True), 2)
    assert r.hist.grad_fn.name() == "torch::autograd::NotImplemented"
    assert r.bin_edges[0].grad_fn.name() == "torch::autograd::NotImplemented"
    ours = repr(retrograd.histogramdd(retrograd.tensor(PTS), 2))
    theirs = repr(torch.histogramdd(torch.tensor(PTS), 2))
    assert ours.replace("retrograd.", "torch.", 1) == theirs
    assert not hasattr(torch.Tensor, "histogramdd")
    assert not hasattr(retrograd.Tensor, "histogramdd")


def test_threads_chunks_with_one_thread():
    """With one thread torch adds every weight in one pass."""
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(3000, 2)).astype(np.float32)
    w = rng.uniform(0, 1, 3000).astype(np.float32)
    old_t, old_r = torch.get_num_threads(), retrograd.get_num_threads()
    try:
        torch.set_num_threads(1)
        retrograd.set_num_threads(1)
        exact(*run(lambda lib, x, w: lib.histogramdd(x, 3, weight=w, density=True), pts, w))
    finally:
        torch.set_num_threads(old_t)
        retrograd.set_num_threads(old_r)


def test_half_overflowing_bin_guess_runs():
    """(x - first) * bins overflowing float16 is undefined in torch's kernel (it reads before
    the edges); retrograd searches all edges there, so every point inside is counted once."""
    x = retrograd.tensor([[-1000.0], [0.0], [999.0], [1000.0]]).half()
    r = retrograd.histogramdd(x, 100, range=[-1000.0, 1000.0])
    assert float(r.hist.float().sum()) == 4.0


@pytest.mark.parametrize("given_edges", [False, True])
def test_forward_ad_refused(given_edges):
    def call(lib, x):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(x, lib.ones_like(x))
            lib.histogramdd(dual, [lib.tensor([0.0, 1.0])] * 3 if given_edges else 2)

    same_error(call, PTS)
