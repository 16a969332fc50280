"""Storages, data pointers and the in-place ops that change geometry or memory (t_, transpose_,
squeeze_, unsqueeze_, as_strided_, resize_, resize_as_, set_), compared with torch."""

import warnings

import numpy as np
import pytest
import torch

import retrograd

LIBS = [torch, retrograd]


def _both(fn):
    """Run fn(lib) on torch and retrograd; return both results."""
    return fn(torch), fn(retrograd)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e), str(e).replace("torch", "retrograd")
    return None


# --- storages -----------------------------------------------------------------------------


@pytest.mark.parametrize("lib", LIBS, ids=["torch", "retrograd"])
def test_views_share_one_storage(lib):
    a = lib.arange(12.0).reshape(3, 4)
    views = [a[1:], a[:, 2], a.t(), a[1:].view(-1), a.detach()]
    s = a.untyped_storage()
    assert s.nbytes() == s.size() == len(s) == 48 and s.element_size() == 1
    for v in views:
        vs = v.untyped_storage()
        assert vs.data_ptr() == s.data_ptr()
        assert v.data_ptr() == s.data_ptr() + v.storage_offset() * v.element_size()
    assert a[1:].storage_offset() == 4 and a[:, 2].storage_offset() == 2


def test_storage_values_and_repr():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0])
        assert x.untyped_storage().tolist() == [0, 0, 128, 63, 0, 0, 0, 64]
        assert x.untyped_storage()[2] == 128
    r = retrograd.tensor([1.0, 2.0])
    t = torch.tensor([1.0, 2.0])
    assert repr(r.untyped_storage()) == repr(t.untyped_storage()).replace("torch", "retrograd")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs, ts = r.storage(), t.storage()
    assert repr(rs) == repr(ts).replace("torch", "retrograd")
    assert (rs.size(), len(rs), rs.nbytes(), rs.element_size(), rs.tolist(), rs[1]) == \
        (ts.size(), len(ts), ts.nbytes(), ts.element_size(), ts.tolist(), ts[1])
    assert rs.dtype is retrograd.float32 and rs.data_ptr() == r.data_ptr()
    assert rs.untyped().nbytes() == 8


def test_typed_storage_warns_as_torch():
    import retrograd.storage as S

    S._warned.clear()
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        retrograd.zeros(2).storage()


def test_untyped_storage_constructor():
    for lib in LIBS:
        s = lib.UntypedStorage(8)
        assert s.nbytes() == 8
        x = lib.empty(0).set_(s, 0, (2,), (1,))
        x.fill_(1.5)
        assert x.untyped_storage().data_ptr() == s.data_ptr()
        assert s.tolist()[2:4] == [192, 63]


# --- in-place view ops --------------------------------------------------------------------

VIEW_CASES = {
    "t_": lambda b: b.t_(),
    "transpose_": lambda b: b.transpose_(0, 1),
    "swapdims_": lambda b: b.swapdims_(0, 1),
    "swapaxes_": lambda b: b.swapaxes_(1, 0),
    "squeeze_": lambda b: b.unsqueeze(0).squeeze_(),
    "squeeze_dim": lambda b: b.unsqueeze(0).squeeze_(0),
    "squeeze_dims": lambda b: b.unsqueeze(0).squeeze_((0,)),
    "unsqueeze_": lambda b: b.unsqueeze_(1),
    "as_strided_": lambda b: b.as_strided_((2, 2), (1, 2), 1),
}


@pytest.mark.parametrize("case", list(VIEW_CASES))
def test_inplace_view_ops_on_nonleaf(case):
    a = np.arange(12.0).reshape(3, 4)

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        b = x * 2
        r = VIEW_CASES[case](b)
        info = (r is b, r.grad_fn.name(), tuple(r.shape), r.stride(), r._version,
                [type(n).__name__ for n, _ in r.grad_fn.next_functions], r.tolist())
        w = lib.arange(float(r.numel()), dtype=lib.float64).reshape(r.shape)
        (r * w).sum().backward()
        return info, x.grad.tolist()

    t, r = _both(run)
    assert r[0][0] or case.startswith("squeeze")
    assert r[0][1:] == t[0][1:] and r[1] == t[1]


@pytest.mark.parametrize("case", list(VIEW_CASES))
def test_inplace_view_ops_without_grad(case):
    def run(lib):
        c = lib.arange(12.0).reshape(3, 4)
        v = c[1:]
        r = VIEW_CASES[case](v)
        r.mul_(10)  # writes through to c
        return (tuple(r.shape), r.stride(), r.storage_offset(), r._version, r._base is c,
                c.tolist(), r.tolist())

    t, r = _both(run)
    assert r == t


def test_inplace_view_op_on_a_view_of_a_nonleaf():
    def run(lib):
        x = lib.ones(2, 3, requires_grad=True)
        b = x * 2
        v = b[0]
        v.unsqueeze_(0)
        names = [v.grad_fn.name(), v._base is b, tuple(v.shape)]
        v.mul_(3)
        names.append(b.grad_fn.name())
        b.sum().backward()
        return names, x.grad.tolist()

    t, r = _both(run)
    assert r[1] == t[1]
    assert r[0][:3] == t[0][:3]
    assert r[0][3].endswith("CopySlices") and t[0][3].endswith("CopySlices")


def test_inplace_view_op_errors_match_torch():
    def cases(lib):
        a = lib.zeros(2, 3, requires_grad=True)
        return [lambda: a.t_(), lambda: a.unsqueeze_(0), lambda: a[0].unsqueeze_(0),
                lambda: lib.zeros(2, 3, 4).t_(), lambda: lib.zeros(4).as_strided_((3,), (2,)),
                lambda: lib.zeros(2, 3).squeeze_(5)]

    for tf, rf in zip(cases(torch), cases(retrograd)):
        assert _err(rf) == _err(tf)


def test_inplace_view_op_bumps_version_and_invalidates_saved():
    def run(lib):
        x = lib.ones(2, 3, requires_grad=True)
        b = x.exp()  # saves its result
        b.t_()
        try:
            b.sum().backward()
        except RuntimeError as e:
            return b._version, "modified by an inplace operation" in str(e)
        return b._version, False

    assert _both(run)[1] == _both(run)[0] == (1, True)


def test_inplace_view_op_under_no_grad_on_leaf():
    def run(lib):
        q = lib.zeros(2, 3, requires_grad=True)
        with lib.no_grad():
            q.t_()
        return tuple(q.shape), q.requires_grad, q.grad_fn, q.is_leaf, q._version

    t, r = _both(run)
    assert r == t


# --- resize_ / set_ -----------------------------------------------------------------------


def test_resize_keeps_or_grows_storage():
    def run(lib):
        y = lib.arange(6.0)
        out = [y.resize_(2, 2) is y, y.tolist(), y.stride(), y.untyped_storage().nbytes()]
        out += [y.resize_(3, 2).tolist(), y.resize_(1).tolist(), y.resize_(6).tolist()]
        out += [y.untyped_storage().nbytes(), y._version]
        p = y.data_ptr()
        y.resize_(10)
        out += [y.untyped_storage().nbytes(), y[:6].tolist(), y._version, y.data_ptr() != p]
        c = lib.zeros(2, 3).t()
        c.resize_(3, 2)
        out += [c.stride(), c._version]
        c.resize_(2, 3)
        out += [c.stride(), c._version]
        out.append(lib.arange(6.0).resize_as_(lib.zeros(2, 2)).tolist())
        z = lib.zeros(2, 3)
        z.resize_(2, 3, 1, 1, memory_format=lib.channels_last)
        out.append(z.stride())
        return out

    t, r = _both(run)
    assert r == t


def test_resize_of_a_view_stays_inside_its_base():
    def run(lib):
        base = lib.arange(10.0)
        v = base[2:]
        v.resize_(2, 2)
        v.fill_(-1)
        return v.storage_offset(), v._base is base, base.tolist(), v._version, base._version

    t, r = _both(run)
    assert r == t


def test_resize_errors_match_torch():
    def cases(lib):
        a = lib.zeros(2, 3, requires_grad=True)
        b = a * 2
        return [lambda: a.resize_(3, 3), lambda: b.resize_(3, 3), lambda: a[0].resize_(3),
                lambda: lib.zeros(3).resize_(2, memory_format=lib.channels_last),
                lambda: lib.zeros(3).resize_(-1)]

    for tf, rf in zip(cases(torch), cases(retrograd)):
        assert _err(rf) == _err(tf)
    a = retrograd.zeros(2, 3, requires_grad=True)
    with retrograd.no_grad(), pytest.raises(RuntimeError, match="cannot resize variables"):
        a.resize_(3, 3)


def test_set_to_tensor_storage_and_empty():
    def run(lib):
        d = lib.arange(5.0)
        e = d[1:]
        x = lib.empty(0)
        x.set_(d.untyped_storage(), 1, (2, 2), (1, 1))
        out = [x.tolist(), x._version, x.storage_offset(), x.stride(),
               x.untyped_storage().data_ptr() == d.untyped_storage().data_ptr()]
        x[0, 0] = 7
        out.append(d.tolist())
        x.set_(e)
        out += [tuple(x.shape), x._version, x.storage_offset(), x.data_ptr() == e.data_ptr(),
                x.is_set_to(e), e.is_set_to(x), d.is_set_to(e), x._base is None]
        x.set_()
        out += [tuple(x.shape), x._version, x.untyped_storage().nbytes()]
        y = lib.empty(0).set_(lib.arange(4.0).untyped_storage())
        out += [y.tolist(), y.storage_offset()]
        z = lib.empty(0).set_(lib.zeros(4).untyped_storage(), 2, (2, 3), (1, 1))
        out += [tuple(z.shape), z.untyped_storage().nbytes()]
        return out

    t, r = _both(run)
    assert r == t


def test_set_errors_match_torch():
    def cases(lib):
        a = lib.zeros(3, requires_grad=True)
        return [lambda: lib.zeros(3).set_(lib.zeros(3, dtype=lib.float64)),
                lambda: lib.zeros(3, dtype=lib.int64).set_(lib.zeros(3, dtype=lib.float16)),
                lambda: a.set_(lib.zeros(3))]

    for tf, rf in zip(cases(torch), cases(retrograd)):
        assert _err(rf) == _err(tf)


def test_set_on_nonleaf_refused_early():
    # torch accepts it and fails in backward ("the derivative for 'set_' is not implemented")
    b = retrograd.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="the derivative for 'set_' is not implemented"):
        b.set_(retrograd.zeros(3))


def test_as_strided_inplace_reaches_a_resized_storage():
    def run(lib):
        u = lib.arange(6.0)
        u.resize_(2)
        return u.untyped_storage().nbytes(), u.as_strided((6,), (1,)).tolist()

    t, r = _both(run)
    assert r == t


def test_data_ptr_follows_offset():
    for lib in LIBS:
        a = lib.arange(10.0, dtype=lib.float64)
        for v in (a[3:], a[::2][1:], a.view(2, 5)[1, 2:]):
            assert v.data_ptr() - a.data_ptr() == v.storage_offset() * 8


def test_data_assignment_replaces_the_storage():
    def run(lib):
        x = lib.empty(0).set_(lib.arange(6.0).untyped_storage(), 2, (2,), (1,))
        before = (x.storage_offset(), x.untyped_storage().nbytes())
        y = lib.ones(3)
        x.data = y
        return before, x.storage_offset(), x.untyped_storage().data_ptr() == \
            y.untyped_storage().data_ptr(), x.untyped_storage().nbytes()

    t, r = _both(run)
    assert r == t


def test_legacy_constructor_refuses_other_devices():
    with pytest.raises(RuntimeError, match="retrograd runs on the CPU"):
        retrograd.FloatTensor(2, device="cuda")


def test_as_strided_offsets_count_from_the_storage_after_set():
    def run(lib):
        x = lib.empty(0).set_(lib.arange(8.0).untyped_storage(), 2, (3,), (1,))
        out = [x.storage_offset(), x.as_strided((2,), (1,), x.storage_offset()).tolist(),
               x.as_strided((2,), (2,), 0).tolist(), x.as_strided((2,), (1,)).tolist()]
        v = x[1:]
        out += [v.storage_offset(), v.as_strided((2,), (1,), 5).tolist()]
        x.as_strided_((2,), (3,), 1)
        out += [x.tolist(), x.storage_offset()]
        return out

    t, r = _both(run)
    assert r == t


@pytest.mark.parametrize("make", [
    lambda: retrograd.arange(12.),
    lambda: retrograd.arange(12.).reshape(3, 4).t(),
    lambda: retrograd.arange(12.)[2:7],
    lambda: retrograd.arange(12.).reshape(3, 4)[:, 1:3].detach(),
    lambda: retrograd.arange(12.)[:0],
    lambda: retrograd.empty(0).set_(retrograd.arange(10.).untyped_storage(), 2, (3,), (2,)),
    lambda: retrograd.arange(6.).expand(4, 6),
], ids=["plain", "transposed", "slice", "detached view", "empty", "set_", "expanded"])
def test_storage_size_without_building_the_storage(make):
    from retrograd._ops.tangent_meta import storage_numel
    from retrograd.storage import storage_nbytes

    t = make()
    assert storage_nbytes(t) == t.untyped_storage().nbytes()
    assert storage_numel(t) == t.untyped_storage().nbytes() // t.element_size()
