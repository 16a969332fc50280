"""assert_close: torch.testing.assert_close's checks, tolerances and failure messages.

Inputs are compared pairwise: tensors (or NumPy arrays) with tensors, Python numbers with
numbers, and sequences / mappings element by element (a failure names the item, as in
"The failure occurred for item [1]['w']"). Tensors are first checked for the same shape, dtype,
device and (optionally) strides, then their values are compared in a common dtype with
|actual - expected| <= atol + rtol * |expected|.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from retrograd import _dtype as D
from retrograd._tensor import Tensor

# (rtol, atol) by dtype when neither is given; integers and bool compare exactly
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "float8_e4m3fn": (0.125, 1e-5),
               "float8_e5m2": (0.25, 1e-5)}


class _Mismatch(AssertionError):
    """A failed pair; `path` collects the container keys on the way out."""

    def __init__(self, message: str, exc_type: type = AssertionError) -> None:
        super().__init__(message)
        self.message = message
        self.exc_type = exc_type
        self.path = ""


def _tolerance(d: D.dtype) -> tuple[float, float]:
    return _TOLERANCES.get(d.name, (0.0, 0.0))


def _default_tolerances(*dtypes: D.dtype) -> tuple[float, float]:
    pairs = [_tolerance(d) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _as_tensor(x: Any) -> Tensor | None:
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        from retrograd._ops.creation import from_numpy

        return from_numpy(x)
    return None


def _index(flat: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _number(x: np.generic | float) -> Any:
    v = x.item() if isinstance(x, np.generic) else x
    return v


def _check_attributes(actual: Tensor, expected: Tensor, check_device: bool, check_dtype: bool,
                      check_stride: bool) -> None:
    def differ(name: str, a: Any, b: Any) -> None:
        raise _Mismatch(f"The values for attribute '{name}' do not match: {a} != {b}.")

    if actual.shape != expected.shape:
        differ("shape", actual.shape, expected.shape)
    if check_device and actual.device != expected.device:
        differ("device", actual.device, expected.device)
    if check_dtype and actual.dtype is not expected.dtype:
        differ("dtype", actual.dtype, expected.dtype)
    if check_stride and actual.stride() != expected.stride():
        differ("stride()", actual.stride(), expected.stride())


def _compare_tensors(actual: Tensor, expected: Tensor, rtol: float | None, atol: float | None,
                     equal_nan: bool, check_device: bool, check_dtype: bool,
                     check_stride: bool) -> None:
    _check_attributes(actual, expected, check_device, check_dtype, check_stride)
    if rtol is None:
        rtol, atol = _default_tolerances(actual.dtype, expected.dtype)
    common = D.promote_types(actual.dtype, expected.dtype)
    a, e = actual._data, expected._data
    exact = common.category != D._FLOAT and rtol == 0 and atol == 0
    # values compare in the common dtype (half precision stays half, as in torch)
    work = common.np if common.category == D._FLOAT else np.dtype(np.int64)
    a, e = a.astype(work), e.astype(work)
    floating = common.category == D._FLOAT
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if exact:
            ok = a == e
        else:
            ok = (np.abs(a - e) <= atol + rtol * np.abs(e)) | (a == e)
            if floating:
                ok &= np.isfinite(e) | (a == e)  # infinities must match exactly
                if equal_nan:
                    ok |= np.isnan(a) & np.isnan(e)
        if ok.all():
            return
    if a.ndim == 0:  # a 0-dim tensor is reported as a scalar
        _scalar_mismatch(a.reshape(()).item(), e.reshape(()).item(), rtol, atol, exact)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        raise _Mismatch(_tensor_message(a, e, ok, rtol, atol, exact, equal_nan))


def _tensor_message(a: np.ndarray, e: np.ndarray, ok: np.ndarray, rtol: float, atol: float,
                    exact: bool, equal_nan: bool) -> str:
    total = a.size
    bad = int(total - np.count_nonzero(ok))
    abs_diff = np.abs(a - e)
    if a.dtype.kind == "f" and equal_nan:
        abs_diff = np.where(np.isnan(a) & np.isnan(e), 0, abs_diff)
    floats = abs_diff.astype(np.float32) if abs_diff.dtype.kind != "f" else abs_diff
    rel_diff = floats / np.abs(e.astype(floats.dtype))
    shape = a.shape
    i_abs = int(np.argmax(abs_diff.ravel())) if not np.isnan(abs_diff).any() \
        else int(np.flatnonzero(np.isnan(abs_diff.ravel()))[0])
    flat_rel = rel_diff.ravel()
    i_rel = int(np.flatnonzero(np.isnan(flat_rel))[0]) if np.isnan(flat_rel).any() \
        else int(np.argmax(flat_rel))
    word = "equal" if exact else "close"
    lines = [f"Tensor-likes are not {word}!", "",
             f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"]
    max_abs = _number(abs_diff.ravel()[i_abs])
    max_rel = _number(flat_rel[i_rel])
    abs_line = f"Greatest absolute difference: {max_abs} at index {_index(i_abs, shape)}"
    rel_line = f"Greatest relative difference: {max_rel} at index {_index(i_rel, shape)}"
    if not exact:
        abs_line += f" (up to {atol} allowed)"
        rel_line += f" (up to {rtol} allowed)"
    return "\n".join(lines + [abs_line, rel_line])


def _compare_numbers(actual: Any, expected: Any, rtol: float | None, atol: float | None,
                     equal_nan: bool, check_dtype: bool) -> None:
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    if rtol is None:
        floaty = isinstance(actual, float) or isinstance(expected, float)
        rtol, atol = (1e-7, 1e-7) if floaty else (0.0, 0.0)
    if actual == expected:
        return
    if equal_nan and isinstance(actual, float) and isinstance(expected, float) and \
            math.isnan(actual) and math.isnan(expected):
        return
    diff = abs(actual - expected)
    if diff <= atol + rtol * abs(expected) and math.isfinite(expected):
        return
    _scalar_mismatch(actual, expected, rtol, atol, rtol == 0 and atol == 0)


def _scalar_mismatch(actual: Any, expected: Any, rtol: float, atol: float, exact: bool) -> None:
    diff = abs(actual - expected)
    rel = diff / abs(expected) if expected != 0 else (math.nan if diff == 0 else math.inf)
    word = "equal" if exact else "close"
    abs_line = f"Absolute difference: {diff}"
    rel_line = f"Relative difference: {rel}"
    if not exact:
        abs_line += f" (up to {atol} allowed)"
        rel_line += f" (up to {rtol} allowed)"
    raise _Mismatch(f"Scalars are not {word}!\n\nExpected {expected} but got {actual}.\n"
                    f"{abs_line}\n{rel_line}")


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, complex, np.number)) and not isinstance(x, np.ndarray)


def _compare(actual: Any, expected: Any, opts: dict) -> None:
    ta, te = _as_tensor(actual), _as_tensor(expected)
    if ta is not None and te is not None and \
            isinstance(actual, np.ndarray) == isinstance(expected, np.ndarray):
        _compare_tensors(ta, te, opts["rtol"], opts["atol"], opts["equal_nan"],
                         opts["check_device"], opts["check_dtype"], opts["check_stride"])
        return
    if _is_number(actual) and _is_number(expected):
        _compare_numbers(_number(actual), _number(expected), opts["rtol"], opts["atol"],
                         opts["equal_nan"], opts["check_dtype"])
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(f"The keys of the mappings do not match:\nMissing keys in the actual "
                            f"mapping: {sorted(set(expected) - set(actual), key=repr)}\n"
                            f"Additional keys in the actual mapping: "
                            f"{sorted(set(actual) - set(expected), key=repr)}")
        for k in expected:
            _item(actual[k], expected[k], opts, f"[{k!r}]")
        return
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(f"The length of the sequences mismatch: {len(actual)} != "
                            f"{len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _item(a, e, opts, f"[{i}]")
        return
    if actual is None and expected is None:
        return
    raise _Mismatch(f"No comparison pair was able to handle inputs of type {type(actual)} and "
                    f"{type(expected)}.", TypeError)


def _is_sequence(x: Any) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, (str, bytes))


def _item(actual: Any, expected: Any, opts: dict, key: str) -> None:
    try:
        _compare(actual, expected, opts)
    except _Mismatch as m:
        m.path = key + m.path
        raise


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, msg: str | Callable[[str], str] | None = None
                 ) -> None:
    """Raise AssertionError unless actual and expected are close (torch.testing.assert_close)."""
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    opts = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_device": check_device,
            "check_dtype": check_dtype, "check_stride": check_stride}
    try:
        _compare(actual, expected, opts)
    except _Mismatch as m:
        message = m.message
        if m.path:
            message += f"\n\nThe failure occurred for item {m.path}"
        if m.exc_type is AssertionError:
            if callable(msg):
                message = msg(message)
            elif msg is not None:
                message = msg
        raise m.exc_type(message) from None
