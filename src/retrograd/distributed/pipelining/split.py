"""Cutting an nn.Sequential into pipeline stages."""

from __future__ import annotations

from typing import Any


def split_sequential(model: Any, num_stages: int) -> list:
    """Consecutive, as-equal-as-possible slices of a Sequential's layers, one per stage."""
    layers = list(model.children()) if hasattr(model, "children") else list(model)
    if num_stages > len(layers):
        raise ValueError(f"cannot split {len(layers)} layers into {num_stages} stages")
    from retrograd.nn import Sequential

    bounds = [len(layers) * i // num_stages for i in range(num_stages + 1)]
    return [Sequential(*layers[bounds[i]:bounds[i + 1]]) for i in range(num_stages)]


def pipeline(model: Any, num_stages: int, stage_indices: list | None = None) -> list:
    """PipelineStages for the given stage indices (all by default) of a split Sequential."""
    from retrograd.distributed.pipelining.stage import PipelineStage

    parts = split_sequential(model, num_stages)
    indices = range(num_stages) if stage_indices is None else stage_indices
    return [PipelineStage(parts[i], i, num_stages) for i in indices]
