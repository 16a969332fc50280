"""Samples for layer_norm, batch_norm, group_norm, instance_norm and rms_norm."""

from tests.op_samples import Sample, arr, pos

F = "nn.functional."
# batch_norm(input, running_mean, running_var, weight, bias): the running stats are buffers
BN_GRAD = (True, False, False, True, True)

SAMPLES = [
    # layer_norm: normalized_shape of 1 and 2 dims, with and without the affine parameters
    Sample(F + "layer_norm", (arr(2, 3, 4), (4,), arr(4), arr(4)), name="affine"),
    Sample(F + "layer_norm", (arr(2, 3, 4), (3, 4)), name="2d_plain"),
    Sample(F + "layer_norm", (arr(2, 3, 4), [3, 4], arr(3, 4), None), name="weight_only"),
    Sample(F + "layer_norm", (arr(2, 3), (3,), None, arr(3)), {"eps": 1e-3}, name="bias_eps"),
    Sample(F + "layer_norm", (arr(4, 3, noncontig=True), (3,), arr(3), arr(3)),
           name="noncontig"),
    Sample(F + "layer_norm", (arr(0, 3), (3,), arr(3), arr(3)), name="empty_batch"),
    Sample(F + "layer_norm", (arr(5), (5,)), name="1d"),
    Sample("layer_norm", (arr(2, 4), (4,), arr(4), arr(4)), name="torch"),
    # the native_* ops also return mean / rstd, which carry no gradient (as in torch), so
    # gradcheck would see them as wrong; their gradients are checked through the F.* samples
    Sample("native_layer_norm", (arr(2, 3, 4), [3, 4], arr(3, 4), arr(3, 4), 1e-5),
           gradcheck=False),
    # batch_norm: training (batch stats, running stats updated) and eval (running stats)
    Sample(F + "batch_norm", (arr(4, 3), arr(3), pos(3), arr(3), arr(3)), {"training": True},
           requires_grad=BN_GRAD, name="train_2d"),
    Sample(F + "batch_norm", (arr(2, 3, 2), arr(3), pos(3), arr(3), arr(3)),
           {"training": True, "momentum": 0.3, "eps": 1e-3}, requires_grad=BN_GRAD,
           name="train_3d_momentum"),
    Sample(F + "batch_norm", (arr(2, 2, 2, 2), None, None), {"training": True},
           name="train_4d_no_stats"),
    Sample(F + "batch_norm", (arr(2, 3, 2), arr(3), pos(3), arr(3), arr(3)),
           requires_grad=BN_GRAD, name="eval"),
    Sample(F + "batch_norm", (arr(3, 2), arr(2), pos(2)), requires_grad=(True, False, False),
           name="eval_plain"),
    Sample(F + "batch_norm", (arr(2, 3, 2, noncontig=True), None, None, arr(3), arr(3)),
           {"training": True}, name="train_noncontig"),
    Sample("batch_norm", (arr(4, 2), arr(2), arr(2), arr(2), pos(2), True, 0.1, 1e-5, False),
           requires_grad=(True, True, True, False, False), name="torch"),
    Sample("native_batch_norm", (arr(4, 2), arr(2), arr(2), arr(2), pos(2), True, 0.1, 1e-5),
           requires_grad=(True, True, True, False, False), gradcheck=False, name="train"),
    Sample("native_batch_norm", (arr(4, 2), arr(2), arr(2), arr(2), pos(2), False, 0.1, 1e-5),
           requires_grad=(True, True, True, False, False), gradcheck=False, name="eval"),
    # group_norm
    Sample(F + "group_norm", (arr(2, 4, 3), 2, arr(4), arr(4)), name="affine"),
    # two channels a group: a variance of two float32 values, whose rounding shows at 1e-4
    Sample(F + "group_norm", (arr(3, 4), 2), name="no_spatial", parity_rtol=1e-3),
    Sample(F + "group_norm", (arr(1, 4, 2, 2), 1, arr(4), None), {"eps": 1e-3}, name="one"),
    Sample("group_norm", (arr(2, 2, 3), 2, arr(2), arr(2)), name="torch"),
    Sample("native_group_norm", (arr(2, 4, 3), arr(4), arr(4), 2, 4, 3, 2, 1e-5),
           gradcheck=False),
    # instance_norm is batch_norm over the (1, N*C, *) reshape
    Sample(F + "instance_norm", (arr(2, 3, 4),), name="plain"),
    Sample(F + "instance_norm", (arr(2, 2, 3), arr(2), pos(2), arr(2), arr(2)),
           requires_grad=BN_GRAD, name="affine_running"),
    Sample(F + "instance_norm", (arr(2, 2, 3), arr(2), pos(2)), {"use_input_stats": False},
           requires_grad=(True, False, False), name="eval"),
    # normalize
    Sample(F + "normalize", (arr(2, 3),), name="default"),
    Sample(F + "normalize", (arr(2, 3, 2),), {"p": 1.0, "dim": -1}, name="p1"),
    # rms_norm
    Sample(F + "rms_norm", (arr(2, 3), (3,), arr(3)), name="weight"),
    Sample(F + "rms_norm", (arr(2, 3, 2), (3, 2)), {"eps": 1e-3}, name="2d_eps"),
]
