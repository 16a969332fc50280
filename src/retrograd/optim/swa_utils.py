"""Stochastic weight averaging and exponential moving averages of a model's weights
(torch.optim.swa_utils): AveragedModel, the averaging functions, update_bn and SWALR."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any, Literal

from retrograd import _dtype as D
from retrograd import _warning_site as _ws
from retrograd._ops.creation import tensor
from retrograd._ops.foreach import _foreach_lerp_
from retrograd._tensor import Tensor
from retrograd.autograd.grad_mode import no_grad
from retrograd.nn.modules.module import Module
from retrograd.nn.modules.normalization import _BatchNorm
from retrograd.optim.lr_scheduler import LRScheduler, _format_param
from retrograd.optim.optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]

PARAM_LIST = tuple[Tensor, ...] | list[Tensor]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] "
                         "range.")


def _is_inexact(t: Tensor) -> bool:
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """An in-place EMA over lists: ema = decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: PARAM_LIST, current_param_list: PARAM_LIST, _: Any) -> None:
        if _is_inexact(ema_param_list[0]):
            _foreach_lerp_(list(ema_param_list), list(current_param_list), 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """An in-place running mean over lists: avg += (current - avg) / (num_averaged + 1)."""

    @no_grad()
    def swa_update(averaged_param_list: PARAM_LIST, current_param_list: PARAM_LIST,
                   num_averaged: Tensor | int) -> None:
        if _is_inexact(averaged_param_list[0]):
            weight = 1 / (num_averaged + 1)
            # a tensor count gives a default-dtype weight, used at that precision as in torch
            if isinstance(weight, Tensor):
                weight = weight.item()
            _foreach_lerp_(list(averaged_param_list), list(current_param_list),
                                     weight)
            return
        diffs = [c.sub(a) for a, c in zip(averaged_param_list, current_param_list, strict=True)]
        for a, diff in zip(averaged_param_list, diffs):
            if isinstance(num_averaged, Tensor):
                a.addcdiv_(diff, num_averaged + 1)
            else:
                a.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """The EMA of one parameter: returns decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """The running mean of one parameter: returns avg + (current - avg) / (num_averaged + 1)."""

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor,
                   num_averaged: Tensor | int) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _group_by_dtype(averaged: list, current: list) -> list:
    """Pairs of lists per dtype of the averaged tensors, in order of first appearance (torch
    groups by device and dtype; everything here is on the CPU)."""
    groups: dict = {}
    for a, c in zip(averaged, current, strict=True):
        pair = groups.setdefault(a.dtype, ([], []))
        pair[0].append(a)
        pair[1].append(c)
    return list(groups.values())


class AveragedModel(Module):
    """A copy of `model` whose parameters (and buffers, with use_buffers=True) are a running
    average of the model's: by default the equal-weight mean (SWA), or `avg_fn` (per tensor,
    returns the new value) or `multi_avg_fn` (in place, per list). The first
    update_parameters copies the model; `n_averaged` counts the updates."""

    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[[Tensor, Tensor, Tensor | int], Tensor] | None = None,
                 multi_avg_fn: Callable[[PARAM_LIST, PARAM_LIST, Tensor | int], None]
                 | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged",
                             tensor(0, dtype=D.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Averages `model`'s current weights into this copy (copies them the first time)."""
        if self.use_buffers:
            ours: Iterable = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs: Iterable = itertools.chain(model.parameters(), model.buffers())
        else:
            ours, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(ours, theirs):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if first:
                p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                for avg_list, model_list in _group_by_dtype(averaged, current):
                    n_averaged = self.n_averaged.to(avg_list[0].device)
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(avg_list, model_list, n_averaged)
                        continue
                    # torch's CPU path: the per-tensor mean (its foreach kernels are GPU-only)
                    swa = get_swa_avg_fn()
                    for p_averaged, p_model in zip(avg_list, model_list, strict=True):
                        p_averaged.copy_(swa(p_averaged, p_model, n_averaged))
            else:
                for p_averaged, p_model in zip(averaged, current, strict=True):
                    n_averaged = self.n_averaged.to(p_averaged.device)
                    p_averaged.detach().copy_(self.avg_fn(p_averaged.detach(), p_model,
                                                          n_averaged))
        if not self.use_buffers:
            # buffers are copied from the model, not averaged (update_bn can recompute them)
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recomputes the running statistics of `model`'s batch norm layers with one pass over
    `loader` (each batch a tensor, or a list/tuple whose first item is the input): the stats
    are reset and then averaged equally over the batches (momentum None)."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its `swa_lr` over `anneal_epochs` epochs ("cos" or
    "linear"), then keeps it there; each group's swa_lr is stored in the group."""

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: Literal["cos", "linear"] = "cos",
                 last_epoch: int = -1) -> None:
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for value, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        """The lr before annealing that, at weight alpha towards swa_lr, gives `lr`."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        """The learning rates for the current step (called by step())."""
        if not self._get_lr_called_within_step:
            _ws.warn("To get the last learning rate computed by the scheduler, please use "
                     "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        # undo the previous step's interpolation to recover the lr it started from, so lr
        # changes made by others between steps carry over
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy: Literal["cos", "linear"]) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = (self._cosine_anneal if anneal_strategy == "cos"
                            else self._linear_anneal)

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
