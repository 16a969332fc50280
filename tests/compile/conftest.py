import pytest

import retrograd


@pytest.fixture(autouse=True)
def _fresh_compiler(tmp_path, monkeypatch):
    """Each test starts with empty caches and zero counters, and its own cache directory."""
    monkeypatch.setenv("RETROGRAD_CACHE_DIR", str(tmp_path / "cache"))
    retrograd.compiler.reset()
    yield
    retrograd.compiler.reset()
