"""Device namespaces and process-wide switches answer as torch does on a CPU-only build."""

import io

import pytest
import torch

import retrograd
from retrograd import serialization


@pytest.mark.parametrize("lib", [torch, retrograd], ids=["torch", "retrograd"])
def test_cuda_queries(lib):
    assert lib.cuda.is_available() is False
    assert lib.cuda.device_count() == 0
    assert lib.cuda.is_initialized() is False
    lib.cuda.manual_seed(3)
    lib.cuda.manual_seed_all(3)
    lib.cuda.seed()
    assert lib.cuda.memory_allocated() == 0
    assert lib.cuda.is_bf16_supported() is False


def test_cuda_device_calls_raise_torchs_error():
    for name in ("current_device", "get_device_name", "synchronize"):
        with pytest.raises(AssertionError) as expected:
            getattr(torch.cuda, name)()
        if name == "synchronize":  # nothing to wait for on the CPU: accepted
            retrograd.cuda.synchronize()
            continue
        with pytest.raises(AssertionError) as got:
            getattr(retrograd.cuda, name)()
        assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("lib", [torch, retrograd], ids=["torch", "retrograd"])
def test_mps_and_accelerator(lib):
    assert lib.backends.mps.is_available() is False
    assert lib.backends.mps.is_built() is False
    assert lib.accelerator.is_available() is False
    assert lib.accelerator.current_accelerator() is None
    with pytest.raises(RuntimeError, match=r"Cannot execute deviceSynchronize\(\) without MPS"):
        lib.mps.synchronize()


@pytest.mark.parametrize("lib", [torch, retrograd], ids=["torch", "retrograd"])
def test_backend_flags_are_settable(lib):
    cudnn = lib.backends.cudnn
    old = (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32)
    assert old == (True, False, False, True)
    assert lib.backends.cuda.matmul.allow_tf32 is False
    try:
        cudnn.benchmark = True
        cudnn.deterministic = True
        lib.backends.cuda.matmul.allow_tf32 = True
        assert cudnn.benchmark and cudnn.deterministic and lib.backends.cuda.matmul.allow_tf32
        with cudnn.flags(enabled=False, deterministic=False):
            assert cudnn.enabled is False and cudnn.deterministic is False
        assert cudnn.enabled is True and cudnn.deterministic is True
    finally:
        cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32 = old
        lib.backends.cuda.matmul.allow_tf32 = False
    assert lib.backends.mkldnn.enabled is True
    lib.backends.openmp.is_available()


@pytest.mark.parametrize("lib", [torch, retrograd], ids=["torch", "retrograd"])
def test_default_device(lib):
    assert str(lib.get_default_device()) == "cpu"
    lib.set_default_device("cpu")
    lib.set_default_device(lib.device("cpu"))
    lib.set_default_device(None)
    assert lib.get_default_device() == lib.device("cpu")


def test_default_device_other_than_cpu_is_refused():
    for dev in ("cuda", "cuda:0", "mps"):
        with pytest.raises(RuntimeError, match="retrograd runs on the CPU"):
            retrograd.set_default_device(dev)
        with pytest.raises(RuntimeError, match="retrograd runs on the CPU"):
            retrograd.device(dev)
    assert retrograd.get_default_device().type == "cpu"


def _device_blocks(lib):
    seen = []
    with lib.device("cpu") as entered:
        seen.append((str(entered), str(lib.get_default_device())))
    with lib.device("meta"):
        seen.append(str(lib.get_default_device()))
        with lib.device("cpu"):
            seen.append(str(lib.get_default_device()))
        seen.append(str(lib.get_default_device()))
    seen.append(str(lib.get_default_device()))
    lib.set_default_device("meta")
    try:
        seen.append(str(lib.get_default_device()))
        with lib.device("cpu"):
            seen.append(str(lib.get_default_device()))
        seen.append(str(lib.get_default_device()))
    finally:
        lib.set_default_device(None)
    seen.append(str(lib.get_default_device()))
    return seen


def test_device_as_a_context_manager_sets_the_default_device_like_torch():
    assert _device_blocks(retrograd) == _device_blocks(torch)


def test_a_model_built_under_the_meta_device_initializes_after_to_empty():
    """The deferred-initialization recipe: build under the meta device, then to_empty and
    initialize. retrograd's tensors there are CPU tensors (no meta device), so the recipe
    gives what torch's gives."""
    def build(lib):
        with lib.device("meta"):
            model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
        assert model.to_empty(device="cpu") is model
        lib.manual_seed(0)
        with lib.no_grad():
            for p in model.parameters():
                p.fill_(0.5)
            model[1].running_mean.zero_()
            model[1].running_var.fill_(1.0)
        out = model(lib.ones(2, 3))
        return ({k: (tuple(v.shape), str(v.dtype).split(".")[1], v.requires_grad)
                 for k, v in model.state_dict(keep_vars=True).items()},
                type(model[0].weight).__name__, out.detach().numpy().tolist())

    assert build(retrograd) == build(torch)


@pytest.mark.parametrize("lib", [torch, retrograd], ids=["torch", "retrograd"])
def test_deterministic_switches(lib):
    assert lib.are_deterministic_algorithms_enabled() is False
    try:
        lib.use_deterministic_algorithms(True, warn_only=True)
        assert lib.are_deterministic_algorithms_enabled() is True
        assert lib.is_deterministic_algorithms_warn_only_enabled() is True
        assert lib.get_deterministic_debug_mode() == 1
        lib.set_deterministic_debug_mode("error")
        assert lib.get_deterministic_debug_mode() == 2
    finally:
        lib.use_deterministic_algorithms(False)
    assert lib.get_deterministic_debug_mode() == 0
    with pytest.raises(TypeError, match="argument 'mode' .* must be bool, not int"):
        lib.use_deterministic_algorithms(1)


@pytest.mark.parametrize("lib", [torch, retrograd], ids=["torch", "retrograd"])
def test_threads_and_matmul_precision(lib):
    n = lib.get_num_threads()
    assert n >= 1
    try:
        lib.set_num_threads(1)
        assert lib.get_num_threads() == 1
    finally:
        lib.set_num_threads(n)
    with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
        lib.set_num_threads(0)
    assert lib.get_num_threads() == n  # a refused call changes nothing
    assert lib.get_float32_matmul_precision() == "highest"
    lib.set_float32_matmul_precision("high")
    assert lib.get_float32_matmul_precision() == "high"
    lib.set_float32_matmul_precision("highest")


def test_onnx_export_says_it_is_not_supported():
    with pytest.raises(NotImplementedError, match="retrograd.onnx.export is not supported"):
        retrograd.onnx.export(retrograd.nn.Linear(2, 2), retrograd.zeros(1, 2), "m.onnx")


class Config:
    def __init__(self, lr, name):
        self.lr = lr
        self.name = name


def test_safe_globals_api_matches_torch():
    for lib in (torch, retrograd):
        before = lib.serialization.get_safe_globals()
        with lib.serialization.safe_globals([Config]):
            assert Config in lib.serialization.get_safe_globals()
        assert lib.serialization.get_safe_globals() == before


def _roundtrip(obj):
    buf = io.BytesIO()
    retrograd.save(obj, buf)
    buf.seek(0)
    return buf


def test_allowed_class_saves_and_loads():
    with serialization.safe_globals([Config]):
        buf = _roundtrip({"cfg": Config(0.1, "run"), "w": retrograd.ones(2), "cls": Config})
        out = retrograd.load(buf)
    assert isinstance(out["cfg"], Config) and out["cfg"].lr == 0.1 and out["cfg"].name == "run"
    assert out["cls"] is Config
    assert out["w"].tolist() == [1.0, 1.0]
    buf.seek(0)
    with pytest.raises(RuntimeError, match=r"Unsupported global: GLOBAL .*Config was not an "
                       r"allowed global by default. Please use `retrograd.serialization."
                       r"add_safe_globals\(\[Config\]\)`"):
        retrograd.load(buf)
    serialization.add_safe_globals([Config])
    try:
        buf.seek(0)
        assert retrograd.load(buf)["cfg"].name == "run"
    finally:
        serialization.clear_safe_globals()


def test_unregistered_objects_are_still_refused_by_save():
    with pytest.raises(TypeError, match="retrograd.save: cannot save .*add_safe_globals"):
        retrograd.save(Config(1, "a"), io.BytesIO())


def test_memory_placement_methods():
    for lib in (torch, retrograd):
        x = lib.zeros(2)
        assert (x.get_device(), x.is_pinned(), x.is_mps, x.is_cuda) == (-1, False, False, False)
        assert x.share_memory_() is x
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is "
                           "available."):
            x.pin_memory()
        assert lib.is_storage(x.untyped_storage()) and not lib.is_storage(x)
        assert lib.typename(x) == f"{lib.__name__}.FloatTensor"
        assert x.is_shared() is True  # moved into shared memory in place


@pytest.mark.parametrize("lib", [torch, retrograd], ids=["torch", "retrograd"])
def test_xpu_queries(lib):
    assert lib.xpu.is_available() is False
    assert lib.xpu.device_count() == 0
    lib.xpu.manual_seed(3)
    lib.xpu.manual_seed_all(3)


def test_set_num_threads_sets_numpys_blas_threads():
    from retrograd._numpy_blas import get_blas_threads

    before = get_blas_threads()
    if before is None:
        pytest.skip("NumPy's BLAS library is not one retrograd finds")
    n = retrograd.get_num_threads()
    try:
        retrograd.set_num_threads(1)
        assert get_blas_threads() == 1
    finally:
        retrograd.set_num_threads(n)
    assert get_blas_threads() == min(n, before)


def test_utils_data_exports_distributed_sampler():
    import retrograd.utils.data as data
    import retrograd.utils.data.distributed as distributed

    assert data.DistributedSampler is distributed.DistributedSampler
    assert "DistributedSampler" in data.__all__ and "DistributedSampler" in dir(torch.utils.data)
