"""Pipeline parallelism: stage backward (whole or split), stages and schedules."""

from retrograd.distributed.pipelining._backward import (
    stage_backward,
    stage_backward_input,
    stage_backward_weight,
)

__all__ = ["stage_backward", "stage_backward_input", "stage_backward_weight"]
