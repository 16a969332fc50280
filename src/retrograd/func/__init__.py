"""retrograd.func: composable function transforms, as torch.func (NOTE [Batched tensors])."""

from retrograd._functorch.vmap import vmap

__all__ = ["vmap"]
