"""Shape, indexing and construction functions compared with torch: values, dtypes, strides,
errors (type and message), edge cases, in-place forms, and inputs left unchanged on error."""

import warnings

import numpy as np
import pytest
import torch

import retrograd


def run(fn):
    """fn(lib) on both libraries: (retrograd's, torch's) result or raised exception."""
    out = []
    for lib in (retrograd, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - compared below
            out.append(e)
    return out


def as_list(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def same(fn, strides: bool = True):
    mine, theirs = run(fn)
    if isinstance(theirs, Exception):
        assert type(mine) is type(theirs), f"{type(mine).__name__}: {mine}"
        assert str(mine) == str(theirs)
        return
    assert not isinstance(mine, Exception), f"{type(mine).__name__}: {mine}"
    if not isinstance(theirs, (torch.Tensor, tuple, list)):
        assert mine == theirs
        return
    for m, t in zip(as_list(mine), as_list(theirs), strict=True):
        assert tuple(m.shape) == tuple(t.shape)
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-6)
        if strides and t.numel():
            assert m.stride() == t.stride()


X = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def x(lib, a=X):
    return lib.tensor(a.copy())


# --- nonzero / argwhere ------------------------------------------------------------------------

@pytest.mark.parametrize("data", [[[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]], 3.0, 0.0, [True, False, True],
                                  [[1, 0], [0, 1]], [float("nan"), 0.0]])
def test_nonzero_and_argwhere(data):
    same(lambda lib: lib.nonzero(lib.tensor(data)))
    same(lambda lib: lib.argwhere(lib.tensor(data)))
    same(lambda lib: lib.tensor(data).nonzero(as_tuple=True))
    same(lambda lib: lib.nonzero(lib.tensor(data), as_tuple=True))


def test_nonzero_empty_and_out():
    same(lambda lib: lib.nonzero(lib.zeros(0, 3)), strides=False)
    same(lambda lib: lib.nonzero(x(lib).t()))

    def with_out(lib):
        out = lib.empty(0, dtype=lib.long)
        lib.nonzero(x(lib) > 5, out=out)
        return out

    same(with_out)


def test_nonzero_refuses_vmap():
    with pytest.raises(RuntimeError, match="dynamic shape"):
        retrograd.func.vmap(retrograd.nonzero)(retrograd.ones(2, 3))
    with pytest.raises(RuntimeError, match="dynamic shape"):
        retrograd.func.vmap(retrograd.argwhere)(retrograd.ones(2, 3))


# --- meshgrid / cartesian_prod / combinations ---------------------------------------------------

def test_meshgrid():
    for indexing in ("ij", "xy"):
        same(lambda lib, ix=indexing: lib.meshgrid(lib.arange(3.0), lib.arange(2.0),
                                                   lib.arange(4.0), indexing=ix))
    same(lambda lib: lib.meshgrid([lib.tensor(1.0), lib.arange(2.0)], indexing="xy"))
    same(lambda lib: lib.meshgrid(lib.arange(3.0), indexing="ab"))
    same(lambda lib: lib.meshgrid(lib.arange(3.0), lib.arange(3), indexing="ij"))
    same(lambda lib: lib.meshgrid(indexing="ij"))


def test_meshgrid_warns_without_indexing():
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        a, b = retrograd.meshgrid(retrograd.arange(2.0), retrograd.arange(3.0))
    assert a.shape == (2, 3)


@pytest.mark.parametrize("r", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations(r, with_replacement):
    same(lambda lib: lib.combinations(lib.arange(4.0), r, with_replacement), strides=False)


def test_combinations_and_cartesian_prod_errors():
    same(lambda lib: lib.combinations(lib.arange(3.0), -1))
    same(lambda lib: lib.combinations(lib.ones(2, 2)))
    same(lambda lib: lib.combinations(lib.tensor([1, 2, 3]), 2, with_replacement=True))
    same(lambda lib: lib.cartesian_prod(lib.arange(2), lib.arange(3), lib.arange(2)))
    same(lambda lib: lib.cartesian_prod(lib.ones(2, 2), lib.arange(3.0)))
    t = retrograd.arange(3.0)
    assert retrograd.cartesian_prod(t) is t


# --- diff ---------------------------------------------------------------------------------------

def test_diff():
    same(lambda lib: lib.diff(x(lib), n=2, dim=0))
    same(lambda lib: lib.diff(x(lib), append=x(lib)[:, :1], prepend=x(lib)[:, :2]))
    same(lambda lib: lib.diff(lib.tensor([True, False, False, True])))
    same(lambda lib: lib.diff(lib.tensor([1, 4, 2])))
    same(lambda lib: lib.diff(x(lib), n=0))
    same(lambda lib: lib.diff(x(lib), n=7), strides=False)
    for bad in (lambda lib: lib.diff(lib.tensor(1.0)), lambda lib: lib.diff(x(lib), n=-1),
                lambda lib: lib.diff(x(lib), prepend=lib.tensor([1.0])),
                lambda lib: lib.diff(x(lib), prepend=lib.ones(2, 1)),
                lambda lib: lib.diff(x(lib), dim=2)):
        same(bad)


# --- products, trace, rot90 ---------------------------------------------------------------------

def test_kron_inner_addr():
    same(lambda lib: lib.kron(lib.tensor([[1, 2], [3, 4]]), lib.tensor([[0, 1], [1, 0]])))
    same(lambda lib: lib.kron(x(lib), lib.arange(3.0)))
    same(lambda lib: lib.inner(x(lib), x(lib)))
    same(lambda lib: lib.inner(x(lib), lib.arange(3.0)))
    same(lambda lib: lib.addr(x(lib), lib.arange(3.0), lib.arange(4.0), beta=2, alpha=3))
    same(lambda lib: lib.addr(lib.full((3, 4), float("nan")), lib.ones(3), lib.ones(4), beta=0))
    same(lambda lib: lib.addr(lib.ones(3, 4, dtype=lib.long), lib.ones(3), lib.ones(4)))
    bools = (lambda lib: lib.addr(lib.ones(3, 4, dtype=lib.bool), lib.ones(3, dtype=lib.bool),
                                  lib.zeros(4, dtype=lib.bool), beta=False))
    same(bools)
    for bad in (
            lambda lib: lib.addr(lib.ones(3, 4, dtype=lib.long), lib.ones(3, dtype=lib.long),
                                 lib.ones(4, dtype=lib.long), alpha=2.5),
            lambda lib: lib.addr(lib.ones(3, 4, dtype=lib.int32), lib.ones(3, dtype=lib.int32),
                                 lib.ones(4, dtype=lib.int32), beta=True),
            lambda lib: lib.addr(x(lib), lib.ones(3, 1), lib.ones(4)),
            lambda lib: lib.addr(x(lib), lib.ones(4), lib.ones(3)),
            lambda lib: lib.addr(lib.ones(2, 3, 4), lib.ones(3), lib.ones(4))):
        same(bad)


def test_addr_inplace():
    same(lambda lib: x(lib).addr_(lib.arange(3.0), lib.arange(4.0), alpha=2))
    for bad in (lambda lib: lib.ones(3, 1).addr_(lib.ones(3), lib.ones(4)),
                lambda lib: lib.ones(4).addr_(lib.ones(3), lib.ones(4)),
                lambda lib: lib.ones(3, 4, dtype=lib.long).addr_(lib.ones(3), lib.ones(4))):
        same(bad)
    t = retrograd.ones(3, 4, dtype=retrograd.long)
    with pytest.raises(RuntimeError):
        t.addr_(retrograd.ones(3), retrograd.ones(4))
    assert (t.numpy() == 1).all()


def test_trace_and_rot90():
    same(lambda lib: lib.trace(lib.arange(6).reshape(2, 3)))
    same(lambda lib: lib.trace(lib.ones(0, 3)))
    same(lambda lib: lib.trace(lib.ones(3)))
    same(lambda lib: lib.trace(lib.ones(2, 2, dtype=lib.bool)))
    for k in range(-5, 6):
        same(lambda lib, k=k: lib.rot90(x(lib), k))
        same(lambda lib, k=k: x(lib).t().rot90(k, [1, 0]))
    same(lambda lib: lib.rot90(lib.ones(2, 3, 4), 1, [0, 2]))
    for bad in (lambda lib: lib.rot90(x(lib), 1, [0]), lambda lib: lib.rot90(x(lib), 1, [1, 1]),
                lambda lib: lib.rot90(lib.ones(3)), lambda lib: lib.rot90(x(lib), 1, [0, 2])):
        same(bad)


def test_rot90_copies():
    t = retrograd.ones(2, 2)
    r = retrograd.rot90(t, 4)
    r.add_(1)
    assert (t.numpy() == 1).all()


# --- splits -------------------------------------------------------------------------------------

def test_tensor_split_and_named_splits():
    t3 = lambda lib: lib.arange(24.0).reshape(2, 3, 4)  # noqa: E731
    same(lambda lib: lib.tensor_split(t3(lib), 3, dim=2))
    same(lambda lib: lib.tensor_split(t3(lib), [1, 5], dim=2))
    same(lambda lib: lib.tensor_split(t3(lib), [3, 1], 2), strides=False)
    same(lambda lib: lib.tensor_split(t3(lib), lib.tensor(3), dim=2))
    same(lambda lib: lib.tensor_split(t3(lib), lib.tensor([1, 3]), 2))
    same(lambda lib: t3(lib).tensor_split(sections=2))
    same(lambda lib: lib.tensor_split(t3(lib), indices=[-1]))
    same(lambda lib: lib.hsplit(t3(lib), [1]))
    same(lambda lib: lib.hsplit(lib.ones(5), 5))
    same(lambda lib: lib.vsplit(t3(lib), 2))
    same(lambda lib: lib.dsplit(t3(lib), 2))
    for bad in (lambda lib: lib.tensor_split(t3(lib), 0),
                lambda lib: lib.tensor_split(lib.tensor(1.0), 2),
                lambda lib: lib.tensor_split(t3(lib), lib.tensor([[1]])),
                lambda lib: lib.tensor_split(t3(lib), lib.tensor([1], dtype=lib.int32)),
                lambda lib: lib.hsplit(t3(lib), 2), lambda lib: lib.vsplit(lib.ones(4), 2),
                lambda lib: lib.dsplit(lib.ones(2, 2), 1),
                lambda lib: lib.hsplit(lib.tensor(1.0), 1)):
        same(bad)


# --- repeat_interleave --------------------------------------------------------------------------

def test_repeat_interleave():
    same(lambda lib: lib.repeat_interleave(x(lib), 2))
    same(lambda lib: x(lib).repeat_interleave(3, dim=1))
    same(lambda lib: x(lib).repeat_interleave(lib.tensor([1, 0, 2]), dim=0))
    same(lambda lib: x(lib).repeat_interleave(lib.tensor(2), dim=1))
    same(lambda lib: lib.repeat_interleave(lib.tensor([1, 0, 3])))
    same(lambda lib: lib.repeat_interleave(lib.tensor([1, 2]), output_size=3))
    same(lambda lib: x(lib).repeat_interleave(0, dim=1), strides=False)
    for bad in (lambda lib: lib.repeat_interleave(x(lib), -1),
                lambda lib: lib.repeat_interleave(x(lib), lib.tensor([1, -2, 1]), 0),
                lambda lib: lib.repeat_interleave(x(lib), lib.tensor([1, 2]), 0),
                lambda lib: lib.repeat_interleave(x(lib), lib.tensor([[1]]), 0),
                lambda lib: lib.repeat_interleave(x(lib), lib.tensor([1.0, 2.0, 1.0]), 0),
                lambda lib: lib.repeat_interleave(lib.tensor(2)),
                lambda lib: x(lib).repeat_interleave(lib.tensor([1, 2, 1]), 0, output_size=5)):
        same(bad)


# --- index_fill / index_copy / put / masked_scatter ---------------------------------------------

I02 = [0, 2]


@pytest.mark.parametrize("call", [
    lambda lib: x(lib).index_fill(1, lib.tensor([-1]), 9.0),
    lambda lib: x(lib).index_fill(1, lib.tensor(1), 9.0),
    lambda lib: x(lib).index_fill(0, lib.tensor(I02), lib.tensor(2.0, dtype=lib.float64)),
    lambda lib: lib.arange(4).index_fill(0, lib.tensor(I02), 2.5),
    lambda lib: lib.tensor(1.0).index_fill(0, lib.tensor([0]), 3.0),
    lambda lib: x(lib).index_fill(1, lib.tensor([4]), 9.0),
    lambda lib: x(lib).index_fill(1, lib.tensor([1], dtype=lib.int32), 9.0),
    lambda lib: x(lib).index_fill(1, lib.tensor([[1]]), 9.0),
    lambda lib: x(lib).index_fill(1, lib.tensor(I02), lib.tensor([1.0])),
    lambda lib: x(lib).index_copy(1, lib.tensor(I02), lib.ones(3, 2)),
    lambda lib: lib.tensor(1.0).index_copy(0, lib.tensor([0]), lib.tensor(5.0)),
    lambda lib: x(lib).index_copy(1, lib.tensor([4, 0]), lib.ones(3, 2)),
    lambda lib: x(lib).index_copy(1, lib.tensor([-1, 0]), lib.ones(3, 2)),
    lambda lib: x(lib).index_copy(1, lib.tensor(I02), lib.ones(3, 3)),
    lambda lib: x(lib).index_copy(1, lib.tensor(I02), lib.ones(2, 2)),
    lambda lib: x(lib).index_copy(1, lib.tensor(I02), lib.ones(3, 2, dtype=lib.float64)),
    lambda lib: x(lib).index_copy(1, lib.tensor(I02, dtype=lib.int32), lib.ones(3, 2)),
    lambda lib: x(lib).index_copy(1, lib.tensor([I02]), lib.ones(3, 2)),
    lambda lib: x(lib).index_copy(0, lib.tensor([1]), lib.ones(1, 4, 1)),
    lambda lib: x(lib).put(lib.tensor([0, -1]), lib.tensor([5.0, 6.0])),
    lambda lib: x(lib).put(lib.tensor([0, 0]), lib.tensor([5.0, 6.0]), accumulate=True),
    lambda lib: x(lib).t().put(lib.tensor([1, 6]), lib.tensor([5.0, 6.0])),
    lambda lib: x(lib).put(lib.tensor([0]), lib.tensor([5.0, 6.0])),
    lambda lib: x(lib).put(lib.tensor([12]), lib.tensor([5.0])),
    lambda lib: x(lib).put(lib.tensor([1]), lib.tensor([5.0], dtype=lib.float64)),
    lambda lib: x(lib).put(lib.tensor([1], dtype=lib.int32), lib.tensor([5.0])),
    lambda lib: x(lib).masked_scatter(x(lib) > 5, lib.arange(100.0, 112.0)),
    lambda lib: lib.ones(4).masked_scatter(x(lib) > 5, lib.arange(100.0, 112.0).reshape(2, 6)),
    lambda lib: x(lib).masked_scatter(x(lib) > 5, lib.ones(3)),
    lambda lib: x(lib).masked_scatter((x(lib) > 5).int(), lib.ones(12)),
    lambda lib: x(lib).masked_scatter(x(lib) > 5, lib.ones(12, dtype=lib.float64)),
    lambda lib: lib.ones(4).masked_scatter_(x(lib) > 5, lib.ones(12)),
    lambda lib: x(lib).masked_scatter_(lib.tensor([True, False, True, False]),
                                       lib.arange(100.0, 112.0)),
])
def test_index_writes(call):
    same(call)


@pytest.mark.parametrize("write", [
    lambda t: t.index_fill_(1, retrograd.tensor([4]), 9.0),
    lambda t: t.index_copy_(1, retrograd.tensor([0, 9]), retrograd.ones(3, 2)),
    lambda t: t.put_(retrograd.tensor([0, 12]), retrograd.ones(2)),
    lambda t: t.masked_scatter_(retrograd.ones(3, 4, dtype=retrograd.bool), retrograd.ones(3)),
])
def test_failed_writes_leave_self_unchanged(write):
    t = retrograd.tensor(X.copy())
    with pytest.raises((RuntimeError, IndexError)):
        write(t)
    np.testing.assert_array_equal(t.numpy(), X)


def test_index_write_nodes():
    a = retrograd.tensor(X.copy(), requires_grad=True)
    v = retrograd.tensor(2.0, requires_grad=True)
    i = retrograd.tensor(I02)
    assert type(a.index_fill(1, i, 1.0).grad_fn).__name__ == "IndexFillBackward0"
    assert type(a.index_fill(1, i, v).grad_fn).__name__ == "IndexFillBackward1"
    assert type(a.clone().index_fill_(1, i, v).grad_fn).__name__ == "IndexFillBackward1"
    assert type(a.clone().put_(i, retrograd.ones(2)).grad_fn).__name__ == "PutBackward0"
    # the value's gradient counts each filled slice once, repeated indices or not
    g, = retrograd.autograd.grad(a.index_fill(1, retrograd.tensor([1, 1]), v).sum(), v)
    assert g.item() == 3.0


# --- constructions ------------------------------------------------------------------------------

def test_triangle_indices():
    for fn in ("tril_indices", "triu_indices"):
        for args in ((3, 4), (4, 3, -1), (3, 3, 10), (3, 3, -10), (0, 3)):
            same(lambda lib, fn=fn, args=args: getattr(lib, fn)(*args), strides=False)
        same(lambda lib, fn=fn: getattr(lib, fn)(3, 3, dtype=lib.int32))
        same(lambda lib, fn=fn: getattr(lib, fn)(-1, 3))
        same(lambda lib, fn=fn: getattr(lib, fn)(3, -1))
        same(lambda lib, fn=fn: getattr(lib, fn)(3, 3, dtype=lib.float32))


def test_block_diag_and_vander():
    same(lambda lib: lib.block_diag(lib.ones(2), lib.ones(2, 3, dtype=lib.int64),
                                    lib.tensor(5.0), lib.ones(0, 2)))
    same(lambda lib: lib.block_diag(), strides=False)
    same(lambda lib: lib.block_diag(lib.ones(2, 2, 2)))
    same(lambda lib: lib.vander(lib.tensor([1, 2, 3])))
    same(lambda lib: lib.vander(lib.tensor([1.0, 2.0, -0.5]), N=4, increasing=True))
    same(lambda lib: lib.vander(lib.tensor([True, False])))
    same(lambda lib: lib.vander(lib.tensor([2, 3], dtype=lib.int8), N=3))
    same(lambda lib: lib.vander(lib.tensor([1.0, 2.0]), N=0), strides=False)
    same(lambda lib: lib.vander(lib.ones(2, 2)))
    same(lambda lib: lib.vander(lib.ones(2), N=-1))


def test_vander_gradient():
    # torch's vander backward fails (its cumprod input is overwritten); the gradient here is
    # checked against the powers' derivatives instead
    t = retrograd.tensor([0.5, -1.5, 2.0], dtype=retrograd.float64, requires_grad=True)
    assert retrograd.autograd.gradcheck(lambda a: retrograd.vander(a, 4), (t,))
    g, = retrograd.autograd.grad(retrograd.vander(t, 3).sum(), t)
    np.testing.assert_allclose(g.numpy(), 2 * t.detach().numpy() + 1)


# --- *_scatter --------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib: x(lib).diagonal_scatter(lib.ones(2), 2),
    lambda lib: x(lib).t().diagonal_scatter(lib.ones(3)),
    lambda lib: x(lib).diagonal_scatter(lib.ones(2)),
    lambda lib: lib.select_scatter(x(lib), lib.ones(3), 1, -1),
    lambda lib: x(lib).select_scatter(lib.ones(3), 1, 4),
    lambda lib: x(lib).select_scatter(lib.ones(4, dtype=lib.int64), 0, 0),
    lambda lib: x(lib).slice_scatter(lib.ones(3, 2), 1, 0, 4, 2),
    lambda lib: lib.slice_scatter(x(lib), lib.ones(1, 4), start=2),
    lambda lib: x(lib).slice_scatter(lib.ones(3, 3), 1, 0, 2),
    lambda lib: x(lib).as_strided_scatter(lib.ones(2, 2), (2, 2), (4, 1), 1),
    lambda lib: x(lib).as_strided_scatter(lib.ones(3), (2, 2), (4, 1)),
])
def test_scatter_views(call):
    same(call)


def test_as_strided_scatter_gradient_is_the_complement():
    # torch gives self the window's gradient; the derivative of self outside the window is 1
    a = retrograd.tensor(X.astype(np.float64), requires_grad=True)
    s = retrograd.ones(2, 2, dtype=retrograd.float64, requires_grad=True)
    assert retrograd.autograd.gradcheck(
        lambda p, q: p.as_strided_scatter(q, (2, 2), (4, 1), 1), (a, s))


# --- small methods ------------------------------------------------------------------------------

def test_small_methods():
    same(lambda lib: lib.zeros(5, 3).fill_diagonal_(2, wrap=True))
    same(lambda lib: lib.zeros(2, 5).fill_diagonal_(1, wrap=True))
    same(lambda lib: lib.zeros(2, 2, 2).fill_diagonal_(1))
    same(lambda lib: lib.zeros(3, 3, dtype=lib.int64).fill_diagonal_(2.7))
    same(lambda lib: lib.zeros(2, 3, 2).fill_diagonal_(1))
    same(lambda lib: lib.zeros(3).fill_diagonal_(1))
    same(lambda lib: x(lib).tril_(-1))
    same(lambda lib: x(lib).triu_(1))
    same(lambda lib: lib.ones(3).triu_())
    same(lambda lib: x(lib).sum_to_size(1, 4))
    same(lambda lib: lib.ones(2, 3, 4).sum_to_size([3, 1]))
    same(lambda lib: x(lib).sum_to_size(lib.Size([4])))
    same(lambda lib: x(lib).sum_to_size(2, 4))
    same(lambda lib: x(lib).sum_to_size(1, 2, 3, 4))
    same(lambda lib: x(lib).narrow_copy(1, 1, 2))
    same(lambda lib: lib.narrow_copy(x(lib).t(), 0, -2, 2))
    same(lambda lib: x(lib).narrow_copy(1, 3, 2))
    same(lambda lib: x(lib).narrow_copy(1, 5, 0))
    same(lambda lib: lib.adjoint(lib.ones(2, 3, 4)))
    same(lambda lib: lib.ones(3).adjoint())
    same(lambda lib: lib.multiply(x(lib), 2))
    same(lambda lib: lib.subtract(x(lib), 2, alpha=3))
    same(lambda lib: x(lib).multiply_(x(lib)))
    same(lambda lib: x(lib).subtract_(x(lib), alpha=2))
    same(lambda lib: lib.ones(3, dtype=lib.long).subtract_(1.5))
    t = retrograd.ones(3, 4)
    assert t.sum_to_size(3, 4) is t


def test_predicates():
    for data in ([0.0], 3, float("nan"), [], [1, 2]):
        same(lambda lib, data=data: lib.tensor(data).is_nonzero())
        same(lambda lib, data=data: lib.is_nonzero(lib.tensor(data)))
    same(lambda lib: lib.ones(3, 4).is_same_size(lib.ones(3, 4)))
    same(lambda lib: lib.is_same_size(lib.ones(3, 4), lib.ones(4, 3)))
    for dtype in ("bool", "uint8", "int8", "int64", "float16", "bfloat16", "float32"):
        same(lambda lib, dtype=dtype: lib.ones(1, dtype=getattr(lib, dtype)).is_signed())
    same(lambda lib: lib.is_signed(lib.ones(1)))


def test_no_runtime_warnings_from_new_ops():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        retrograd.diff(retrograd.tensor([1.0, float("inf")]))
        retrograd.kron(retrograd.ones(2), retrograd.ones(2))
