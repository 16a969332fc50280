"""Devices: retrograd computes on the CPU; `device` exists so torch code that passes one runs."""

from __future__ import annotations


class device:
    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        name, _, idx = str(type).partition(":")
        if name not in ("cpu", "meta"):
            raise RuntimeError(f"retrograd runs on the CPU; device '{type}' is not available")
        self.type = name
        self.index = int(idx) if idx else index

    def __repr__(self) -> str:
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)

    # `with device(...)`: the default device inside the block (torch.set_default_device's)
    def __enter__(self) -> device:
        from retrograd import _config

        _entered.append(_config.get_default_device())
        _config.set_default_device(self)
        return self

    def __exit__(self, *exc: object) -> None:
        from retrograd import _config

        _config.set_default_device(_entered.pop())


def checked(x: object) -> device:
    """x (a device, its name, or an index) as a device. An index names a CUDA device, as in
    torch, so it is refused like every device but the CPU and meta."""
    if isinstance(x, device):
        return x
    if type(x) is int:
        x = f"cuda:{x}"
    return device(x)  # type: ignore[arg-type]


_entered: list[device] = []  # the default devices that enclosing `with device(...)` replaced


cpu = device("cpu")
