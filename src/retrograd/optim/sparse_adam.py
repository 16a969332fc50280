"""SparseAdam: Adam for sparse gradients (e.g. nn.Embedding(sparse=True)). retrograd has no
sparse tensors, so, as torch does for a dense gradient, its step refuses every gradient."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd._tensor import Tensor
from retrograd.optim.optimizer import Optimizer, _eval_closure

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam: its constructor checks and param groups; step() raises torch's
    error for dense gradients, the only kind retrograd makes."""

    def __init__(self, params: Any, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def step(self, closure: Callable | None = None):
        """Performs one optimization step; `closure` re-evaluates the loss and returns it."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
        return loss
