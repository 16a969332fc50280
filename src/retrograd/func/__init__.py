"""retrograd.func: composable function transforms, as torch.func (NOTE [Batched tensors],
NOTE [Transforms on one tape])."""

from retrograd._functorch.batch_norm_replacement import replace_all_batch_norm_modules_
from retrograd._functorch.eager_transforms import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from retrograd._functorch.functional_call import functional_call, stack_module_state
from retrograd._functorch.vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "replace_all_batch_norm_modules_", "stack_module_state", "vjp", "vmap"]
