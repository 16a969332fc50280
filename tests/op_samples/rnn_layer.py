"""Samples for mkldnn_rnn_layer (one LSTM layer and direction, NOTE [Fused LSTM layer]): its
output, final hidden and cell states (the fourth output, oneDNN's workspace in torch, is
opaque and differs in shape)."""

from tests.op_samples import Sample, arr


def _layer(reverse: bool, has_biases: bool = True):
    def f(lib, x, w_ih, w_hh, b_ih, b_hh, h0, c0):
        out, hy, cy, _ = lib.mkldnn_rnn_layer(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse, [], 2,
                                              h0.shape[-1], 1, has_biases, False, False, True)
        return out, hy, cy

    f.__name__ = f"mkldnn_rnn_layer_{'reverse' if reverse else 'forward'}"
    return f


def _args(steps: int, batch: int, inputs: int, hidden: int) -> tuple:
    return (arr(steps, batch, inputs), arr(4 * hidden, inputs), arr(4 * hidden, hidden),
            arr(4 * hidden), arr(4 * hidden), arr(batch, hidden), arr(batch, hidden))


SAMPLES = [
    Sample(_layer(False), _args(3, 2, 4, 3), name="forward"),
    Sample(_layer(True), _args(4, 1, 2, 2), name="reverse"),
    Sample(_layer(False), _args(2, 3, 3, 2), name="states_only_need_grad",
           requires_grad=(False, False, False, False, False, True, True)),
]
