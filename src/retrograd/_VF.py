"""torch._VF: the op functions under their binding names, including the few torch keeps out of
its namespace (unique_dim) or shows there only behind a Python wrapper (unique_consecutive,
whose wrapper returns fewer outputs)."""

from __future__ import annotations

from retrograd._ops.registry import _NAMESPACE
from retrograd._ops.unique import VARIABLE_FUNCTIONS

# written on nn's cells, above this layer: found in the namespace when asked for
_FROM_NAMESPACE = frozenset({"lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell",
                             "rnn_tanh_cell", "rnn_relu_cell"})


def __getattr__(name: str):
    fn = VARIABLE_FUNCTIONS.get(name) or _NAMESPACE.get(name)
    if fn is None and name in _FROM_NAMESPACE:
        import retrograd

        fn = getattr(retrograd, name)
    if fn is None:
        raise AttributeError(f"module 'retrograd._VF' has no attribute '{name}'")
    return fn
