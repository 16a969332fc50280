"""Names public programs use beside the ops: layouts (retrograd.strided and torch's others),
retrograd.cpu (torch.cpu's device-generic API and its deprecated amp names),
retrograd.functional and retrograd.newaxis, compared with torch."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

LAYOUTS = ["strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc",
           "_mkldnn", "jagged"]


@pytest.mark.parametrize("name", LAYOUTS)
def test_layout_objects(name):
    ours, theirs = getattr(retrograd, name), getattr(torch, name)
    assert isinstance(ours, retrograd.layout)
    assert repr(ours) == repr(theirs).replace("torch.", "retrograd.")
    assert str(ours) == str(theirs).replace("torch.", "retrograd.")
    assert (ours == retrograd.strided) == (theirs == torch.strided)
    assert pickle.loads(pickle.dumps(ours)) is ours
    assert pickle.loads(pickle.dumps(theirs)) is theirs


def test_tensor_layout_is_strided():
    t = retrograd.ones(2, 3)
    assert t.layout is retrograd.strided and t.t().layout is retrograd.strided
    assert t.layout == "strided"  # the name still compares equal
    assert torch.ones(2).layout is torch.strided


FACTORIES = [
    lambda lib, lay: lib.zeros(2, layout=lay), lambda lib, lay: lib.ones(2, layout=lay),
    lambda lib, lay: lib.empty(2, layout=lay), lambda lib, lay: lib.full((2,), 1.0, layout=lay),
    lambda lib, lay: lib.arange(3, layout=lay), lambda lib, lay: lib.eye(2, layout=lay),
    lambda lib, lay: lib.linspace(0, 1, 3, layout=lay),
    lambda lib, lay: lib.rand(2, layout=lay), lambda lib, lay: lib.randn(2, layout=lay),
    lambda lib, lay: lib.randint(0, 3, (2,), layout=lay),
    lambda lib, lay: lib.randperm(3, layout=lay),
    lambda lib, lay: lib.zeros_like(lib.ones(2), layout=lay),
    lambda lib, lay: lib.randn_like(lib.ones(2), layout=lay),
    lambda lib, lay: lib.ones(2).new_zeros(3, layout=lay),
    lambda lib, lay: lib.tril_indices(3, 3, layout=lay),
    lambda lib, lay: lib.hann_window(4, layout=lay),
    lambda lib, lay: lib.scalar_tensor(1.0, layout=lay),
]


@pytest.mark.parametrize("i", range(len(FACTORIES)))
def test_factories_make_strided_tensors_and_refuse_other_layouts(i):
    make = FACTORIES[i]
    ours, theirs = make(retrograd, retrograd.strided), make(torch, torch.strided)
    assert ours.layout is retrograd.strided and list(ours.shape) == list(theirs.shape)
    assert list(make(retrograd, None).shape) == list(theirs.shape)
    with pytest.raises(RuntimeError, match="strided .dense. tensors only; layout "
                                           "retrograd.sparse_csc"):
        make(retrograd, retrograd.sparse_csc)
    with pytest.raises(TypeError, match="argument 'layout' must be retrograd.layout, not int"):
        make(retrograd, 3)
    with pytest.raises(TypeError, match="layout"):  # torch's wording varies by function
        make(torch, 3)


def test_cpu_module_answers_as_torch():
    for name in torch.cpu.__all__:
        assert hasattr(retrograd.cpu, name), name
    assert retrograd.cpu.is_available() is torch.cpu.is_available() is True
    assert retrograd.cpu.device_count() == torch.cpu.device_count() == 1
    assert retrograd.cpu.current_device() == torch.cpu.current_device() == "cpu"
    assert retrograd.cpu.synchronize() is None and retrograd.cpu.set_device("cpu") is None
    ours_caps, theirs_caps = retrograd.cpu.get_capabilities(), torch.cpu.get_capabilities()
    assert ours_caps["architecture"] == theirs_caps["architecture"]
    for flag in ("avx2", "avx512_f", "fma3", "sse4_2"):
        if flag in ours_caps:  # x86: NumPy's detection agrees with torch's
            assert ours_caps[flag] == theirs_caps[flag], flag


def test_cpu_streams_and_events():
    s = retrograd.cpu.Stream()
    default = retrograd.cpu.current_stream()
    with retrograd.cpu.stream(s):
        assert retrograd.cpu.current_stream() is s
        with retrograd.cpu.StreamContext(None):
            assert retrograd.cpu.current_stream() is s
    assert retrograd.cpu.current_stream() is default
    ev = s.record_event()
    assert isinstance(ev, retrograd.cpu.Event) and ev.query()
    s.wait_event(ev)
    s.wait_stream(default)
    ev.synchronize()


def test_cpu_amp_names_warn_and_cast_as_torch():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((4, 2)).astype(np.float32)
    results = []
    for lib in (retrograd, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ctx = lib.cpu.amp.autocast()
            scaler = lib.cpu.amp.GradScaler()
        messages = [str(c.message) for c in caught if c.category is FutureWarning]
        assert messages == [
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cpu', args...)` instead.",
            "`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
            "`torch.amp.GradScaler('cpu', args...)` instead."]
        with ctx:
            out = lib.tensor(x) @ lib.tensor(w)
        results.append((str(out.dtype).split(".")[-1], out.float().numpy(), scaler.is_enabled()))
    assert results[0][0] == results[1][0] == "bfloat16"
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-2, atol=1e-2)
    assert results[0][2] == results[1][2]


def test_functional_module_and_newaxis():
    import retrograd.functional as F

    for name in F.__all__:
        assert getattr(F, name) is getattr(retrograd, name)
        assert name in torch.functional.__all__
    a = F.einsum("ij,jk->ik", retrograd.ones(2, 3), retrograd.ones(3, 2))
    np.testing.assert_array_equal(a.numpy(), np.full((2, 2), 3.0))
    assert retrograd.newaxis is None is torch.newaxis
    assert retrograd.ones(3)[:, retrograd.newaxis].shape == (3, 1)


FLAGS = ["is_sparse", "is_sparse_csr", "is_nested", "is_mkldnn", "is_xla", "is_ipu", "is_maia",
         "is_mtia", "is_vulkan", "is_quantized", "is_meta", "is_cuda"]


def test_dense_tensors_answer_layout_questions_as_torch():
    ours, theirs = retrograd.ones(2, 3), torch.ones(2, 3)
    for flag in FLAGS:
        assert getattr(ours, flag) is getattr(theirs, flag) is False, flag
    assert ours.dense_dim() == theirs.dense_dim() == 2
    assert ours.sparse_dim() == theirs.sparse_dim() == 0
    assert ours.to_dense() is ours and theirs.to_dense() is theirs
    assert ours.to_dense(retrograd.float64).dtype is retrograd.float64
    assert ours.dequantize() is ours and theirs.dequantize() is theirs
    assert ours.is_distributed() is theirs.is_distributed() is False


@pytest.mark.parametrize("name", ["values", "indices", "is_coalesced", "coalesce",
                                  "crow_indices", "col_indices", "ccol_indices", "row_indices"])
def test_sparse_accessors_raise_torchs_error(name):
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.ones(2), name)()
    with pytest.raises(RuntimeError) as ours:
        getattr(retrograd.ones(2), name)()
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["to_sparse", "to_sparse_coo", "to_sparse_csr",
                                  "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc",
                                  "to_mkldnn"])
def test_conversions_to_other_layouts_say_so(name):
    with pytest.raises(RuntimeError, match="strided .dense. tensors only"):
        getattr(retrograd.ones(2, 2), name)()


def test_reinforce_and_module_load_as_torch():
    with pytest.raises(RuntimeError) as theirs:
        torch.ones(1).reinforce(1)
    with pytest.raises(RuntimeError) as ours:
        retrograd.ones(1).reinforce(1)
    assert str(ours.value) == str(theirs.value)
    for lib in (retrograd, torch):
        p, new = lib.ones(2, requires_grad=True), lib.full((2,), 3.0)
        with lib.no_grad():
            loaded = p.module_load(new)
        assert not loaded.requires_grad and loaded.tolist() == [3.0, 3.0] == p.tolist()
        fresh = p.module_load(lib.full((2,), 5.0, requires_grad=True), assign=True)
        assert fresh.tolist() == [5.0, 5.0] and not fresh.requires_grad


def test_symbolic_size_names():
    for name in ("SymInt", "SymFloat", "SymBool"):
        cls = getattr(retrograd, name)
        assert not isinstance(3, cls) and not isinstance(3, getattr(torch, name))
        with pytest.raises(TypeError, match="no symbolic sizes"):
            cls(3)
    assert retrograd.sym_fresh_size(3) == torch.sym_fresh_size(3) == 3
    for args, kwargs in [((5,), {"min": 0, "max": 10}), ((11,), {"min": 0, "max": 10}),
                         ((11,), {"max": 10}), ((-1,), {"min": 0}), ((3,), {})]:
        for fn in ("sym_constrain_range", "sym_constrain_range_for_size"):
            results = []
            for lib in (retrograd, torch):
                try:
                    results.append(("ok", getattr(lib, fn)(*args, **kwargs)))
                except RuntimeError as e:
                    results.append(("raised", str(e)))
            assert results[0] == results[1], (fn, args, kwargs)
