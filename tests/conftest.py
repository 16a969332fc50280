"""Suite-wide isolation: no test sees what an earlier one left behind."""

from __future__ import annotations

import gc

import pytest

from retrograd._ops import subclass


@pytest.fixture(autouse=True)
def _no_lingering_wrappers():
    """A test that catches an error raised inside vmap (or keeps a traceback) leaves batched
    values in reference cycles with the error's frames; while any wrapper lives, the wrapper
    dispatcher stays on the mode stack, and the next test would run its ops under a mode.
    Collect those cycles after a test that left more wrappers alive than it found (only then:
    a collection costs milliseconds, and a wrapper a module keeps is no reason)."""
    before = subclass._live[0]
    yield
    if subclass._live[0] > before:
        gc.collect()
