"""torch._inductor's name: only its `config`, which programs set before compiling."""

from retrograd._inductor import config

__all__ = ["config"]
