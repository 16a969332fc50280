"""LazyLinear: a Linear layer whose in_features is read from its first input.

retrograd has no uninitialized parameters: until the first forward the weight and bias are
empty placeholders (the same Parameter objects later hold the real values, so an optimizer
built early still sees them); the first call sizes and initializes them as Linear does and
the module becomes a Linear, as torch's does.
"""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd._tensor import Tensor
from retrograd.autograd.grad_mode import no_grad
from retrograd.nn.modules.linear import Linear
from retrograd.nn.modules.module import Module
from retrograd.nn.parameter import Parameter

__all__ = ["LazyLinear"]


class LazyLinear(Linear):
    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self._factory = {"device": device, "dtype": dtype}
        self.weight = Parameter(retrograd.empty(0, **self._factory))
        if bias:
            self.bias = Parameter(retrograd.empty(0, **self._factory))
        else:
            self.register_parameter("bias", None)
        self._initialize_hook = self.register_forward_pre_hook(_initialize_on_first_call)

    def has_uninitialized_params(self) -> bool:
        return self.in_features == 0 and self.weight.dim() == 1

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        """Infers in_features from `input` and initializes the parameters."""
        if not self.has_uninitialized_params():
            return
        with no_grad():
            self.in_features = input.shape[-1]
            self.weight.data = retrograd.empty(self.out_features, self.in_features,
                                               **self._factory)
            if self.bias is not None:
                self.bias.data = retrograd.empty(self.out_features, **self._factory)
            self.reset_parameters()


def _initialize_on_first_call(module: LazyLinear, args: tuple) -> None:
    module.initialize_parameters(args[0])
    module._initialize_hook.remove()
    del module._initialize_hook
    del module._factory
    # it becomes a Linear (torch swaps the class the same way)
    module.__class__ = module.cls_to_become  # type: ignore[assignment]
