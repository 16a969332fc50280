"""index_reduce's argument checks and double-backward refusal, compared with torch."""

import warnings

import pytest

import retrograd
from tests.parity.harness import both, error_of

BAD_CALLS = [
    ("matrix_index", lambda lib, x, s: x.index_reduce(1, lib.tensor([[0, 2]]), s, "amax")),
    ("count", lambda lib, x, s: x.index_reduce(1, lib.tensor([0, 2, 1]), s, "amax")),
    ("float_index", lambda lib, x, s: x.index_reduce(1, lib.tensor([0.0, 2.0]), s, "amax")),
    ("out_of_range", lambda lib, x, s: x.index_reduce(1, lib.tensor([0, 7]), s, "amax")),
    ("negative", lambda lib, x, s: x.index_reduce(1, lib.tensor([0, -1]), s, "amax")),
    ("sum", lambda lib, x, s: x.index_reduce(1, lib.tensor([0, 2]), s, "sum")),
    ("slice_shape", lambda lib, x, s: x.index_reduce(1, lib.tensor([0, 2]), lib.ones(2, 2),
                                                     "prod")),
    ("dtype", lambda lib, x, s: x.index_reduce(1, lib.tensor([0, 2]), s.double(), "prod")),
]


@pytest.mark.parametrize("name, call", BAD_CALLS, ids=[n for n, _ in BAD_CALLS])
def test_bad_arguments_raise_torch_errors(name, call):
    def prog(lib):
        x = lib.ones(3, 4, requires_grad=True)
        s = lib.ones(3, 2, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return error_of(call, lib, x, s)

    both(prog)


def test_prod_double_backward_with_two_zeros_in_one_cell_is_refused():
    def prog(lib):
        x = lib.tensor([1.0], dtype=lib.float64, requires_grad=True)
        s = lib.tensor([0.0, 0.0], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = lib.index_reduce(x, 0, lib.tensor([0, 0]), s, "prod")
            gx, gs = lib.autograd.grad(out.sum(), (x, s), create_graph=True)
            return gx, gs, error_of(lambda: gs.sum().backward())

    both(prog)


def test_beta_warning_once():
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta"):
        import retrograd._ops.index_reduce as module

        module._warned = False
        retrograd.ones(2).index_reduce(0, retrograd.tensor([0]), retrograd.ones(1), "prod")
