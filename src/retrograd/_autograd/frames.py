"""Which stack frames are retrograd's own: the version-error message and anomaly mode's forward
trace point at the user's code, past retrograd's modules and its generated op functions."""

from __future__ import annotations

from types import FrameType

# the filename of every function retrograd generates (op entry points, save and backward)
GENERATED_FILENAME = "<retrograd generated op>"


def is_internal(filename: str) -> bool:
    return "/retrograd/" in filename or filename == GENERATED_FILENAME


def user_frame(frame: FrameType | None) -> FrameType | None:
    """The first frame, from `frame` outwards, that is not retrograd's own."""
    while frame is not None and is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    return frame
