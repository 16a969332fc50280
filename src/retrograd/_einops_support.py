"""einops on retrograd tensors: `einops.rearrange/reduce/repeat/einsum/pack/unpack` find their
backend by scanning einops' AbstractBackend subclasses for one whose framework is imported, so
defining one here (when einops is installed) is all they need. einops' layers
(`einops.layers.torch`) are torch modules and stay torch's."""

from __future__ import annotations

import importlib.util
from typing import Any

# einops finds backends through AbstractBackend.__subclasses__(), which holds its subclasses
# weakly: this reference keeps the class alive
_backend_class: Any = None


def _define_backend() -> Any:
    from einops._backends import AbstractBackend

    import retrograd

    class RetrogradBackend(AbstractBackend):
        framework_name = "retrograd"

        def is_appropriate_type(self, tensor: Any) -> bool:
            return isinstance(tensor, retrograd.Tensor)

        def from_numpy(self, x: Any) -> Any:
            variable = retrograd.from_numpy(x)
            if self.is_float_type(variable):
                variable.requires_grad = True  # (as einops' torch backend: its tests use it)
            return variable

        def to_numpy(self, x: Any) -> Any:
            return x.detach().numpy()

        def arange(self, start: int, stop: int) -> Any:
            return retrograd.arange(start, stop, dtype=retrograd.int64)

        def reduce(self, x: Any, operation: str, reduced_axes: Any) -> Any:
            if operation in ("min", "max"):
                return getattr(x, "a" + operation)(dim=reduced_axes)
            if operation in ("sum", "mean"):
                return getattr(x, operation)(dim=reduced_axes)
            if operation in ("any", "all", "prod"):  # one dimension at a time, as torch's
                for i in sorted(reduced_axes)[::-1]:
                    x = getattr(x, operation)(dim=i)
                return x
            raise NotImplementedError("Unknown reduction ", operation)

        def transpose(self, x: Any, axes: Any) -> Any:
            return x.permute(axes)

        def stack_on_zeroth_dimension(self, tensors: list) -> Any:
            return retrograd.stack(tensors)

        def add_axes(self, x: Any, n_axes: int, pos2len: dict) -> Any:
            repeats = [-1] * n_axes
            for axis_position, axis_length in pos2len.items():
                x = self.add_axis(x, axis_position)
                repeats[axis_position] = axis_length
            return x.expand(repeats)

        def tile(self, x: Any, repeats: Any) -> Any:
            return x.repeat(repeats)

        def concat(self, tensors: list, axis: int) -> Any:
            return retrograd.cat(tensors, dim=axis)

        def add_axis(self, x: Any, new_position: int) -> Any:
            return retrograd.unsqueeze(x, new_position)

        def is_float_type(self, x: Any) -> bool:
            return x.dtype.is_floating_point

        def einsum(self, pattern: str, *x: Any) -> Any:
            return retrograd.einsum(pattern, *x)

    return RetrogradBackend


def register() -> None:
    """Define the backend if einops is installed (a broken einops leaves retrograd alone)."""
    global _backend_class
    if _backend_class is not None or importlib.util.find_spec("einops") is None:
        return
    try:
        _backend_class = _define_backend()
    except Exception:  # noqa: BLE001 - an einops we cannot extend: einops reports it at use
        return
