"""Samples for the loss functions of nn.functional."""

import numpy as np

from tests.op_samples import Sample, arr, pos

F = "nn.functional."
REDUCTIONS = ("mean", "sum", "none")


def probs(*shape):
    """Rows summing to 1 along dim 1 (dim 0 for 1-D): class-probability targets."""
    p = pos(*shape)
    return p / p.sum(axis=1 if len(shape) > 1 else 0, keepdims=True)


def idx(*values):
    return np.array(values, dtype=np.int64)


T23 = idx(0, 2)          # targets for (2, 3) inputs
T43 = idx(1, -100, 2, 0)  # with the default ignore_index present
SIGNS4 = np.array([1.0, -1.0, -1.0, 1.0])  # +-1 targets of the margin losses
T4D = np.array([[[0, 2], [1, -100]], [[2, 2], [0, 1]]], dtype=np.int64)  # (2, 2, 2)

SAMPLES = []
for red in REDUCTIONS:
    SAMPLES += [
        Sample(F + "mse_loss", (arr(2, 3), arr(2, 3)), {"reduction": red}, name=red),
        Sample(F + "l1_loss", (arr(2, 3), arr(2, 3)), {"reduction": red}, name=red),
        Sample(F + "smooth_l1_loss", (arr(2, 3), arr(2, 3)), {"reduction": red, "beta": 0.5},
               name=red),
        Sample(F + "huber_loss", (arr(2, 3, low=-2, high=2), arr(2, 3)),
               {"reduction": red, "delta": 0.7}, name=red),
        Sample(F + "binary_cross_entropy", (pos(2, 3, low=0.1, high=0.9), pos(2, 3, low=0, high=1)),
               {"reduction": red}, name=red),
        Sample(F + "binary_cross_entropy_with_logits", (arr(2, 3, low=-3, high=3),
               pos(2, 3, low=0, high=1)), {"reduction": red}, name=red),
        Sample(F + "nll_loss", (arr(4, 3), T43), {"reduction": red}, name=red),
        Sample(F + "nll_loss", (arr(4, 3), T43, pos(3)), {"reduction": red},
               requires_grad=(True, False, False), name=f"weight_{red}"),
        Sample(F + "nll_loss", (arr(2, 3, 2, 2), T4D), {"reduction": red, "weight": pos(3)},
               requires_grad=(True, False, False), name=f"2d_{red}"),
        Sample(F + "nll_loss", (arr(2, 3, 4), idx(0, 1, 2, 1, 2, 0, 0, 1).reshape(2, 4)),
               {"reduction": red}, name=f"3d_{red}"),
        Sample(F + "cross_entropy", (arr(4, 3), T43), {"reduction": red}, name=red),
        Sample(F + "cross_entropy", (arr(4, 3), T43), {"reduction": red, "label_smoothing": 0.2,
               "weight": pos(3)}, requires_grad=(True, False, False), name=f"smooth_w_{red}"),
        Sample(F + "cross_entropy", (arr(2, 3), probs(2, 3)), {"reduction": red},
               name=f"probs_{red}",
               # torch's mean divides by a C++ double (div.Scalar, DivBackward1); retrograd has
               # only div.Tensor, so that one node name differs
               check_node=red != "mean"),
        Sample(F + "kl_div", (arr(2, 3), pos(2, 3, low=0.1, high=1)), {"reduction": red},
               name=red),
        Sample(F + "margin_ranking_loss", (arr(4), arr(4), SIGNS4), {"margin": 0.2,
               "reduction": red}, name=red),
        Sample(F + "hinge_embedding_loss", (arr(2, 2), SIGNS4.reshape(2, 2)),
               {"margin": 0.6, "reduction": red}, name=red),
        Sample(F + "cosine_embedding_loss", (arr(3, 2), arr(3, 2), idx(1, -1, -1)),
               {"margin": -0.9, "reduction": red}, name=red),
        Sample(F + "soft_margin_loss", (arr(2, 3), SIGNS4[:3].astype(np.float64)),
               {"reduction": red}, requires_grad=(True, False), name=red),
        Sample(F + "multilabel_soft_margin_loss", (arr(2, 3), pos(2, 3, low=0, high=1)),
               {"reduction": red}, name=red),
        Sample(F + "poisson_nll_loss", (arr(2, 3), pos(2, 3, low=0, high=3)),
               {"reduction": red}, name=red),
        Sample(F + "gaussian_nll_loss", (arr(2, 3), arr(2, 3), pos(2, 3)),
               {"reduction": red}, name=red),
    ]

SAMPLES += [
    # mse / l1 / huber: broadcast target, per-element weights, defaults
    Sample(F + "mse_loss", (arr(2, 3), arr(3)), name="broadcast"),
    Sample(F + "mse_loss", (arr(2, 3), arr(2, 3)), {"weight": pos(2, 3)}, name="weight"),
    Sample(F + "mse_loss", (arr(0, 3), arr(0, 3)), {"reduction": "sum"}, name="empty"),
    Sample(F + "l1_loss", (arr(2, 3), arr(2, 3)), {"weight": pos(2, 3), "reduction": "sum"},
           name="weight"),
    Sample(F + "smooth_l1_loss", (arr(2, 3, low=-3, high=3), arr(2, 3)), name="default"),
    Sample(F + "smooth_l1_loss", (arr(2, 3), arr(2, 3)), {"beta": 0.0}, name="beta0"),
    Sample(F + "huber_loss", (arr(2, 3, low=-2, high=2), arr(2, 3)), {"weight": pos(2, 3)},
           name="weight"),
    # binary cross entropy: weights, pos_weight (not differentiable in torch either)
    Sample(F + "binary_cross_entropy", (pos(2, 3, low=0.1, high=0.9), pos(2, 3, low=0, high=1),
           pos(2, 3)), requires_grad=(True, True, False), name="weight"),
    Sample(F + "binary_cross_entropy", (pos(2, 3, low=0.1, high=0.9), pos(2, 3, low=0, high=1),
           pos(3)), {"reduction": "sum"}, requires_grad=(True, True, False),
           name="weight_broadcast"),
    Sample(F + "binary_cross_entropy_with_logits", (arr(2, 3, low=-3, high=3),
           pos(2, 3, low=0, high=1)), {"weight": pos(2, 3), "pos_weight": pos(3)},
           requires_grad=(True, True, False, False), name="weights"),
    Sample(F + "binary_cross_entropy_with_logits", (arr(2, 3, low=-30, high=30),
           pos(2, 3, low=0, high=1)), {"pos_weight": pos(3), "reduction": "none"},
           requires_grad=(True, True, False), name="pos_weight_large_logits"),
    Sample("binary_cross_entropy_with_logits", (arr(3), pos(3, low=0, high=1)), name="torch"),
    # nll_loss: 1-D input, custom ignore_index, 5-D input
    Sample(F + "nll_loss", (arr(3), np.array(1)), name="1d"),
    Sample(F + "nll_loss", (arr(4, 3), idx(1, 0, 2, 0)), {"ignore_index": 0}, name="ignore_0"),
    # every target ignored: the mean is 0 / 0 = nan as in torch, so no finite differences
    Sample(F + "nll_loss", (arr(2, 3), idx(-100, -100)), gradcheck=False, name="all_ignored"),
    Sample(F + "nll_loss", (arr(1, 2, 2, 1, 2), idx(0, 1, 1, 0).reshape(1, 2, 1, 2)),
           {"reduction": "none"}, name="5d"),
    # cross_entropy: spatial targets, 1-D input, probabilities with smoothing and weights
    Sample(F + "cross_entropy", (arr(2, 3, 2, 2), T4D), name="2d"),
    Sample(F + "cross_entropy", (arr(2, 3, 2, 2), T4D), {"label_smoothing": 0.1,
           "reduction": "none"}, name="2d_smooth"),
    Sample(F + "cross_entropy", (arr(3), np.array(2)), name="1d"),
    Sample(F + "cross_entropy", (arr(3), np.array(2)), {"label_smoothing": 0.3}, name="1d_smooth"),
    Sample(F + "cross_entropy", (arr(2, 3), probs(2, 3), pos(3)), {"label_smoothing": 0.25,
           "reduction": "sum"}, requires_grad=(True, True, False), name="probs_smooth_w"),
    Sample(F + "cross_entropy", (arr(3), probs(3)), {"reduction": "sum"}, name="probs_1d"),
    Sample(F + "cross_entropy", (arr(2, 3, 2), probs(2, 3, 2)), {"reduction": "none"},
           name="probs_3d"),
    # kl_div: batchmean, log-space targets
    Sample(F + "kl_div", (arr(2, 3), pos(2, 3, low=0.1, high=1)), {"reduction": "batchmean"},
           name="batchmean"),
    Sample(F + "kl_div", (arr(2, 3), arr(2, 3)), {"reduction": "sum", "log_target": True},
           name="log_target"),
    Sample(F + "kl_div", (arr(2, 3), arr(2, 3)), {"reduction": "none", "log_target": True},
           name="log_target_none"),
    Sample("kl_div", (arr(2, 3), pos(2, 3, low=0.1, high=1)), name="torch"),
    # margin / likelihood losses: options
    Sample(F + "cosine_embedding_loss", (arr(2), arr(2), np.array(-1)), name="unbatched"),
    Sample(F + "multilabel_soft_margin_loss", (arr(2, 3), pos(2, 3, low=0, high=1), pos(3)),
           requires_grad=(True, True, False), name="weight"),
    Sample(F + "poisson_nll_loss", (pos(2, 3), pos(2, 3, low=0, high=3)),
           {"log_input": False, "full": True}, name="full"),
    Sample(F + "gaussian_nll_loss", (arr(2, 3), arr(2, 3), pos(2)), {"full": True},
           name="homoscedastic_full"),
    # torch passes no gradient through the clamp (straight through), so finite differences
    # disagree where var < eps by design: parity with torch checks the gradients instead
    Sample(F + "gaussian_nll_loss", (arr(2, 3), arr(2, 3), np.array([[0.3], [1.4]])),
           {"eps": 0.7}, name="clamped_var", gradcheck=False),
]
