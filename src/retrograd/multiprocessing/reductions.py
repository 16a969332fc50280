"""How tensors cross process boundaries through multiprocessing's pickler (queues, pipes, a
spawned process's arguments): their memory is moved into a shared segment (as
`share_memory_()` does) and the segment's file descriptor is sent, so the receiving process
maps the same memory, as torch's file_descriptor strategy does.

Both sharing strategies send the descriptor: "file_system" is accepted and reported, but names
no file (there is no shared-memory manager process).
"""

from __future__ import annotations

from multiprocessing import reduction
from typing import Any

import numpy as np

from retrograd import _shared_memory as shm
from retrograd._tensor import Tensor, _wrap
from retrograd.nn.parameter import Parameter
from retrograd.storage import UntypedStorage

NON_LEAF = (
    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does "
    "not support crossing process boundaries.  If you just want to transfer the data, call "
    "detach() on the tensor before serializing (e.g., putting it on the queue).")


def rebuild_tensor(cls: type, handle: Any, geometry: tuple, requires_grad: bool) -> Tensor:
    mapping = shm.open_segment(handle.detach())
    if geometry[0] == "storage":
        start, nbytes, dtype, offset, shape, stride = geometry[1:]
        storage = UntypedStorage._over(np.ndarray((nbytes,), np.uint8, buffer=mapping,
                                                  offset=start))
        t = _wrap(np.empty(0, dtype)).set_(storage, offset, shape, stride)
    else:
        start, shape, dtype, strides, writeable = geometry[1:]
        t = _wrap(shm.array_in(mapping, start, shape, dtype, strides, writeable))
    if cls is Parameter:
        # through the constructor, as it checks that an integer tensor does not require grad
        return Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def _geometry(t: Tensor, segment_start: int) -> tuple:
    """Where t lies in its segment: its storage and the tensor's place in it as torch sends
    them, or (for what set_ cannot rebuild: nothing to read, a read-only broadcast, a negative
    NumPy stride) the array's own bytes."""
    a = t._data
    if a.size and a.flags.writeable and min(a.strides, default=0) >= 0:
        storage = t.untyped_storage()
        return ("storage", storage.data_ptr() - segment_start, storage.nbytes(), a.dtype,
                t.storage_offset(), tuple(a.shape), t.stride())
    return ("array", shm.address(a) - segment_start, a.shape, a.dtype, a.strides,
            a.flags.writeable)


def reduce_tensor(t: Tensor) -> tuple:
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(NON_LEAF)
    t.share_memory_()
    segment = shm.segment_of(t._data)
    assert segment is not None
    _, fd, start = segment
    return (rebuild_tensor, (type(t), reduction.DupFd(fd), _geometry(t, start),
                             t.requires_grad))


def init_reductions() -> None:
    # exact classes, as torch registers them; other subclasses pickle by value
    reduction.register(Tensor, reduce_tensor)
    reduction.register(Parameter, reduce_tensor)
