"""retrograd: PyTorch's autograd in Python on NumPy, with PyTorch's API.

    import retrograd as torch
"""

from retrograd._dtype import (
    dtype, float16, half, bfloat16, float32, float64, double, float8_e4m3fn, float8_e5m2,
    int8, int16, short, int32, int64, long, uint8, uint16, uint32, uint64, bool,
    get_default_dtype, set_default_dtype,
    promote_types, result_type as _result_type, can_cast,
)
from retrograd._dtype import float, int
from retrograd._device import device
from retrograd._memory_format import (
    memory_format, contiguous_format, channels_last, channels_last_3d, preserve_format,
)
from retrograd._layout import (
    layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn, jagged,
)
from retrograd._tensor import Tensor, Size
from retrograd._legacy import (
    tensortype, FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor,
    ShortTensor, IntTensor, LongTensor, BoolTensor,
)
from retrograd.storage import UntypedStorage, TypedStorage
from retrograd._legacy_storage import LEGACY_STORAGES as _LEGACY_STORAGES, Storage
from retrograd import _ops
from retrograd._ops.registry import _NAMESPACE as _ns
from retrograd import ops
from retrograd.autograd.grad_mode import (
    no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode,
    is_inference_mode_enabled,
)
from retrograd._warn_always import set_warn_always, is_warn_always_enabled
from retrograd import autograd
from retrograd import _C
from retrograd import _VF
from retrograd._ops.random import Generator, default_generator, manual_seed
from retrograd import testing
from retrograd import nn
from retrograd._ops.reduction import return_types
from retrograd import linalg
from retrograd import optim
from retrograd import amp
from retrograd.amp.autocast_mode import (
    autocast, is_autocast_enabled, set_autocast_enabled, get_autocast_dtype, set_autocast_dtype,
    is_autocast_cache_enabled, set_autocast_cache_enabled, clear_autocast_cache,
    autocast_increment_nesting, autocast_decrement_nesting, is_autocast_cpu_enabled,
    set_autocast_cpu_enabled, get_autocast_cpu_dtype, set_autocast_cpu_dtype,
    get_autocast_gpu_dtype, set_autocast_gpu_dtype,
)
from retrograd._compile import compile
from retrograd import compiler
from retrograd.serialization import save, load
from retrograd import serialization
from retrograd._config import (
    set_default_device, get_default_device, use_deterministic_algorithms,
    are_deterministic_algorithms_enabled, is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode, get_deterministic_debug_mode, set_num_threads,
    get_num_threads, set_num_interop_threads, get_num_interop_threads,
    set_float32_matmul_precision, get_float32_matmul_precision,
)
from retrograd import accelerator, backends, cpu, cuda, mps, onnx, xpu
import retrograd.utils.data
import retrograd.utils.hooks
import retrograd.utils.checkpoint
import retrograd.utils.dlpack
from retrograd import distributed
from retrograd import multiprocessing
from retrograd import futures
from retrograd import jit
from retrograd import _logging
from retrograd._memory import retain_freed_memory as _retain_freed_memory
from retrograd import random, torch_version, version
from retrograd import quasirandom, types
from retrograd.amp import GradScaler
from retrograd._global_api import (
    has_lapack, has_mkl, has_openmp, has_spectral, is_anomaly_enabled, set_anomaly_enabled,
    is_anomaly_check_nan_enabled, set_flush_denormal, set_default_tensor_type, is_distributed,
    get_device, sym_not, sym_float, sym_int, sym_max, sym_min, sym_sum, sym_ite, sym_sqrt,
    _sym_sqrt, _sym_cos, _sym_cosh, _sym_sin, _sym_sinh, _sym_tan, _sym_tanh, _sym_asin,
    _sym_acos, _sym_atan, _sym_log2, SymInt, SymFloat, SymBool, sym_constrain_range,
    sym_constrain_range_for_size, sym_fresh_size,
)

globals().update(_ns)
globals().update(_LEGACY_STORAGES)  # FloatStorage, LongStorage, ...
from retrograd._lobpcg import lobpcg  # noqa: E402
from retrograd.nn.modules.rnn_cell import (  # noqa: E402
    gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell,
)
from retrograd.nn.modules.recurrence import gru, lstm, rnn_relu, rnn_tanh  # noqa: E402
from retrograd._streams import Event, Stream, get_device_module  # noqa: E402
from retrograd._higher_order_ops import cond, while_loop  # noqa: E402
import retrograd.utils.weak  # noqa: E402, F401  (torch.utils.weak is there once torch is)
from retrograd import _lowrank  # noqa: E402
from retrograd._lowrank import pca_lowrank, svd_lowrank  # noqa: E402

# torch's constants
from math import e, inf, nan, pi  # noqa: E402

newaxis = None  # x[:, retrograd.newaxis], as NumPy's
_retain_freed_memory()  # NOTE [Retaining freed memory]


def __getattr__(name: str):
    if name in ("profiler", "distributions", "fx", "library", "func", "signal",  # loaded on
                "_vmap_internals", "overrides", "_dynamo", "functional", "hub",  # first use
                "export", "_inductor"):
        import importlib

        return importlib.import_module(f"retrograd.{name}")
    raise AttributeError(f"module 'retrograd' has no attribute '{name}'")


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: "int | None" = None):
    """torch.vmap: torch.func.vmap (loaded on first use, as retrograd.func is)."""
    from retrograd.func import vmap as func_vmap

    return func_vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def result_type(tensor1, tensor2):
    return _result_type(tensor1, tensor2)


def is_tensor(obj) -> "bool":
    return isinstance(obj, Tensor)


def is_storage(obj) -> "bool":
    return isinstance(obj, (UntypedStorage, TypedStorage))


def typename(obj) -> str:
    from retrograd.nn.modules.module import _typename

    return _typename(obj)


def is_inference(input: Tensor) -> "bool":
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_inference()


def numel(input: Tensor):
    return input.numel()


__version__ = torch_version.__version__

from retrograd import _einops_support  # noqa: E402

_einops_support.register()
