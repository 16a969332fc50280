"""torch.Stream and torch.Event, the device-generic stream API, for the CPU (and meta), and
torch.get_device_module.

torch's CPU backend keeps a stream as a name (device type, index -1, id 0) and has no events:
recording one raises, as does waiting on a stream (which records one); queries say the work is
done and synchronizing returns at once. These behave the same, so device-agnostic code takes
the same paths it takes on torch's CPU build.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from retrograd._device import device as _device

NO_EVENTS = "cpu backend doesn't support events."

# c10's DeviceType numbering: a Stream reports its device type as this number
DEVICE_TYPES = ("cpu", "cuda", "mkldnn", "opengl", "opencl", "ideep", "hip", "fpga", "maia",
                "xla", "vulkan", "metal", "xpu", "mps", "meta", "hpu", "ve", "lazy", "ipu",
                "mtia", "privateuseone")


def _device_type(device: Any) -> str:
    if device is None:
        return "cpu"
    if isinstance(device, int) and not isinstance(device, bool):
        # an index names the accelerator, which retrograd does not have
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return _device(device).type


class Stream:
    """An ordered queue of device work; on the CPU work runs as it is called."""

    __slots__ = ("_type", "device_index", "stream_id")

    def __init__(self, device: Any = None, *, priority: int = 0, stream_id: int | None = None,
                 device_type: int | None = None, device_index: int | None = None) -> None:
        # (stream_id, device_type, device_index) rebuild a stream from its parts, as torch's
        self._type = DEVICE_TYPES[device_type] if device_type is not None else \
            _device_type(device)
        self.device_index = -1 if device_index is None else device_index
        self.stream_id = 0 if stream_id is None else stream_id

    @property
    def device_type(self) -> int:
        return DEVICE_TYPES.index(self._type)

    @property
    def device(self) -> _device:
        return _device(self._type)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Nothing to wait for: CPU work is done when its call returns."""

    def is_capturing(self) -> bool:
        return False

    @property
    def native_handle(self) -> int:
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def wait_event(self, event: Event) -> None:
        """An event on the CPU is complete already."""

    def wait_stream(self, stream: Stream) -> None:
        raise RuntimeError(NO_EVENTS)  # torch's waits by recording an event on `stream`

    def record_event(self, event: Event | None = None) -> Event:
        raise RuntimeError(NO_EVENTS)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Stream):
            return False
        return ((self._type, self.device_index, self.stream_id)
                == (other._type, other.device_index, other.stream_id))

    def __hash__(self) -> int:
        return hash((self._type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        return (f"retrograd.Stream device_type={self._type}, "
                f"device_index={self.device_index}, stream_id={self.stream_id}")


class Event:
    """A marker in a stream's work; the CPU backend cannot record one."""

    __slots__ = ("_type", "device_index", "event_flag", "event_id")

    def __init__(self, device: Any = None, *, enable_timing: bool = False,
                 blocking: bool = False, interprocess: bool = False) -> None:
        self._type = _device_type(device)
        self.device_index = -1
        self.event_flag = 1 if enable_timing else 0
        self.event_id = 0

    @property
    def device(self) -> _device:
        return _device(self._type)

    def record(self, stream: Stream | None = None) -> None:
        raise RuntimeError(NO_EVENTS)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait(self, stream: Stream | None = None) -> None:
        pass

    def elapsed_time(self, end_event: Event) -> float:
        if not (self.event_flag and end_event.event_flag):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        # never reached with a recorded pair: the CPU backend records no events
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self) -> Any:
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue "
                                  "if you need this!")

    @classmethod
    def from_ipc_handle(cls, device: Any, ipc_handle: Any) -> Event:
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue "
                                  "if you need this!")

    def __repr__(self) -> str:
        return (f"retrograd.Event device_type={self._type}, "
                f"device_index={self.device_index}, event_flag={self.event_flag}, "
                f"event_id={self.event_id}")


def get_device_module(device: Any = None) -> ModuleType:
    """torch.get_device_module: the module of a device type (`retrograd.cpu` for the CPU, the
    default; `retrograd.cuda` answers that CUDA is not available)."""
    if isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = device.partition(":")[0]
        if name == "cuda":
            return importlib.import_module("retrograd.cuda")
        name = _device(device).type
    elif device is None:
        name = "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    if name != "cpu":
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.")
    return importlib.import_module("retrograd.cpu")
