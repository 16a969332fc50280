"""Samples for dropout, embedding, one_hot, pad and scaled_dot_product_attention."""

import numpy as np

from tests.op_samples import Sample, arr

F = "nn.functional."


def seeded(name: str, namespace: str = "nn.functional", clone: bool = False, **fixed):
    """f(lib, x, *args): lib.<namespace>.<name> after manual_seed(0), so every call of the
    function (gradcheck calls it many times) draws the same mask."""

    def f(lib, x, *args, **kwargs):
        lib.manual_seed(0)
        fn = lib
        for part in namespace.split(".") if namespace else ():
            fn = getattr(fn, part)
        return getattr(fn, name)(x.clone() if clone else x, *args, **fixed, **kwargs)

    f.__name__ = f"seeded_{name}" + ("_inplace" if clone else "")
    return f


def idx(*values):
    return np.array(values, dtype=np.int64)


IDX = np.array([[1, 3, 1], [4, 0, 2]], dtype=np.int64)

SAMPLES = [
    # dropout: masks come from each library's own generator (random=True: no value parity)
    Sample(seeded("dropout"), (arr(4, 3),), {"p": 0.5}, random=True, name="p05"),
    Sample(seeded("dropout", clone=True), (arr(4, 3),), {"p": 0.3, "inplace": True},
           random=True, name="inplace"),
    Sample(seeded("dropout"), (arr(4, 3, noncontig=True),), random=True, name="noncontig"),
    Sample(F + "dropout", (arr(2, 3),), {"p": 1.0}, name="p1"),
    Sample(F + "dropout", (arr(2, 3),), {"p": 0.0}, name="p0"),
    Sample(F + "dropout", (arr(2, 3),), {"training": False}, name="eval"),
    Sample(seeded("dropout", namespace=""), (arr(3, 2), 0.4, True), random=True, name="torch"),
    Sample(seeded("dropout2d"), (arr(2, 3, 2, 2),), random=True, name="4d"),
    Sample(seeded("dropout1d"), (arr(3, 4),), random=True, name="unbatched"),
    Sample(seeded("dropout3d"), (arr(1, 2, 2, 2, 2),), {"p": 0.6}, random=True, name="5d"),
    Sample(seeded("alpha_dropout"), (arr(4, 3),), {"p": 0.3, "training": True}, random=True,
           name="train"),
    Sample(F + "alpha_dropout", (arr(4, 3),), name="eval_default"),
    Sample(seeded("feature_alpha_dropout"), (arr(2, 3, 2),), {"training": True}, random=True,
           name="train"),
    Sample(seeded("alpha_dropout", namespace=""), (arr(2, 3), 0.4, True), random=True,
           name="torch"),
    Sample(seeded("native_dropout", namespace=""), (arr(3, 4), 0.5, True), random=True,
           name="train"),
    # p = 0 keeps everything, so gradcheck sees a deterministic op
    Sample("native_dropout", (arr(3, 4), 0.0, True), name="p0"),
    Sample("native_dropout", (arr(3, 4), 0.5, False), name="eval"),
    # embedding
    Sample(F + "embedding", (IDX, arr(5, 3))),
    # scale_grad_by_freq scales the gradient on purpose, so it is not the finite-difference one
    Sample(F + "embedding", (idx(2, 2, 0), arr(4, 2)), {"scale_grad_by_freq": True},
           gradcheck=False, name="freq"),
    Sample(F + "embedding", (np.array(3), arr(4, 2)), name="scalar_index"),
    Sample(F + "embedding", (IDX.astype(np.int32), arr(5, 3, noncontig=True)),
           name="int32_noncontig"),
    # the padding row gets no gradient although the output uses it, so finite differences
    # disagree by design (in torch as well); values and gradients are compared with torch
    Sample(F + "embedding", (IDX, arr(5, 3)), {"padding_idx": 1}, gradcheck=False,
           name="padding_idx"),
    Sample(F + "embedding", (IDX, arr(5, 3)), {"padding_idx": -1, "scale_grad_by_freq": True},
           gradcheck=False, name="padding_neg_freq"),
    Sample("embedding", (arr(5, 3), IDX), name="torch"),
    # one_hot (not differentiable)
    Sample(F + "one_hot", (idx(0, 3, 1),)),
    Sample(F + "one_hot", (IDX, 6), name="num_classes"),
    Sample(F + "one_hot", (np.zeros((0,), np.int64), 3), name="empty"),
    # pad: constant (with cropping), reflect, replicate, circular, for 1-3 padded dims
    Sample(F + "pad", (arr(2, 3), (1, 2)), name="constant"),
    Sample(F + "pad", (arr(2, 3, 2), (1, 0, -1, 2)), {"value": 1.5}, name="constant_crop"),
    Sample(F + "pad", (arr(2, 2, 3, noncontig=True), (0, 1, 1, 1, 1, 0)), name="constant_3"),
    Sample(F + "pad", (np.arange(6).reshape(2, 3), (1, 1)), {"value": 2.7}, name="constant_int"),
    Sample("constant_pad_nd", (arr(2, 3), (2, -1)), name="torch"),
]

for mode in ("reflect", "replicate", "circular"):
    SAMPLES += [
        Sample(F + "pad", (arr(2, 3), (2, 1)), {"mode": mode}, name=f"{mode}_1d_unbatched"),
        Sample(F + "pad", (arr(1, 2, 4), (1, -1)), {"mode": mode}, name=f"{mode}_1d_crop"),
        Sample(F + "pad", (arr(1, 2, 3), (1, 2, 1, 0)), {"mode": mode}, name=f"{mode}_2d"),
        Sample(F + "pad", (arr(1, 1, 3, 3, noncontig=True), (1, 1, 0, 2)), {"mode": mode},
               name=f"{mode}_2d_noncontig"),
        Sample(F + "pad", (arr(1, 2, 2, 3), (1, 0, 1, 1, 0, 1)), {"mode": mode},
               name=f"{mode}_3d_unbatched"),
    ]
# torch's circular padding is a composite of slice copies (grad_fn CopySlices); retrograd
# gathers with one op, so only that node name differs
for s in SAMPLES:
    if s.name.startswith("circular"):
        s.check_node = False

Q, K, V = arr(1, 2, 3, 4), arr(1, 2, 2, 4), arr(1, 2, 2, 4)
SDPA = F + "scaled_dot_product_attention"
SAMPLES += [
    Sample(SDPA, (Q, K, V), name="flash"),
    Sample(SDPA, (Q, K, V), {"is_causal": True, "scale": 0.7}, name="flash_causal"),
    Sample(SDPA, (Q, K, V, arr(3, 2)), requires_grad=(True, True, True, False),
           name="flash_float_mask"),
    Sample(SDPA, (Q, K, V, np.array([[True, False], [False, False], [True, True]])),
           name="flash_bool_mask_dead_row"),
    Sample(SDPA, (arr(1, 4, 2, 3), arr(1, 2, 2, 3), arr(1, 2, 2, 3)), {"enable_gqa": True},
           name="flash_gqa"),
    # math path (torch's composite: matmul / softmax): 3-D inputs, other value head size
    Sample(SDPA, (arr(2, 3, 4), arr(2, 2, 4), arr(2, 2, 3)), name="math_3d"),
    Sample(SDPA, (arr(3, 4), arr(2, 4), arr(2, 2)), {"is_causal": True}, name="math_2d_causal"),
    Sample(SDPA, (arr(1, 1, 2, 3), arr(1, 1, 3, 3), arr(1, 1, 3, 2), arr(2, 3)),
           {"scale": -0.5}, requires_grad=(True, True, True, False), name="math_mask_neg_scale"),
    Sample(seeded("scaled_dot_product_attention"), (Q, K, V), {"dropout_p": 0.5}, random=True,
           name="math_dropout"),
]
