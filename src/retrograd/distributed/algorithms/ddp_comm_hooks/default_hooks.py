"""The built-in DDP communication hooks: plain averaging, and averaging in float16 or bfloat16
to halve the bytes sent. `process_group` is the hook's state (None: the default group)."""

from __future__ import annotations

from typing import Any

import retrograd
import retrograd.distributed as dist
from retrograd._tensor import Tensor
from retrograd.distributed._grad_bucket import GradBucket
from retrograd.futures import Future

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook"]


def _allreduce_fut(process_group: Any, tensor: Tensor) -> Future:
    """Average `tensor` over the group, in place; the future's value is the tensor."""
    group = process_group if process_group is not None else dist.group.WORLD
    with retrograd.no_grad():
        tensor.div_(dist.get_world_size(group))
    work = dist.all_reduce(tensor, group=group, async_op=True)
    if work is None:  # this rank is not in the group
        fut: Future = Future()
        fut.set_result(tensor)
        return fut
    return work.get_future().then(lambda f: f.value()[0])


def allreduce_hook(process_group: Any, bucket: GradBucket) -> Future:
    """What DDP does without a hook: the bucket averaged over the group."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype: Any, process_group: Any, bucket: GradBucket) -> Future:
    group = process_group if process_group is not None else dist.group.WORLD
    buffer = bucket.buffer()
    with retrograd.no_grad():
        compressed = buffer.to(dtype).div_(dist.get_world_size(group))
    work = dist.all_reduce(compressed, group=group, async_op=True)

    def decompress(fut: Future) -> Tensor:
        with retrograd.no_grad():
            buffer.copy_(fut.value()[0])
        return buffer

    if work is None:
        done: Future = Future()
        done.set_result([compressed])
        return done.then(decompress)
    return work.get_future().then(decompress)


def fp16_compress_hook(process_group: Any, bucket: GradBucket) -> Future:
    """Average the bucket in float16 (half the bytes), then write it back in its dtype."""
    return _compress_hook(retrograd.float16, process_group, bucket)


def bf16_compress_hook(process_group: Any, bucket: GradBucket) -> Future:
    """Average the bucket in bfloat16, then write it back in its dtype."""
    return _compress_hook(retrograd.bfloat16, process_group, bucket)
