"""DistributedDataParallel: one replica of the module per rank, gradients averaged in backward.

At construction the parameters' shapes are checked across ranks and rank 0's parameters and
buffers are broadcast, so every replica starts equal. Each forward (with broadcast_buffers)
first broadcasts rank 0's buffers; backward all-reduces the gradients bucket by bucket while it
runs (see _reducer.py), so after backward every rank holds the average gradient and the
optimizer steps keep the replicas equal.

Uneven inputs: inside `ddp.join()` (a distributed.algorithms.join.Join) each forward first
tells the ranks that ran out of batches that this rank still trains; those ranks answer each
iteration's collectives (the buffer broadcast, whether backward syncs, one all-reduce of zeros
per bucket: _DDPJoinHook.main_hook) until all have joined, then every rank takes the model of
a rank that joined last. Buffers are broadcast from the highest-ranked rank still training
(rank 0 may have joined with stale buffers).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

import retrograd.distributed as dist
from retrograd import _warning_site as _ws
from retrograd.autograd import grad_mode
from retrograd.distributed._core import Work, _member
from retrograd.distributed.algorithms.join import Join, Joinable, JoinHook
from retrograd.nn.modules.module import Module
from retrograd.nn.parallel._reducer import Reducer

__all__ = ["DistributedDataParallel"]

PARAM_COUNT = ("DDP expects same model across all ranks, but Rank {rank} has {n} params, while "
               "rank {other} has inconsistent {m} params.")
PARAM_SIZES = ("[{rank}]: params[{i}] in this process with sizes {sizes} appears not to match "
               "sizes of the same param in process 0.")


class DistributedDataParallel(Module, Joinable):
    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0, broadcast_buffers: bool | None = None, init_sync: bool = True,
                 process_group: Any = None, bucket_cap_mb: float | None = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False,
                 forward_sync_buffers: bool | None = None, **kwargs: Any) -> None:
        Module.__init__(self)
        self._join_config = _disabled_join_config()  # (Joinable's __init__, without Module's)
        self._divide_by_initial_world_size = True
        if not dist.is_initialized():
            raise ValueError("Default process group has not been initialized, please make sure "
                             "to call init_process_group.")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.process_group = process_group
        init_sync_buffers = _buffer_sync(broadcast_buffers, forward_sync_buffers)
        self.forward_sync_buffers = self.broadcast_buffers = (
            init_sync_buffers if forward_sync_buffers is None else forward_sync_buffers)
        if check_reduction:
            _ws.warn("The `check_reduction` argument in `DistributedDataParallel` module "
                     "is deprecated. Please avoid using it.", FutureWarning, stacklevel=2)
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 ** 2)
        params = _unique(p for p in module.parameters() if p.requires_grad)
        self._module_buffers = list(module.buffers())
        self._check_same_model(params)
        if init_sync:
            _broadcast_coalesced([*(p for p in module.parameters()),
                                  *(self._module_buffers if init_sync_buffers else ())],
                                 process_group)
        self.reducer = Reducer(params, process_group, bucket_cap_mb, find_unused_parameters,
                               gradient_as_bucket_view, static_graph)

    def _check_same_model(self, params: list) -> None:
        """Every rank sees every rank's parameter shapes (and buffer sizes) and raises the same
        error naming the first rank that differs from rank 0 (torch's messages)."""
        mine = ([tuple(p.shape) for p in params], [b._data.nbytes for b in self._module_buffers])
        everyone: list = [None] * dist.get_world_size(self.process_group)
        dist.all_gather_object(everyone, mine, group=self.process_group)
        ranks = dist.get_process_group_ranks(self.process_group) \
            if self.process_group is not None else list(range(len(everyone)))
        ref_shapes, ref_buffers = everyone[0]
        for k, (shapes, buffers) in enumerate(everyone):
            if len(shapes) != len(ref_shapes):
                raise RuntimeError(PARAM_COUNT.format(rank=ranks[k], n=len(shapes), other=ranks[0],
                                                      m=len(ref_shapes)))
            for i, (a, b) in enumerate(zip(shapes, ref_shapes)):
                if a != b:
                    raise RuntimeError(PARAM_SIZES.format(rank=ranks[k], i=i, sizes=list(a)))
            if buffers != ref_buffers:
                raise RuntimeError(f"DDP expects same model across all ranks, but rank "
                                   f"{ranks[k]}'s buffers differ in size from rank {ranks[0]}'s")

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        sync = grad_mode.is_grad_enabled() and self.require_backward_grad_sync
        if sync and self.reducer.require_finalize:
            self.reducer._raise_unfinished()
        work = Join.notify_join_context(self)
        if work is not None:
            self.reducer.set_forward_pass_work(work, self._divide_by_initial_world_size)
        if self._will_sync_buffers():
            # under join, rank 0 may have joined with stale buffers: the highest rank still
            # training is the source
            src = self._common_rank(True) if self._join_config.enable else 0
            _broadcast_coalesced(self._module_buffers, self.process_group, src)
        if self._join_config.enable:
            self._global_backward_sync(joined=False)  # tells the joined ranks
        out = self.module(*inputs, **kwargs)
        if sync:
            self.reducer.prepare_for_backward(out)
        else:
            self.reducer.expect_hooks = False
        return out

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes inside accumulate gradients locally, without communication; the
        first synchronized backward after it averages the accumulated gradients."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state: object, hook: Callable) -> None:
        """hook(state, bucket: GradBucket) -> Future whose value is the reduced bucket buffer
        (it runs instead of the built-in averaging all-reduce)."""
        if self.reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        self.reducer.comm_hook = hook
        self.reducer.comm_state = state

    # -- uneven inputs (distributed.algorithms.join) --------------------------------------------

    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False) -> Join:
        """Context manager for uneven inputs across ranks. With divide_by_initial_world_size
        (the default) gradients are averaged over the whole world even when some ranks have
        joined (they count as zeros); without it, over the ranks still training."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs: Any) -> JoinHook:
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self) -> Any:
        import retrograd

        return retrograd.device("cpu")

    @property
    def join_process_group(self) -> Any:
        return self.process_group

    def _will_sync_buffers(self) -> bool:
        return bool(self.require_forward_param_sync and self.broadcast_buffers
                    and self._module_buffers)

    def _common_rank(self, candidate: bool) -> int:
        """The highest group rank among the ranks passing candidate=True (one all-reduce)."""
        import retrograd

        me = dist.get_rank(self.process_group)
        rank = retrograd.tensor([me if candidate else -1])
        dist.all_reduce(rank, op=dist.ReduceOp.MAX, group=self.process_group)
        return int(rank.item())

    def _global_backward_sync(self, joined: bool) -> bool | None:
        """All-reduce of whether the training ranks will synchronize gradients this iteration
        (they add 1 unless under no_sync); a joined rank learns the answer."""
        import retrograd

        flag = retrograd.ones(1) if not joined and self.require_backward_grad_sync \
            else retrograd.zeros(1)
        work = dist.all_reduce(flag, group=self.process_group, async_op=True)
        if not joined:
            return None
        if work is not None:
            work.wait()
        return bool(flag.item() != 0)

    def _set_static_graph(self) -> None:
        self.static_graph = True
        self.reducer.static_graph = True

    def __getstate__(self) -> dict:
        raise RuntimeError("DistributedDataParallel cannot be pickled")


def _buffer_sync(broadcast_buffers: bool | None, forward_sync_buffers: bool | None) -> bool:
    """Whether construction broadcasts the buffers, with torch's deprecation warnings:
    `broadcast_buffers` (deprecated) governs construction and forward, `forward_sync_buffers`
    the forward only (construction always broadcasts then)."""
    if broadcast_buffers is not None:
        if forward_sync_buffers is not None:
            _ws.warn("Both `broadcast_buffers` and `forward_sync_buffers` were specified. "
                     "`broadcast_buffers` is deprecated and its value is ignored when "
                     "`forward_sync_buffers` is provided.", FutureWarning, stacklevel=3)
        else:
            _ws.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` "
                     "instead. IMPORTANT: unlike `broadcast_buffers=False`, "
                     "`forward_sync_buffers=False` still syncs buffers at init. If you "
                     "rely on buffers NOT being synced at init (e.g. rank-local buffers), "
                     "keep using `broadcast_buffers=False` until `init_sync_buffers` is "
                     "available.", FutureWarning, stacklevel=3)
    if forward_sync_buffers is not None:
        return True
    return True if broadcast_buffers is None else bool(broadcast_buffers)


def _disabled_join_config() -> Any:
    from retrograd.distributed.algorithms.join import _JoinConfig

    return _JoinConfig.construct_disabled_join_config()


class _DDPJoinHook(JoinHook):
    """On a joined rank: answer each iteration's collectives of the ranks still training."""

    def __init__(self, ddp: DistributedDataParallel, divide_by_initial_world_size: bool) -> None:
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self) -> None:
        ddp = self.ddp
        if ddp._will_sync_buffers():  # the forward's buffer broadcast
            src = ddp._common_rank(False)
            _broadcast_coalesced(ddp._module_buffers, ddp.process_group, src)
        sync = ddp._global_backward_sync(joined=True)
        # no gradient sync now means no parameter sync in the next forward, as on the others
        ddp.require_forward_param_sync = bool(sync)
        if sync:
            ddp.reducer.shadow_backward()

    def post_hook(self, is_last_joiner: bool) -> None:
        """Every rank takes the model of the highest-ranked rank that joined last."""
        ddp = self.ddp
        src = ddp._common_rank(is_last_joiner)
        states: list = list(ddp.module.parameters())
        if ddp.broadcast_buffers:
            states += ddp._module_buffers
        _broadcast_coalesced(states, ddp.process_group, src)


def _unique(params: Any) -> list:
    seen: set[int] = set()
    out = []
    for p in params:
        if id(p) not in seen:
            seen.add(id(p))
            out.append(p)
    return out


def _broadcast_coalesced(tensors: list, process_group: Any, src_group_rank: int = 0) -> None:
    """Broadcast many tensors from one rank as one message of their bytes (shapes are known to
    agree: the caller checked them)."""
    pg = _member(process_group)
    if pg is None or pg.size() == 1 or not tensors:
        return
    arrays = [t._data for t in tensors]
    flat = np.concatenate([np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in arrays]) \
        if any(a.size for a in arrays) else np.empty(0, np.uint8)
    Work([pg.comm.Ibcast(flat, root=src_group_rank)], "broadcast",
         f"from rank {pg.ranks[src_group_rank]}", collective=True).wait()
    if pg.rank() == src_group_rank:
        return
    start = 0
    for t, a in zip(tensors, arrays):
        n = a.nbytes
        np.copyto(a, flat[start:start + n].view(a.dtype).reshape(a.shape))
        start += n
        if t._version_counter is not None:
            t._version_counter.version += 1
