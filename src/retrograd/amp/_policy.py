"""What CPU autocast does to each op: the dispatch mode that casts inputs by op name.

NOTE [Autocast]
CPU autocast is a dispatch mode (retrograd.utils._python_dispatch) that is on the mode stack
only while some thread has CPU autocast enabled, so ops pay nothing when it is off. The mode
looks the op's name up in the tables below (torch 2.13's CPU lists, as its behaviour shows
them, mapped to retrograd's op names): ops of the lower-precision list get their floating
inputs (float64 excepted) cast to the autocast dtype, ops of the float32 list get their
bfloat16/float16 inputs cast to float32, and all other ops run on what they are given. A cast
is `Tensor.to`, so its node is ToCopyBackward0 and gradients flow back to the original dtype.
Functions torch sees whole but retrograd builds from several ops cast at their entry (NOTE
[Autocast composites] in retrograd._ops.dispatch). Casts of float32 leaves that require grad
are cached for the outermost autocast region, as torch does with weights.
"""

from __future__ import annotations

from retrograd import _dtype as D
from retrograd._tensor import Tensor
from retrograd.utils._python_dispatch import TorchDispatchMode

LOWER = "lower"
FP32 = "fp32"

# torch's CPU lower-precision list (conv*, bmm, mm, linalg_vecdot, baddbmm, addmm, addbmm,
# linear, matmul, conv_transpose*, prelu, scaled_dot_product_attention, ...): the ops below,
# plus the composites linear, matmul, convNd, conv_transposeNd and sdpa
_LOWER_OPS = ("mm", "bmm", "addmm", "baddbmm", "addbmm", "convolution",
              "_scaled_dot_product_flash_attention_for_cpu")

# torch's CPU float32 list, where retrograd has the op; the composite losses (cross_entropy,
# kl_div, l1_loss, margin_ranking, hinge_embedding, cosine_embedding, poisson_nll) cast at
# their entry
_FP32_OPS = ("prod", "prod.dim_int", "binary_cross_entropy", "binary_cross_entropy_with_logits",
             "mse_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss", "nll_loss_forward",
             "nll_loss2d_forward", "reflection_pad1d", "reflection_pad2d",
             "replication_pad1d", "replication_pad2d", "replication_pad3d")

POLICY: dict[str, str] = {**dict.fromkeys(_LOWER_OPS, LOWER), **dict.fromkeys(_FP32_OPS, FP32)}


class AutocastMode(TorchDispatchMode):
    """Casts the inputs of listed ops while the calling thread has CPU autocast enabled."""

    def __init__(self, state) -> None:
        self._state = state  # the thread-local autocast state of retrograd.amp.autocast_mode

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        policy = POLICY.get(func.name())
        if policy is not None and self._state.enabled["cpu"]:
            args = self._cast_all(policy, args)
        return func(*args, **(kwargs or {}))

    def cast(self, policy: str, *tensors):
        """The composites' entry (NOTE [Autocast composites]): `tensors` cast by `policy`."""
        if not self._state.enabled["cpu"]:
            return tensors
        return self._cast_all(policy, tensors)

    def _cast_all(self, policy: str, values: tuple) -> tuple:
        target = self._state.dtype["cpu"] if policy == LOWER else D.float32
        return tuple(self._cast(v, target) for v in values)

    def _cast(self, value, target):
        if isinstance(value, Tensor):
            dt = value.dtype
            if dt is target or not dt.is_floating_point or dt is D.float64:
                return value
            if (target is not D.float32 and dt is D.float32 and self._state.cache_enabled
                    and value._requires_grad and value.grad_fn is None
                    and not value._is_view()):
                return self._cached(value, target)
            return value.to(target)
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], Tensor):
            return type(value)(self._cast(v, target) for v in value)
        return value

    def _cached(self, leaf: Tensor, target):
        cache = self._state.cache
        hit = cache.get(id(leaf))
        if hit is not None and hit[0] is leaf and hit[1].dtype is target:
            return hit[1]
        out = leaf.to(target)
        cache[id(leaf)] = (leaf, out)  # the leaf is held so that its id stays its own
        return out
