"""LazyLinear: a Linear layer whose in_features is read from its first input.

Until the first call its weight and bias are UninitializedParameters; the call sizes and
initializes them as Linear does and the module becomes a Linear (LazyModuleMixin).
"""

from __future__ import annotations

from typing import Any

from retrograd._tensor import Tensor
from retrograd.autograd.grad_mode import no_grad
from retrograd.nn.modules.lazy import LazyModuleMixin
from retrograd.nn.modules.linear import Linear
from retrograd.nn.parameter import UninitializedParameter

__all__ = ["LazyLinear"]


class LazyLinear(LazyModuleMixin, Linear):
    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        # a 0 x 0 Linear without bias: nothing to initialize before the shapes are known
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        """Infers in_features from `input` and initializes the parameters."""
        if self.has_uninitialized_params():
            me: Any = self  # its parameters are UninitializedParameters here
            with no_grad():
                self.in_features = input.shape[-1]
                me.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    me.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            # materialized by load_state_dict: in_features is the loaded weight's
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is "
                                     "not equal to in_features from self.weight: "
                                     f"{self.weight.shape[-1]}")
            self.in_features = input.shape[-1]
