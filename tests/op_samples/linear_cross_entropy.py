"""Samples for nn.functional.linear_cross_entropy's reference path (options=None: linear,
then cross_entropy), K-dimensional weights, class probabilities and unbatched input included.
The chunked path (options given) has its own tests in tests/nn/test_linear_cross_entropy*.py."""

import numpy as np

from tests.op_samples import Sample, arr, pos

LCE = "nn.functional.linear_cross_entropy"


def _probs(*shape):
    p = pos(*shape)
    return p / p.sum(axis=1 if len(shape) > 1 else 0, keepdims=True)


T5 = np.array([1, -100, 3, 0, 3], dtype=np.int64)
T5_3 = np.array([1, 2, 3, 0, 3], dtype=np.int64)  # ignore_index=3 ignores two rows
TK = np.array([[[0, 2], [1, 3]], [[3, 3], [0, 1]]], dtype=np.int64)  # (N=2, d1=2, d2=2)

SAMPLES = []
for red in ("mean", "sum", "none"):
    SAMPLES += [
        Sample(LCE, (arr(5, 3), arr(4, 3), T5), {"reduction": red}, name=red),
        Sample(LCE, (arr(5, 3), arr(4, 3), T5, arr(4)), {"reduction": red},
               name=f"bias_{red}", requires_grad=(True, True, False, True)),
        Sample(LCE, (arr(2, 3), arr(4, 2, 2, 3), TK), {"reduction": red}, name=f"kdim_{red}"),
        Sample(LCE, (arr(3), arr(4, 3), np.array(2, dtype=np.int64)), {"reduction": red},
               name=f"unbatched_{red}"),
        Sample(LCE, (arr(2, 3), arr(4, 3), _probs(2, 4)), {"reduction": red},
               name=f"probs_{red}",
               # the probability-target mean divides by a C++ double in torch (DivBackward1)
               check_node=red != "mean"),
        Sample(LCE, (arr(5, 3), arr(4, 3), T5_3, pos(4)),
               {"reduction": red, "ignore_index": 3, "label_smoothing": 0.2},
               requires_grad=(True, True, False, False), name=f"weight_smooth_{red}"),
    ]


def _fix_kwargs() -> None:
    # a fourth positional array is linear_bias, a pos(4) class weight is `weight`: both are
    # keyword-only in linear_cross_entropy, so the samples call through a function instead
    for i, s in enumerate(SAMPLES):
        if len(s.args) == 4:
            key = "weight" if "weight" in s.name else "linear_bias"
            SAMPLES[i] = Sample(_with_keyword(key), s.args, s.kwargs, s.name, s.requires_grad,
                                check_node=s.check_node)


def _with_keyword(key: str):
    def linear_cross_entropy(lib, x, w, t, extra, **kwargs):
        return lib.nn.functional.linear_cross_entropy(x, w, t, **{key: extra}, **kwargs)
    linear_cross_entropy.__name__ = f"linear_cross_entropy_{key}"
    return linear_cross_entropy


_fix_kwargs()
