"""Which stack frames are retrograd's own: the version-error message and anomaly mode's forward
trace point at the user's code, past retrograd's modules and its generated op functions."""

from __future__ import annotations

import os
from types import FrameType

# every function retrograd generates (op entry points, save and backward functions) has a
# filename of its own starting with this, e.g. "<retrograd: mul.Tensor entry>"
GENERATED_PREFIX = "<retrograd:"

# the installed package's directory (the one holding retrograd/__init__.py): a user's file in
# some other folder named "retrograd" is the user's
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_INTERNAL = (PACKAGE_DIR + os.sep, GENERATED_PREFIX)


def is_internal(filename: str) -> bool:
    return filename.startswith(_INTERNAL)


def user_frame(frame: FrameType | None) -> FrameType | None:
    """The first frame, from `frame` outwards, that is not retrograd's own."""
    internal = _INTERNAL  # (is_internal, inlined: this runs for every in-place op)
    while frame is not None and frame.f_code.co_filename.startswith(internal):
        frame = frame.f_back
    return frame
