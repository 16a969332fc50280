"""torch.func.replace_all_batch_norm_modules_: batch norm layers that keep no running
statistics, so vmap over a model does not write one set of statistics for many examples."""

from __future__ import annotations

from retrograd.nn.modules.module import Module
from retrograd.nn.modules.normalization import _BatchNorm


def _without_running_stats(module: Module) -> None:
    if isinstance(module, _BatchNorm) and module.track_running_stats:
        module.running_mean = None
        module.running_var = None
        module.num_batches_tracked = None
        module.track_running_stats = False


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """In place: every batch norm layer in `root` (root included) drops its running mean,
    variance and batch count and stops tracking them (it normalizes with batch statistics)."""
    for module in root.modules():
        _without_running_stats(module)
    return root
