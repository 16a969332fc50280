"""retrograd.nn.functional: the functional forms of layers, activations and losses.

The functions are declared next to their ops in retrograd._ops and registered with
`register_functional`; this module gathers them.
"""

from retrograd._ops.registry import _FUNCTIONAL

globals().update(_FUNCTIONAL)

from retrograd.nn import grad  # noqa: E402, F401 - F.grad is nn.grad, as in torch
from retrograd.nn._linear_cross_entropy import linear_cross_entropy  # noqa: E402, F401
