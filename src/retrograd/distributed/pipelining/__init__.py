"""Pipeline parallelism: stage backward (whole or split), stages, schedules, runners."""

from retrograd.distributed.pipelining._backward import (
    stage_backward,
    stage_backward_input,
    stage_backward_weight,
)
from retrograd.distributed.pipelining.microbatch import merge_chunks, split_batch
from retrograd.distributed.pipelining.schedules import (
    PipelineScheduleMulti,
    PipelineScheduleSingle,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
    ScheduleInterleavedZeroBubble,
    ScheduleZBVZeroBubble,
)
from retrograd.distributed.pipelining.stage import PipelineStage
from retrograd.distributed.pipelining.split import pipeline, split_sequential

__all__ = ["stage_backward", "stage_backward_input", "stage_backward_weight", "PipelineStage",
           "ScheduleGPipe", "Schedule1F1B", "ScheduleInterleaved1F1B",
           "ScheduleInterleavedZeroBubble", "ScheduleZBVZeroBubble", "PipelineScheduleSingle",
           "PipelineScheduleMulti", "pipeline", "split_sequential", "split_batch",
           "merge_chunks"]
