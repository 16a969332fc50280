"""An event file: Event messages framed as TFRecords, written by a queue that is flushed when
it holds max_queue events, every flush_secs, on flush() and on close()."""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
import weakref

from . import _proto as pb
from ._record import frame

_file_numbers = itertools.count()  # the last part of the file name, unique in the process
_number_lock = threading.Lock()

# written to every file's first event, where TensorBoard reads which program wrote the file
WRITER_NAME = "retrograd.utils.tensorboard"


def encode_event(wall_time: float, step: int | None = None, *, file_version: str | None = None,
                 summary: bytes | None = None, session_log_start: bool = False,
                 source_writer: str | None = None) -> bytes:
    """Event{wall_time=1, step=2, file_version=3, summary=5, session_log=7, source_metadata=10};
    file_version, summary and session_log are one `oneof`."""
    out = pb.double(1, wall_time)
    if step is not None:
        out += pb.int_field(2, step)
    if file_version is not None:
        out += pb.string(3, file_version, present=True)
    if summary is not None:
        out += pb.message(5, summary)
    if session_log_start:
        out += pb.message(7, pb.int_field(1, 1))  # SessionLog{status=1 START}
    if source_writer is not None:
        out += pb.message(10, pb.string(1, source_writer))  # SourceMetadata{writer=1}
    return out


class _Queue:
    """The open file and the records not yet written; shared with the flush timer, and closed
    at exit when its writer was never closed (it holds no reference to the writer)."""

    def __init__(self, path: str, max_queue: int, flush_secs: float) -> None:
        self.file = open(path, "wb")  # closed by close(), or at exit
        self.pending: list[bytes] = []
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.lock = threading.RLock()
        self.timer: threading.Timer | None = None
        self.closed = False

    def put(self, record: bytes) -> None:
        with self.lock:
            if self.closed:
                raise OSError("Writer is closed")
            self.pending.append(record)
            if len(self.pending) >= self.max_queue:
                self.flush()
            elif self.timer is None:
                self.timer = threading.Timer(self.flush_secs, self._flush_if_open)
                self.timer.daemon = True
                self.timer.start()

    def _flush_if_open(self) -> None:
        with self.lock:
            if not self.closed:
                self.flush()

    def flush(self) -> None:
        with self.lock:
            if self.closed:
                raise OSError("Writer is closed")
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if self.pending:
                self.file.write(b"".join(self.pending))
                self.pending.clear()
            self.file.flush()

    def close(self) -> None:
        with self.lock:
            if not self.closed:
                self.flush()
                self.closed = True
                self.file.close()


class EventFileWriter:
    """Creates `log_dir` and a new event file in it, named as TensorBoard's writers name them:
    events.out.tfevents.<seconds>.<host>.<pid>.<n><filename_suffix>."""

    def __init__(self, log_dir: str, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str = "") -> None:
        self._log_dir = str(log_dir)
        os.makedirs(self._log_dir, exist_ok=True)
        with _number_lock:
            number = next(_file_numbers)
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
                f"{os.getpid()}.{number}{filename_suffix}")
        self.path = os.path.join(self._log_dir, name)
        self._queue = _Queue(self.path, max_queue, flush_secs)
        self._finalizer = weakref.finalize(self, self._queue.close)
        self.add_event(encode_event(time.time(), file_version="brain.Event:2",
                                    source_writer=WRITER_NAME))
        self.flush()

    def get_logdir(self) -> str:
        return self._log_dir

    def add_event(self, event: bytes) -> None:
        self._queue.put(frame(event))

    def add_summary(self, summary: bytes, global_step: object = None,
                    walltime: float | None = None) -> None:
        wall_time = time.time() if walltime is None else float(walltime)
        step = None if global_step is None else int(global_step)  # type: ignore[call-overload]
        self.add_event(encode_event(wall_time, step, summary=summary))

    def flush(self) -> None:
        self._queue.flush()

    def close(self) -> None:
        self._finalizer()
