"""Samples for the ops added for torch's API names: angle on real inputs."""

import numpy as np

from tests.op_samples import Sample, arr, pos


def _tri(n, *batch):
    # a strong diagonal keeps the triangular solves well conditioned
    return arr(*batch, n, n) + 3 * np.eye(n)


def _quiet(fn):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def chain_matmul3(lib, a, b, c):
    return _quiet(lambda: lib.chain_matmul(a, b, c))


def chain_matmul1(lib, a):
    return _quiet(lambda: lib.chain_matmul(a))


def frobenius(lib, a):
    return _quiet(lambda: lib.frobenius_norm(a, (0, 1)))


def nuclear(lib, a):
    return _quiet(lambda: lib.nuclear_norm(a, True))


def nuclear_batch(lib, a):
    return _quiet(lambda: lib.nuclear_norm(a, (1, 2)))


def gradient_all(lib, x):
    return lib.gradient(x, spacing=[0.5, 2.0], edge_order=2)


def gradient_coordinates(lib, x, t):
    # the sample coordinates are differentiated too
    return lib.gradient(x, spacing=(t,), dim=1, edge_order=2) + lib.gradient(
        x, spacing=(t,), dim=-1)


def _gen(lib):
    return lib.Generator().manual_seed(0)


def poisson_draw(lib, rates):
    return lib.poisson(rates, generator=_gen(lib))


def poisson_times0(lib, rates):
    # the zero derivative confirmed through a product with 0, the node still in the graph
    return lib.poisson(rates, generator=_gen(lib)) * 0


def scaled_binomial(lib, x, count, prob):
    # binomial's derivative is not implemented: only x is differentiated
    return x * lib.binomial(count, prob, generator=_gen(lib))


def scaled_native_shuffle(lib, x, y):
    # native_channel_shuffle has no derivative in torch: only x is differentiated
    return x * lib.native_channel_shuffle(y, 2)


def scaled_embedding_renorm(lib, x, weight):
    # embedding_renorm_'s derivative is not implemented: only x is differentiated; the rows
    # renormalised in place are those of a copy, so the sample's input keeps its values
    rows = lib.tensor([0, 2, 2])
    return x * lib.embedding_renorm_(weight.clone(), rows, 0.5, 2.0)


def triangular_solve_both(lib, b, a):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple(lib.triangular_solve(b, a, upper=False, transpose=True))


def resize_then_scale(lib, x):
    # the deprecated non-in-place resize is a reshape with its own ResizeBackward node
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.resize(3, 2) * 2


def detach_copy_const(lib, x, a):
    """detach_copy has no derivative (torch's NotImplemented node): its result is a constant
    factor here."""
    return x * lib.detach_copy(a)


SAMPLES = [
    Sample("angle", (arr(3, 4),)),
    Sample("Tensor.angle", (arr(5, noncontig=False),), name="method"),
    Sample("angle", (arr(),), name="scalar"),
    Sample(resize_then_scale, (arr(2, 3),)),
    Sample("triangular_solve", (arr(3, 2), _tri(3))),
    Sample("triangular_solve", (arr(2, 3, 2), _tri(3), False, True, True), name="batch_b"),
    Sample("triangular_solve", (arr(3, 1), _tri(3, 2), True, True, False), name="batch_a"),
    Sample("Tensor.triangular_solve", (arr(4, 3), _tri(4), False), name="method"),
    Sample(triangular_solve_both, (arr(3, 2), _tri(3))),
    Sample("view_copy", (arr(3, 4), (2, 6))),
    Sample("view_copy", (arr(3, 4), (-1,)), name="flat"),
    Sample("permute_copy", (arr(2, 3, 4), (2, 0, 1))),
    Sample("permute_copy", (arr(3, 4, noncontig=True), (1, 0)), name="noncontig"),
    Sample("transpose_copy", (arr(2, 3, 4), 0, 2)),
    Sample("t_copy", (arr(3, 4),)),
    Sample("t_copy", (arr(5),), name="vector"),
    Sample("expand_copy", (arr(3, 1), (2, 3, 4))),
    Sample("select_copy", (arr(3, 4), 1, -1)),
    Sample("slice_copy", (arr(5, 4), 0, 1, None, 2)),
    Sample("slice_copy", (arr(5, 4),), name="defaults"),
    Sample("squeeze_copy", (arr(3, 1, 4),)),
    Sample("squeeze_copy", (arr(3, 1, 4), 1), name="dim"),
    Sample("squeeze_copy", (arr(3, 1, 1), [1, 2]), name="dims"),
    Sample("unsqueeze_copy", (arr(3, 4), -1)),
    Sample("unbind_copy", (arr(3, 4), 1)),
    Sample("split_copy", (arr(5, 4), 2)),
    Sample("split_copy", (arr(4, 5), 3, 1), name="dim1"),
    Sample("split_with_sizes_copy", (arr(6, 2), [1, 2, 3])),
    Sample("unfold_copy", (arr(4, 5), 1, 2, 1)),
    Sample("alias_copy", (arr(3, 4),)),
    Sample("fill", (arr(3, 4), 2.5)),
    Sample("fill", (arr(3, 4), arr()), name="tensor_value"),
    Sample("as_strided_copy", (arr(3, 4), (2, 2), (1, 2), 1)),
    Sample("as_strided_copy", (arr(3, 4), (3, 3), (1, 1)), name="overlap"),
    Sample(detach_copy_const, (arr(3, 4), arr(3, 4)), requires_grad=(True, False)),
    Sample("column_stack", ([arr(3), arr(3, 2), arr(3)],)),
    Sample("column_stack", ([arr(), arr()],), name="scalars"),
    Sample("trapezoid", (arr(3, 4),)),
    Sample("trapezoid", (arr(3, 4),), {"dx": 0.5, "dim": 0}, name="dx"),
    Sample("trapezoid", (arr(3, 4), pos(4)), name="x"),
    Sample("trapezoid", (arr(3, 4), arr(3, 4)), {"dim": 0}, name="x_full"),
    Sample("trapz", (arr(2, 5), pos(5)), name="x"),
    Sample("trapz", (arr(2, 5),), {"dx": 2.0}, name="dx"),
    Sample("cumulative_trapezoid", (arr(3, 4),)),
    Sample("cumulative_trapezoid", (arr(3, 4),), {"dx": 0.5, "dim": 0}, name="dx"),
    Sample("cumulative_trapezoid", (arr(3, 4), pos(4)), name="x"),
    Sample(chain_matmul3, (arr(2, 3), arr(3, 4), arr(4, 2))),
    Sample(chain_matmul1, (arr(2, 3),)),
    Sample(frobenius, (arr(3, 4),), check_node=False),
    Sample(nuclear, (arr(3, 4),)),
    Sample(nuclear_batch, (arr(2, 3, 3),)),
    Sample("gradient", (arr(4, 5),)),
    Sample("gradient", (arr(4, 5),), {"dim": 1, "spacing": 2.0}, name="dim"),
    Sample(gradient_all, (arr(3, 4),)),
    Sample(gradient_coordinates, (arr(3, 5), np.array([0.0, 0.5, 1.7, 2.0, 3.5]))),
    Sample(poisson_draw, (pos(2, 3, low=1.0, high=4.0),), random=True),
    Sample(poisson_times0, (pos(3, low=1.0, high=4.0),), random=True),
    Sample(scaled_binomial, (arr(3), np.array([3.0, 10.0, 0.0]), np.array([0.2, 0.5, 0.9])),
           requires_grad=(True, False, False), random=True),
    Sample(scaled_native_shuffle, (arr(2, 4, 3), arr(2, 4, 3)), requires_grad=(True, False)),
    Sample(scaled_embedding_renorm, (arr(4, 3), arr(4, 3)), requires_grad=(True, False)),
]
