"""Why a counted test does not pass on retrograd: out of scope, deliberate, or to do.

Rules are tried in order; the first whose pattern matches the test id (or, for REASON_RULES,
the failure) decides. Anything unmatched is "todo" with its failure as the reason.
"""

from __future__ import annotations

import re

# (test-id pattern, status, reason)
ID_RULES = [
    # autograd.functional's tests run each case on a LoggingTensor too (a __torch_dispatch__
    # wrapper subclass); their names must not fall under the forward-mode `jvp_` rule below
    (r"^TestAutogradFunctional\..*_logging_tensor$", "todo",
     "LoggingTensor needs __torch_dispatch__ wrapper subclasses (Tensor._make_wrapper_subclass)"),
    (r"sparse|to_dense|coalesce", "scope", "sparse tensors: retrograd is dense only"),
    (r"complex|Complex|conj|_cdouble|_cfloat|view_as_real|_complex128|_complex64", "scope",
     "complex dtypes: retrograd has real dtypes only"),
    (r"cuda|_mps|xpu|_device_|pin_memory|non_blocking|stream", "scope",
     "other devices: retrograd runs on the CPU only"),
    (r"mkldnn|_jit|script|trace_|_named_tensor|named_tensor|quantiz", "scope",
     "TorchScript, MKL-DNN, named tensors and quantization have no meaning here"),
    (r"cpp|_C_|extension|dispatch_key|autograd_multiple_dispatch|MultipleDispatch", "scope",
     "C++ internals (torch._C, dispatch keys, C++ extensions) that have no meaning here"),
]

# (failure pattern, status, reason)
REASON_RULES = [
    (r"missing: torch\.jit", "scope", "TorchScript has no meaning in a Python library"),
    (r"missing: torch\._C\.|missing: torch\._C$|module 'retrograd\._C(\.\w+)?' has no attribute",
     "scope",
     "uses torch._C internals that have no meaning in a Python library"),
    (r"to_sparse|sparse_coo|to_dense", "scope", "sparse tensors: retrograd is dense only"),
    (r"complex|view_as_real|view_as_complex|dtype must be retrograd.dtype, not Missing", "scope",
     "complex dtypes: retrograd has real dtypes only"),
]

# tests decided one by one: test id -> (status, reason)
BY_TEST: dict = {
    "TestAutograd.test_attribute_deletion": (
        "deliberate", "`del t._grad_fn` is not refused: intercepting deletion would need a "
        "Tensor.__delattr__, which makes every attribute write on every tensor ~6x slower in "
        "CPython (NOTE [No __delattr__ on Tensor]); the other refusals hold"),
    "TestAutograd.test_no_grad_copy": (
        "deliberate", "a gradient a custom Function's backward returns is never stolen as .grad: "
        "the Function may have kept it (ctx, a global), and retrograd decides by ownership, not "
        "by reference counts (NOTE [Gradient ownership]); torch steals it when its count says "
        "no one else holds it, so here .grad is a copy"),
    "TestAutograd.test_grad_fn_attr_bindings": (
        "scope", "its last section saves complex tensors (complex dtypes are out of scope); the "
        "sections before it pass but for _saved_bias_sym_sizes_opt of convolution and "
        "AsStridedBackward0's _saved_storage_offset"),
    "TestAutograd.test_grad_fn_input_metadata": (
        "scope", "nested tensors: retrograd has dense tensors only"),
    "TestAutograd.test_calculate_shape_util": (
        "scope", "nested tensors: retrograd has dense tensors only"),
    "TestAutograd.test_gradcheck_test_outputs": (
        "scope", "MKL-DNN tensors have no meaning here (torch skips it without MKL-DNN)"),
    "TestAutogradDeviceTypeCPU.test_profiler_emit_itt_cpu": (
        "scope", "Intel ITT instrumentation is not available to a Python library"),
    "TestAutogradDeviceTypeCPU.test_to_r_to_c_cpu": (
        "scope", "complex dtypes: retrograd has real dtypes only"),
}


def classify(test_id: str, failure: str) -> tuple:
    if test_id in BY_TEST:
        return BY_TEST[test_id]
    for pattern, status, reason in ID_RULES:
        if re.search(pattern, test_id):
            return status, reason
    for pattern, status, reason in REASON_RULES:
        if re.search(pattern, failure):
            return status, reason
    return "todo", failure
