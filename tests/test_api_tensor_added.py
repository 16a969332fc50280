"""Tensor methods and legacy linalg names added for torch programs, against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def same_error(build, exc=Exception):
    with pytest.raises(exc) as t_err:
        build(torch)
    with pytest.raises(exc) as o_err:
        build(retrograd)
    assert type(o_err.value) is type(t_err.value)
    assert str(o_err.value) == str(t_err.value).replace("torch.", "retrograd.")


def both(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(retrograd), build(torch)


def assert_same(o, t):
    assert o.dtype.name == str(t.dtype).replace("torch.", "")
    assert tuple(o.shape) == tuple(t.shape)
    assert (o.grad_fn and o.grad_fn.name()) == (t.grad_fn and t.grad_fn.name())
    np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6)


DATA = [[1.0, -2.0, float("nan")], [0.0, -0.0, 3.0]]


def test_is_cpu():
    assert retrograd.zeros(2).is_cpu is True


@pytest.mark.parametrize("name", ["real", "conj", "resolve_conj", "resolve_neg",
                                  "conj_physical", "conj_physical_"])
def test_real_tensor_identities_return_self(name):
    for lib in (torch, retrograd):
        x = lib.tensor(DATA, requires_grad=name != "conj_physical_")
        assert getattr(lib, name)(x) is x
        assert getattr(x, name)() is x if name != "real" else x.real is x


@pytest.mark.parametrize("name", ["is_conj", "is_neg"])
def test_bits_never_set(name):
    assert getattr(retrograd, name)(retrograd.ones(2)) is False
    assert getattr(retrograd.ones(2), name)() is False


def test_imag_of_real_tensor_raises():
    same_error(lambda lib: lib.ones(2).imag, RuntimeError)
    same_error(lambda lib: lib.imag(lib.ones(2)), RuntimeError)
    same_error(lambda lib: lib.conj(1), TypeError)


@pytest.mark.parametrize("data, dtype", [(DATA, "float32"), ([1, -2, 0], "int64"),
                                         ([True, False], "bool"), ([1.0, -3.0], "float16"),
                                         ([[-1.0, 2.0]], "float64")])
def test_angle_values_dtypes_and_gradient(data, dtype):
    o, t = both(lambda lib: lib.tensor(data, dtype=getattr(lib, dtype)))
    assert_same(retrograd.angle(o), torch.angle(t))
    if dtype.startswith("float"):
        o.requires_grad_()
        t.requires_grad_()
        ro, rt = o.angle(), t.angle()
        assert_same(ro, rt)
        ro.sum().backward()
        rt.sum().backward()
        np.testing.assert_array_equal(o.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("element", [1.0, 2, 5.0, True, float("nan")])
def test_contains_numbers(element):
    o, t = both(lambda lib: lib.tensor([[1.0, 2.0], [0.0, 4.0]]))
    assert (element in o) == (element in t)


def test_contains_tensors_and_errors():
    o, t = both(lambda lib: lib.tensor([[1.0, 2.0], [0.0, 4.0]]))
    assert (retrograd.tensor(2.0) in o) == (torch.tensor(2.0) in t) is True
    assert (retrograd.tensor([9.0, 4.0]) in o) == (torch.tensor([9.0, 4.0]) in t)
    for bad in ("a", [1.0], None):
        same_error(lambda lib, bad=bad: bad in lib.ones(2), RuntimeError)
    same_error(lambda lib: lib.ones(3) in lib.ones(2, 2), RuntimeError)


def test_reversed():
    o, t = both(lambda lib: lib.tensor(DATA, requires_grad=True))
    assert_same(reversed(o), reversed(t))
    s = retrograd.tensor(3.0)
    assert reversed(s) is s
    same_error(lambda lib: list(reversed(lib.tensor(3.0))), TypeError)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_apply_map_map2(dtype):
    def run(lib):
        d = getattr(lib, dtype)
        a = lib.arange(6).reshape(2, 3).to(d)
        b = lib.tensor([1, 0, 2]).to(d)
        base = a.clone()
        view = base[:, 1:]
        view.apply_(lambda v: v * 2.7 if not isinstance(v, bool) else not v)
        m = a.clone().map_(b, lambda x, y: x + y if not isinstance(x, bool) else x or y)
        m2 = a.clone().map2_(b, a.clone(), lambda x, y, z: x * y - z
                             if not isinstance(x, bool) else x and y)
        return base, m, m2

    for o, t in zip(*both(run)):
        assert_same(o, t)


def test_apply_checks_as_torch():
    for name, call in (("apply_", lambda x, lib: x.apply_(lambda v: v)),
                       ("map_", lambda x, lib: x.map_(lib.ones(2), lambda a, b: a)),
                       ("map2_", lambda x, lib: x.map2_(lib.ones(2), lib.ones(2), lambda *a: 0))):
        same_error(lambda lib, call=call: call(lib.ones(2, requires_grad=True), lib),
                   RuntimeError)
        assert name
    same_error(lambda lib: lib.ones(2).apply_(lambda v: "s"), TypeError)
    same_error(lambda lib: lib.ones(2).map_(lib.ones(2, dtype=lib.int64), lambda a, b: a),
               TypeError)
    same_error(lambda lib: lib.ones(2, 3).map_(lib.ones(2, 2), lambda a, b: a), RuntimeError)


def test_apply_bumps_the_version():
    x = retrograd.ones(3)
    v = x._version
    x.apply_(lambda a: a + 1)
    assert x._version == v + 1


@pytest.mark.parametrize("build", [
    lambda x: x.resize(3, 2), lambda x: x.resize(6), lambda x: x.t().resize(3, 2),
    lambda x: x.resize_as(x.new_zeros(1, 6)),
])
def test_resize_and_resize_as(build):
    o, t = both(lambda lib: lib.arange(6.0).reshape(2, 3).requires_grad_())
    ro, rt = both(lambda lib: build(o if lib is retrograd else t))
    assert_same(ro, rt)
    assert ro._is_view() == rt._is_view()
    ro.pow(2).sum().backward()
    rt.pow(2).sum().backward()
    np.testing.assert_array_equal(o.grad.numpy(), t.grad.numpy())


def test_resize_warns_and_refuses_other_sizes():
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        retrograd.ones(4).resize(2, 2)
    with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
        retrograd.ones(4).resize_as(retrograd.ones(2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args in ((7,), ((2, 3),), ([2, 3],)):
            same_error(lambda lib, args=args: lib.arange(6.0).resize(*args), RuntimeError)
        same_error(lambda lib: lib.ones(2).resize_as(lib.ones(3)), RuntimeError)


@pytest.mark.parametrize("data, size, fill", [
    ([[0, 1], [2, 0]], 4, -1), ([[0, 1], [2, 0]], 1, 9), ([0.0, 1.0], 3, -5), (1.0, 2, -1),
    (0.0, 2, -1), ([[0, 0]], 0, -1), ([[True, False, True]], 2, 7),
])
def test_nonzero_static(data, size, fill):
    o, t = both(lambda lib: lib.nonzero_static(lib.tensor(data), size=size, fill_value=fill))
    assert_same(o, t)
    o, t = both(lambda lib: lib.tensor(data).nonzero_static(size=size, fill_value=fill))
    assert_same(o, t)


def test_nonzero_static_errors():
    same_error(lambda lib: lib.nonzero_static(lib.ones(2), size=-1), RuntimeError)
    same_error(lambda lib: lib.nonzero_static(lib.ones(2), size=2.0), TypeError)


def test_const_data_ptr():
    x = retrograd.arange(4.0)
    assert x[1:].const_data_ptr() == x[1:].data_ptr()


@pytest.mark.parametrize("build", [
    lambda lib: lib.zeros(2, 3, 4), lambda lib: lib.zeros(2, 3, 4).transpose(0, 2),
    lambda lib: lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last),
    lambda lib: lib.zeros(2, 3, 4).permute(1, 2, 0), lambda lib: lib.zeros(5),
    lambda lib: lib.zeros(()), lambda lib: lib.zeros(3, 4)[:, ::2],
    lambda lib: lib.zeros(2, 1, 4), lambda lib: lib.zeros(4, 1).expand(4, 3),
])
def test_dim_order(build):
    o, t = both(build)
    assert o.dim_order() == t.dim_order()
    for check in (True, [], ["contiguous_format"], ["contiguous_format", "channels_last"]):
        def call(lib, check=check):
            arg = check if isinstance(check, bool) else [getattr(lib, f) for f in check]
            return build(lib).dim_order(ambiguity_check=arg)
        try:
            want = call(torch)
        except RuntimeError:
            same_error(call, RuntimeError)
        else:
            assert call(retrograd) == want
    same_error(lambda lib: build(lib).dim_order(ambiguity_check="x"), TypeError)
    same_error(lambda lib: build(lib).dim_order(ambiguity_check=[1]), TypeError)


def test_as_subclass_keeps_history():
    class Sub(retrograd.Tensor):
        pass

    x = retrograd.ones(2, requires_grad=True)
    s = x.as_subclass(Sub)
    assert type(s) is Sub and s.grad_fn.name() == "AliasBackward0"
    assert s.data_ptr() == x.data_ptr()
    (s * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    plain = retrograd.ones(2).as_subclass(Sub)
    assert plain.grad_fn is None and not plain.requires_grad
    same_error(lambda lib: lib.ones(2).as_subclass(int), TypeError)


# --- legacy linalg --------------------------------------------------------------------------

A = [[4.0, 1.0, 0.5], [2.0, 3.0, 1.0], [0.0, 1.0, 5.0]]


@pytest.mark.parametrize("shape, some", [((3, 3), True), ((4, 2), True), ((4, 2), False),
                                         ((2, 3, 2), False)])
def test_qr(shape, some):
    data = np.random.default_rng(0).standard_normal(shape)

    def run(lib):
        x = lib.tensor(data, requires_grad=True)
        q, r = lib.qr(x, some=some)
        if some or shape[-1] >= shape[-2]:
            (q.sum() + r.sum()).backward()
        else:  # torch's refusal, raised by both
            with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
                (q.sum() + r.sum()).backward()
        return q, r, x.grad, type(lib.qr(x)).__name__, x.qr(some)

    o, t = both(run)
    for a, b in zip(o[:3], t[:3]):
        if b is None:
            assert a is None
        else:
            assert_same(a, b)
    assert o[3] == t[3] == "qr"
    assert_same(o[4].R, t[4].R)


def test_lu_and_lu_solve():
    b = [[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]]

    def run(lib):
        a = lib.tensor(A, requires_grad=True)
        lu, piv = lib.lu(a)
        res = lib.lu(a, get_infos=True)
        x = lib.lu_solve(lib.tensor(b), lu, piv)
        x.sum().backward()
        return lu, piv, res.info, x, a.grad, lib.tensor(b).lu_solve(*a.lu()), res.LU

    for p, q in zip(*both(run)):
        assert_same(p, q)


def test_deprecation_warnings_once():
    from retrograd import _warn_always

    _warn_always._warned.difference_update({"qr", "lu", "lu_solve"})
    a = retrograd.tensor(A)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        retrograd.qr(a)
        retrograd.qr(a)
        retrograd.lu(a)
        retrograd.lu_solve(a, *retrograd.lu(a))
    msgs = [str(x.message) for x in w]
    assert len(msgs) == 3
    assert msgs[0].startswith("torch.qr is deprecated in favor of torch.linalg.qr")
    assert msgs[1].startswith("torch.lu is deprecated in favor of torch.linalg.lu_factor")
    assert msgs[2].startswith("torch.lu_solve is deprecated in favor of torch.linalg.lu_solve")
    assert all(x.filename == __file__ for x in w)


@pytest.mark.parametrize("name", ["matrix_rank", "solve", "lstsq", "symeig", "eig"])
def test_removed_functions_raise_torchs_message(name):
    # the messages name torch's functions, as the replacements to call
    def message(call):
        with pytest.raises(RuntimeError) as info:
            call()
        return str(info.value)

    want = message(lambda: getattr(torch, name)(torch.eye(2), torch.eye(2)))
    assert message(lambda: getattr(retrograd, name)(retrograd.eye(2), retrograd.eye(2))) == want
    if name != "matrix_rank":
        arg = () if name in ("eig", "symeig") else (None,)
        assert message(lambda: getattr(torch.eye(2), name)(*arg)) == want
        assert message(lambda: getattr(retrograd.eye(2), name)(*arg)) == want
    assert not hasattr(retrograd.Tensor, "matrix_rank")


@pytest.mark.parametrize("b, a", [((3,), (3, 3)), ((4, 4), (3, 3)), ((3, 4), (3, 2)),
                                  ((3, 4), (1, 3, 3))])
def test_triangular_solve_checks(b, a):
    def call(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.triangular_solve(lib.ones(b), lib.ones(a))

    try:
        want = call(torch)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as info:  # torch's text, its name included
            call(retrograd)
        assert str(info.value) == str(e)
    else:
        got = call(retrograd)
        assert tuple(got.solution.shape) == tuple(want.solution.shape)
        assert got.cloned_coefficient.stride() == want.cloned_coefficient.stride()


def test_triangular_solve_dtype_errors_and_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda lib: lib.triangular_solve(lib.ones(3, 2), lib.ones(3, 3).double()),
                   RuntimeError)
        same_error(lambda lib: lib.triangular_solve(lib.ones(3, 2, dtype=lib.int64),
                                                    lib.ones(3, 3, dtype=lib.int64)),
                   NotImplementedError)
    from retrograd import _warn_always

    _warn_always._warned.discard("triangular_solve")
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        r = retrograd.triangular_solve(retrograd.ones(2, 1), retrograd.eye(2))
    assert type(r).__name__ == "triangular_solve"
    assert r._fields == ("solution", "cloned_coefficient") if hasattr(r, "_fields") else True
