"""Samples for histogramdd and the ops it calls (_histogramdd_bin_edges,
_histogramdd_from_bin_cts, _histogramdd_from_bin_tensors).

None has a derivative (torch's NotImplemented node): they run on inputs that do not require
grad, and their result is a constant factor of a differentiable expression. Edge cases, errors
and nodes are tested against torch in tests/test_histogramdd.py.
"""

import numpy as np

from tests.op_samples import Sample, arr, pos

EDGES = [np.array([-1.0, -0.2, 0.1, 1.0]), np.array([-1.0, 0.5, 1.0])]


def histogramdd_const(lib, x, a, w):
    return x * lib.histogramdd(a, [2, 3], range=[-1.0, 1.0, -1.0, 1.0], weight=w,
                               density=True).hist


def histogramdd_edges_const(lib, x, a, e0, e1):
    return x * lib.histogramdd(a, [e0, e1]).hist


SAMPLES = [
    Sample("_histogramdd_bin_edges", (arr(20, 2), [3, 2]), requires_grad=(False,)),
    Sample("_histogramdd_bin_edges", (arr(4, 5, 3), [1, 2, 3]),
           {"range": [-1.0, 1.0, 0.0, 0.5, -0.5, 0.0]}, name="range", requires_grad=(False,)),
    Sample("_histogramdd_from_bin_cts", (arr(20, 2), [3, 2]), requires_grad=(False,)),
    Sample("_histogramdd_from_bin_cts", (arr(30, 2), [4, 2]),
           {"weight": pos(30), "density": True}, name="weight", requires_grad=(False, False)),
    Sample("_histogramdd_from_bin_tensors", (arr(30, 2), EDGES), requires_grad=(False,) * 3),
    Sample("_histogramdd_from_bin_tensors", (arr(30, 2), EDGES),
           {"weight": pos(30), "density": True}, name="weight", requires_grad=(False,) * 4),
    Sample("histogramdd", (arr(20, 3), 3), requires_grad=(False,)),
    Sample("histogramdd", (arr(20, 2), [2, 5]), {"range": [-1.0, 1.0, -0.5, 0.5]}, name="list",
           requires_grad=(False,)),
    Sample("histogramdd", (arr(30, 2), EDGES), {"weight": pos(30)}, name="edges",
           requires_grad=(False,) * 4),
    Sample(histogramdd_const, (arr(2, 3), arr(30, 2), pos(30)),
           requires_grad=(True, False, False)),
    Sample(histogramdd_edges_const, (arr(3, 2), arr(30, 2), EDGES[0], EDGES[1]),
           requires_grad=(True, False, False, False)),
]
