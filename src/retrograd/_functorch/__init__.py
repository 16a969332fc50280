"""The function transforms behind retrograd.func (vmap, grad, vjp, jvp, jacrev, jacfwd, ...).

NOTE [Batched tensors]
vmap runs a function once on values that carry an extra batch dimension. Inside vmap a batched
value is a BatchedTensor: a wrapper subclass (NOTE [Wrapper subclasses]) whose shape is the
per-example shape and which holds the real value with its batch dimension moved to the front,
plus the vmap level that made it (nested vmaps make nested wrappers, innermost level
outermost). Every op on one reaches BatchedTensor.__torch_dispatch__, which unwraps the values
of the current (highest) level, applies the op's batching rule (batch_rules.py: align and
broadcast for pointwise ops, shift the dim arguments the schema declares for reductions and
view ops, batch matmul naturally) and wraps the results at the same level. An op without a rule
loops over the batch and stacks (fallback.py, with torch's performance warning). Because the
class is a wrapper subclass, autograd records nodes on the wrappers and runs the backward
formulas on them, so grad inside vmap computes per-example gradients with the same rules.
Moving a value into or out of vmap is itself differentiable (levels.py), so grad(vmap(f))
differentiates through the batched computation.
"""
