"""retrograd.version, as torch.version: the build's version and which backends it has."""

from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"
debug = False
# a CPU-only library: no CUDA, ROCm or XPU build
cuda: str | None = None
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
# retrograd is installed from its source tree, not from a tagged build
git_version = "Unknown"
