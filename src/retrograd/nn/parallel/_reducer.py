"""DDP's reducer: gradients go into buckets, each bucket is all-reduced as soon as it is full.

Buckets are made once, at construction: parameters in reverse registration order (the order
in which backward usually produces their gradients), split by dtype, a bucket closing once it
holds `cap` bytes; the first bucket's cap is 1 MiB when bucket_cap_mb is left at its default,
so the last layers' gradients start travelling early. (torch builds its buckets a second time
after the first iteration, in the order gradients were observed; retrograd keeps the first
assignment.)

Each parameter has a post-accumulate-grad hook (it runs right after AccumulateGrad wrote
`.grad`). The hook copies the gradient into its bucket slot (with gradient_as_bucket_view the
`.grad` *is* the slot, so AccumulateGrad already accumulated into it, in place), and when a
bucket's last gradient arrives the bucket's all-reduce starts, non-blocking, while backward
goes on. Buckets start in index order on every rank, so the ranks' collectives always match. The
first hook of a backward queues a final callback on the engine; it waits for every bucket and
writes the averaged gradients back. A parameter that got no gradient leaves its bucket
unfinished: the next forward raises torch's "Expected to have finished reduction" error.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

import retrograd.distributed as dist
from retrograd._tensor import Tensor
from retrograd.autograd import grad_mode
from retrograd.distributed._collectives import all_reduce_unchecked
from retrograd.distributed._grad_bucket import GradBucket

MIB = 1024 * 1024
FIRST_BUCKET_BYTES = 1 * MIB
DEFAULT_BUCKET_MB = 25

UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. ")
UNFINISHED_ENABLE = (
    "You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n")
UNFINISHED_ENABLED = (
    "Since `find_unused_parameters=True` is enabled, this likely  means that not all `forward` "
    "outputs participate in computing loss. You can fix this by ")
UNFINISHED_OUTPUTS = (
    "making sure all `forward` function outputs participate in calculating loss. \nIf you "
    "already have done the above, then the distributed data parallel module wasn't able to "
    "locate the output tensors in the return value of your module's `forward` function. Please "
    "include the loss function and the structure of the return value of `forward` of your "
    "module when reporting this issue (e.g. list, dict, iterable).")
UNFINISHED_STATIC = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your training graph has changed in this iteration, e.g., one "
    "parameter is used in first iteration, but then got unused in the second iteration. this "
    "is not compatible with static_graph set to True.")
UNFINISHED_INDICES = "\nParameter indices which did not receive grad for rank {rank}: {indices}"
UNFINISHED_DEBUG = (
    "\n In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either "
    "INFO or DETAIL to print out information about which particular parameters did not "
    "receive gradient on this rank as part of this error")


def assign_buckets(params: list, cap_bytes: int, first_cap_bytes: int) -> list[list[int]]:
    """Parameter indices per bucket: reverse registration order, one open bucket per dtype, the
    first bucket closed at first_cap_bytes and the others at cap_bytes."""
    open_buckets: dict = {}
    caps: dict = {}
    done: list[list[int]] = []
    for i in reversed(range(len(params))):
        key = params[i].dtype
        members, size = open_buckets.get(key, ([], 0))
        members.append(i)
        size += params[i]._data.nbytes
        limit = caps.get(key, first_cap_bytes)
        if size >= limit:
            done.append(members)
            caps[key] = cap_bytes
            members, size = [], 0
        open_buckets[key] = (members, size)
    done += [m for m, _ in open_buckets.values() if m]
    return done


class _Bucket:
    def __init__(self, index: int, indices: list[int], params: list, is_last: bool) -> None:
        self.index = index
        self.indices = indices
        dtype = params[indices[0]].dtype
        numels = [params[i].numel() for i in indices]
        self.offsets = np.cumsum([0, *numels[:-1]]).tolist()
        self.numels = numels
        import retrograd

        self.buffer = retrograd.zeros(sum(numels), dtype=dtype)
        with grad_mode.no_grad():
            self.views = [self.buffer.narrow(0, off, n).view(params[i].shape)
                          for i, off, n in zip(indices, self.offsets, numels)]
        self.grad_bucket = GradBucket(index, self.buffer, [params[i] for i in indices],
                                      self.views, is_last)
        self.pending = len(indices)
        self.future: Any = None


class Reducer:
    def __init__(self, params: list, process_group: Any, bucket_cap_mb: float | None,
                 find_unused_parameters: bool, gradient_as_bucket_view: bool,
                 static_graph: bool) -> None:
        self.params = params
        self.pg = process_group
        self.world = dist.get_world_size(process_group)
        self.rank = dist.get_rank(process_group)
        self.find_unused = find_unused_parameters
        self.as_view = gradient_as_bucket_view
        self.static_graph = static_graph
        cap = int((DEFAULT_BUCKET_MB if bucket_cap_mb is None else bucket_cap_mb) * MIB)
        first = FIRST_BUCKET_BYTES if bucket_cap_mb is None else cap
        groups = assign_buckets(params, max(cap, 1), max(first, 1))
        self.buckets = [_Bucket(b, idx, params, b == len(groups) - 1)
                        for b, idx in enumerate(groups)]
        self.where = {i: (b, k) for b in self.buckets for k, i in enumerate(b.indices)}
        self.comm_hook: Callable | None = None
        self.comm_state: Any = None
        self.expect_hooks = False
        self.require_finalize = False
        self.callback_queued = False
        self.marked_unused = False
        self.ready = [False] * len(params)
        self.unused: list[int] = []
        self.used_here = np.zeros(len(params), np.int32)
        self.next_bucket = 0
        self.iteration = 0
        self.comm_wait_seconds = 0.0  # time finalize spent blocked on all-reduces (reported)
        self.static_unused: list[int] | None = None
        # under Join: the forward's "still training" all-reduce, and whether to average over
        # the whole world (True) or over the ranks that still train
        self.forward_work: Any = None
        self.divide_by_initial_world_size = True
        self.divisor = self.world
        self.handles = [p.register_post_accumulate_grad_hook(self._hook_for(i))
                        for i, p in enumerate(params)]

    def _hook_for(self, i: int) -> Callable:
        # the parameter outlives its DDP wrapper: a dropped wrapper's hook must do nothing
        reducer = weakref.ref(self)

        def hook(param: Tensor) -> None:
            alive = reducer()
            if alive is not None:
                alive.on_grad(i)
        return hook

    # -- each iteration ------------------------------------------------------------------------

    def prepare_for_backward(self, outputs: Any) -> None:
        """Called after a forward that will be followed by a synchronized backward."""
        if self.require_finalize:
            self._raise_unfinished()
        self.expect_hooks = True
        self.require_finalize = True
        self.callback_queued = False
        self.marked_unused = False
        self.ready = [False] * len(self.params)
        self.used_here[:] = 0
        self.next_bucket = 0
        for b in self.buckets:
            b.pending = len(b.indices)
            b.future = None
        if self.static_graph and self.static_unused is not None:
            self.unused = list(self.static_unused)
        elif self.find_unused or self.static_graph:
            used = reachable_params(outputs)
            self.unused = [i for i, p in enumerate(self.params) if id(p) not in used]
        else:
            self.unused = []

    def on_grad(self, i: int) -> None:
        if not self.expect_hooks:
            return  # under no_sync, or a backward not started from a DDP forward
        if not self.callback_queued:
            from retrograd.autograd.variable import Variable

            self.callback_queued = True
            Variable._execution_engine.queue_callback(self.finalize)
        if not self.marked_unused:
            self.marked_unused = True
            for u in self.unused:
                self._mark_ready(u, used=False)
        if self.ready[i]:
            return  # accumulated twice in one backward (reentrant): the slot is refreshed
        self._mark_ready(i, used=True)

    def _mark_ready(self, i: int, used: bool) -> None:
        self.ready[i] = True
        if used:
            self.used_here[i] = 1
        bucket, k = self.where[i]
        self._fill_slot(bucket, k, self.params[i])
        bucket.pending -= 1
        while self.next_bucket < len(self.buckets) and \
                self.buckets[self.next_bucket].pending == 0:
            self._launch(self.buckets[self.next_bucket])
            self.next_bucket += 1

    def _fill_slot(self, bucket: _Bucket, k: int, param: Tensor) -> None:
        view = bucket.views[k]
        grad = param._grad
        if grad is None:
            view._data[...] = 0
            return
        if self.as_view:
            if grad is not view:
                np.copyto(view._data, grad._data, casting="unsafe")
                param._grad = view  # from now on AccumulateGrad adds into the bucket
        else:
            np.copyto(view._data, grad._data, casting="unsafe")

    def set_forward_pass_work(self, work: Any, divide_by_initial_world_size: bool) -> None:
        self.forward_work = work
        self.divide_by_initial_world_size = divide_by_initial_world_size

    def _divisor(self) -> int:
        """What the gradients are divided by: the world size, or under Join without
        divide_by_initial_world_size the number of ranks still training (known once the
        forward's all-reduce is done)."""
        work, self.forward_work = self.forward_work, None
        if work is not None:
            count = int(work.result()[0].item())
            self.divisor = self.world if self.divide_by_initial_world_size else max(count, 1)
        return self.divisor

    def _launch(self, bucket: _Bucket) -> None:
        if bucket.index == 0:
            self._divisor()
        if self.comm_hook is not None:
            bucket.future = self.comm_hook(self.comm_state, bucket.grad_bucket)
            return
        with grad_mode.no_grad():
            np.divide(bucket.buffer._data, self.divisor, out=bucket.buffer._data,
                      casting="unsafe")
        work = all_reduce_unchecked(bucket.buffer, group=self.pg, async_op=True)
        bucket.future = work.get_future() if work is not None else None

    def finalize(self) -> None:
        """The engine's final callback: wait for every bucket, write the averaged gradients."""
        self.expect_hooks = False
        if self.static_graph and self.static_unused is None:
            # the first iteration fixes the graph: what got no gradient now never will
            missed = [i for i in range(len(self.params)) if not self.ready[i]]
            for u in missed:
                self._mark_ready(u, used=False)
            self.static_unused = sorted(set(self.unused) | set(missed))
        if self.next_bucket < len(self.buckets):
            return  # some parameter got no gradient: the next forward reports it
        globally_used = self._globally_used()
        for bucket in self.buckets:
            if bucket.future is not None:
                start = time.perf_counter()
                out = bucket.future.wait()
                self.comm_wait_seconds += time.perf_counter() - start
                if isinstance(out, list):
                    out = out[0]
                if isinstance(out, Tensor) and out is not bucket.buffer:
                    np.copyto(bucket.buffer._data, out._data.reshape(-1), casting="unsafe")
            for k, i in enumerate(bucket.indices):
                if globally_used is not None and not globally_used[i]:
                    continue  # no rank computed a gradient for it: leave .grad alone
                self._write_grad(self.params[i], bucket.views[k])
        self.require_finalize = False
        self.iteration += 1

    def shadow_backward(self) -> None:
        """On a rank that joined (Join): the collectives of a synchronized backward, with zero
        gradients, in the order the training ranks issue them."""
        import retrograd

        futures = []
        for bucket in self.buckets:
            if self.comm_hook is not None:
                buffer = retrograd.zeros_like(bucket.buffer)
                params = bucket.grad_bucket.parameters()
                with grad_mode.no_grad():
                    views = [buffer.narrow(0, off, n).view(p.shape)
                             for p, off, n in zip(params, bucket.offsets, bucket.numels)]
                zeros = GradBucket(bucket.index, buffer, params, views,
                                   bucket.grad_bucket.is_last())
                futures.append(self.comm_hook(self.comm_state, zeros))
            else:
                work = all_reduce_unchecked(retrograd.zeros_like(bucket.buffer), group=self.pg,
                                            async_op=True)
                futures.append(None if work is None else work.get_future())
        for future in futures:
            if future is not None:
                future.wait()
        if self.find_unused or self.static_graph:
            all_reduce_unchecked(retrograd.zeros(len(self.params), dtype=retrograd.int32),
                                 op=dist.ReduceOp.MAX, group=self.pg)

    def _globally_used(self) -> np.ndarray | None:
        if not (self.find_unused or self.static_graph):
            return None  # (every rank takes the same branch: the all-reduce below is collective)
        import retrograd

        used = retrograd.from_numpy(self.used_here.copy())
        all_reduce_unchecked(used, op=dist.ReduceOp.MAX, group=self.pg)
        return used._data

    def _write_grad(self, param: Tensor, view: Tensor) -> None:
        grad = param._grad
        if self.as_view:
            if grad is not view:
                param._grad = view
            return
        if grad is None:
            param._grad = view.detach().clone()
        else:
            np.copyto(grad._data, view._data, casting="unsafe")
            if grad._version_counter is not None:
                grad._version_counter.version += 1

    def _raise_unfinished(self) -> None:
        missing = [i for i in range(len(self.params)) if not self.ready[i]]
        indices = ", ".join(str(i) for i in missing)
        if self.static_graph:
            msg = UNFINISHED_STATIC
        else:
            msg = UNFINISHED + (UNFINISHED_ENABLED if self.find_unused else UNFINISHED_ENABLE) \
                + UNFINISHED_OUTPUTS
        raise RuntimeError(msg + UNFINISHED_INDICES.format(rank=self.rank, indices=indices)
                           + UNFINISHED_DEBUG)

    def remove_hooks(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []


def reachable_params(outputs: Any) -> set[int]:
    """ids of the leaf tensors whose AccumulateGrad nodes the outputs' graphs reach."""
    seen: set[int] = set()
    found: set[int] = set()
    stack = [t.grad_fn for t in _tensors(outputs) if t.grad_fn is not None]
    for t in _tensors(outputs):
        if t.grad_fn is None and t.requires_grad:
            found.add(id(t))
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if isinstance(var, Tensor):
            found.add(id(var))
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return found


def _tensors(obj: Any) -> list:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in _tensors(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in _tensors(item)]
    return []
