"""torch.testing.assert_allclose: the pre-1.12 comparison, kept for programs that still call it
(it warns, as torch's does, and compares through assert_close)."""

from __future__ import annotations

from typing import Any

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor

DEPRECATED = ("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in "
              "a future release. Please use `torch.testing.assert_close()` instead. You can find "
              "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.")
# its own defaults, looser than assert_close's for float32; other dtypes compare exactly
_PRECISIONS = {D.float16: (1e-3, 1e-3), D.float32: (1e-4, 1e-5), D.float64: (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    from retrograd._ops.creation import tensor
    from retrograd.testing._comparison import assert_close

    _ws.warn(DEPRECATED, FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_PRECISIONS.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
