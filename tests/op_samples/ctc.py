"""Samples for the CTC loss.

torch's gradient of _ctc_loss is the one of its loss through a log_softmax (it adds exp(lp)
terms that log_softmax's backward cancels), so, as torch's OpInfo does, the samples apply
log_softmax to the input first. torch has no forward-mode derivative for _ctc_loss and does not
differentiate its gradient again, and every gradcheck sample also runs forward mode: these are
parity samples (values, gradients, nodes against torch); gradcheck runs in
tests/test_ctc_loss.py.
"""

import numpy as np

from tests.op_samples import Sample, arr


def ctc_loss_of_log_softmax(lib, x, targets, input_lengths, target_lengths, **kwargs):
    return lib.nn.functional.ctc_loss(x.log_softmax(2), targets, input_lengths, target_lengths,
                                      **kwargs)


def ctc_loss_unbatched(lib, x, targets, input_lengths, target_lengths, **kwargs):
    return lib.nn.functional.ctc_loss(x.log_softmax(1), targets, input_lengths, target_lengths,
                                      **kwargs)


def _ids(*rows):
    return np.array(rows, dtype=np.int64)


PADDED = _ids([1, 2, 2], [3, 1, 0], [2, 3, 1])   # (N, S) targets, repeats included
FLAT = _ids(1, 2, 2, 3, 1, 2)                    # the same targets concatenated (3 + 2 + 1)

SAMPLES = []
for red in ("none", "mean", "sum"):
    SAMPLES += [
        Sample(ctc_loss_of_log_softmax, (arr(6, 3, 4), PADDED, [6, 5, 4], [3, 2, 1]),
               {"reduction": red}, name=f"padded_{red}", gradcheck=False),
        Sample(ctc_loss_of_log_softmax, (arr(6, 3, 4), FLAT, [6, 5, 4], [3, 2, 1]),
               {"reduction": red, "blank": 0}, name=f"flat_{red}", gradcheck=False),
        # one impossible alignment (3 labels with a repeat need 4 steps) zeroed
        Sample(ctc_loss_of_log_softmax, (arr(6, 3, 4), PADDED, [3, 5, 2], [3, 2, 0]),
               {"reduction": red, "zero_infinity": True}, name=f"zero_inf_{red}",
               gradcheck=False),
    ]
SAMPLES += [
    Sample(ctc_loss_of_log_softmax, (arr(5, 2, 5), _ids([0, 1], [4, 4]), [5, 4], [2, 2]),
           {"blank": 3}, name="blank3", gradcheck=False),
    Sample(ctc_loss_unbatched, (arr(5, 4), _ids(1, 3), [5], [2]), {"reduction": "none"},
           name="none", gradcheck=False),
    Sample(ctc_loss_unbatched, (arr(5, 4), _ids(2), [4], [1]), name="mean", gradcheck=False),
]
