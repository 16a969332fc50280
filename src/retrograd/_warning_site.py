"""warnings.warn for retrograd's own warnings, with one difference: the frames of the generated
entries that hand a public function's call to __torch_function__ (NOTE [Torch function
entries]) are not counted by `stacklevel`, so a warning points where it would without them
(the user's line calling `F.dropout(...)`, not the entry in between). Imports nothing.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

# the code objects of those entries (retrograd._ops.torch_function adds them)
ENTRY_CODES: set = set()


def warn(message: Any, category: type[Warning] | None = None, stacklevel: int = 1,
         source: Any = None) -> None:
    """warnings.warn(message, category, stacklevel, source), entries not counted."""
    steps = stacklevel - 1
    if steps > 0 and ENTRY_CODES:
        frame = sys._getframe(1)  # the frame that warns: stacklevel 1
        steps = 0
        left = stacklevel - 1
        while left and frame.f_back is not None:
            frame = frame.f_back
            steps += 1
            if frame.f_code not in ENTRY_CODES:
                left -= 1
    # (+1: this function's own frame)
    warnings.warn(message, category, steps + 2, source)
