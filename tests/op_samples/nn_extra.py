"""Samples for the activations, pools, losses and samplers of nn.functional added with
_ops/shrink.py, celu.py, prelu.py, rrelu.py, activation_composites.py and their neighbours."""

import numpy as np

from tests.op_samples import Sample, arr, pos
from tests.op_samples.activation import inplace_f
from tests.op_samples.nn_misc import seeded

F = "nn.functional."
WIDE = dict(low=-2.0, high=2.0)


def torch_inplace(name: str):
    """f(lib, x, *args): lib.<name>(x.clone(), *args), the torch-namespace in-place form."""

    def f(lib, x, *args, **kwargs):
        return getattr(lib, name)(x.clone(), *args, **kwargs)

    f.__name__ = f"torch_{name}"
    return f


ACTIVATIONS = [
    Sample(F + "hardshrink", (arr(3, 4, **WIDE),), name="default"),
    Sample(F + "hardshrink", (arr(3, 4, **WIDE),), {"lambd": 1.2}, name="lambd"),
    Sample("hardshrink", (arr(4, 3, noncontig=True, **WIDE),), name="noncontig"),
    Sample("Tensor.hardshrink", (arr(2, 5, **WIDE), 0.3)),
    Sample(F + "softshrink", (arr(3, 4, **WIDE),), name="default"),
    Sample(F + "softshrink", (arr(3, 4, **WIDE),), {"lambd": 0.25}, name="lambd"),
    Sample(F + "tanhshrink", (arr(3, 4, **WIDE),)),
    Sample(F + "softsign", (arr(3, 4, **WIDE),)),
    Sample(F + "softmin", (arr(3, 4),), {"dim": 1}, name="dim1"),
    Sample(F + "softmin", (arr(2, 3, 2),), {"dim": 0, "dtype": None}, name="dim0"),
    Sample(F + "celu", (arr(3, 4, **WIDE),), name="default"),
    Sample(F + "celu", (arr(3, 4, **WIDE),), {"alpha": 0.5}, name="alpha"),
    Sample("celu", (arr(3, 4, **WIDE), 2.0), name="torch_ns"),
    Sample(inplace_f("celu", inplace=True), (arr(3, 4, **WIDE),), {"alpha": 1.5}),
    Sample(inplace_f("celu_"), (arr(3, 4, **WIDE),)),
    Sample(torch_inplace("celu_"), (arr(3, 4, **WIDE),)),
    Sample(F + "prelu", (arr(2, 3, 4), pos(3, low=0.1, high=0.4)), name="per_channel"),
    Sample(F + "prelu", (arr(2, 3, 4), pos(1, low=0.1, high=0.4)), name="shared"),
    Sample(F + "prelu", (arr(5), pos(1, low=0.1, high=0.4)), name="1d"),
    Sample(F + "prelu", (arr(4, 3), pos(low=0.1, high=0.4)), name="scalar_weight"),
    Sample("prelu", (arr(2, 3), pos(3, low=0.1, high=0.4)), name="torch_ns"),
    Sample("Tensor.prelu", (arr(2, 2, 3), pos(2, low=0.1, high=0.4))),
    Sample(F + "rrelu", (arr(3, 4, **WIDE),), name="eval"),
    Sample(F + "rrelu", (arr(3, 4, **WIDE), 0.1, 0.6), name="eval_bounds"),
    Sample(inplace_f("rrelu", inplace=True), (arr(3, 4, **WIDE),), name="eval"),
    Sample(inplace_f("rrelu_"), (arr(3, 4, **WIDE),), name="eval"),
    Sample("rrelu", (arr(3, 4, **WIDE),), name="torch_ns"),
    Sample(torch_inplace("rrelu_"), (arr(3, 4, **WIDE),), name="eval"),
    Sample(seeded("rrelu"), (arr(3, 4, **WIDE),), {"training": True}, random=True,
           name="training"),
    Sample(seeded("rrelu", clone=True), (arr(3, 4, **WIDE),),
           {"training": True, "inplace": True}, random=True, name="training"),
    Sample(seeded("rrelu", namespace=""), (arr(2, 5, **WIDE), 0.2, 0.3, True), random=True,
           name="torch_ns"),
]

POOLS = [
    Sample(F + "adaptive_max_pool1d", (arr(2, 3, 7), 3), name="batched"),
    Sample(F + "adaptive_max_pool1d", (arr(3, 8), 4), {"return_indices": True},
           name="indices"),
    Sample("adaptive_max_pool1d", (arr(2, 3, 5), 2), name="torch_ns"),
    Sample(F + "adaptive_max_pool2d", (arr(2, 3, 7, 6), (3, 4)), name="batched"),
    Sample(F + "adaptive_max_pool2d", (arr(3, 5, 5), 2), {"return_indices": True},
           name="indices"),
    Sample(F + "adaptive_max_pool2d", (arr(2, 5, 4), (None, 3)), name="none_size"),
    Sample(F + "adaptive_max_pool2d_with_indices", (arr(1, 2, 4, 4), 3)),
    Sample(F + "adaptive_max_pool3d", (arr(2, 2, 4, 5, 3), (2, 3, 2)), name="batched"),
    Sample(F + "adaptive_max_pool3d", (arr(2, 3, 4, 5), 2), {"return_indices": True},
           name="indices"),
    Sample(F + "max_pool3d", (arr(2, 2, 4, 5, 6), 2), name="batched"),
    Sample(F + "max_pool3d", (arr(2, 5, 5, 5), (2, 3, 2)),
           {"stride": (1, 2, 2), "padding": 1, "return_indices": True}, name="padded"),
    Sample(F + "max_pool3d", (arr(1, 2, 5, 5, 5), 2), {"stride": 2, "ceil_mode": True,
                                                       "dilation": (1, 2, 1)}, name="ceil"),
    Sample("max_pool3d", (arr(1, 2, 4, 4, 4), 2, 1), name="torch_ns"),
    Sample(F + "max_pool3d_with_indices", (arr(1, 2, 4, 4, 4), 2)),
    Sample(F + "avg_pool3d", (arr(2, 2, 4, 5, 6), 2), name="batched"),
    Sample(F + "avg_pool3d", (arr(2, 5, 5, 5), (2, 3, 2)),
           {"stride": (1, 2, 2), "padding": 1}, name="padded"),
    Sample(F + "avg_pool3d", (arr(1, 2, 5, 5, 5), 3),
           {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
           name="ceil_exclude_pad"),
    Sample(F + "avg_pool3d", (arr(1, 2, 4, 4, 4), 2), {"divisor_override": 3}, name="divisor"),
    Sample(F + "adaptive_avg_pool3d", (arr(2, 2, 4, 5, 6), (2, 3, 4)), name="batched"),
    Sample(F + "adaptive_avg_pool3d", (arr(2, 5, 5, 3), (3, None, 2)), name="none_size"),
    Sample(F + "adaptive_avg_pool3d", (arr(2, 2, 3, 3, 3), 1), name="global"),
    Sample(F + "lp_pool1d", (pos(2, 3, 8), 2, 3), name="p2"),
    Sample(F + "lp_pool1d", (pos(3, 7), 1.5, 2, 1), name="stride"),
    Sample(F + "lp_pool2d", (pos(2, 2, 6, 6), 3, 2), name="p3"),
    Sample(F + "lp_pool2d", (pos(2, 5, 6), 2, (2, 3), 1), {"ceil_mode": True}, name="ceil"),
    Sample(F + "lp_pool2d", (arr(1, 2, 4, 4), float("inf"), 2), name="inf"),
    Sample(F + "lp_pool3d", (pos(1, 2, 4, 4, 4), 2, 2), name="p2"),
]



def idx(*values):
    return np.array(values, dtype=np.int64)


def cosine_distance(lib, x1, x2):
    return 1 - lib.nn.functional.cosine_similarity(x1, x2)


def triplet_with_cosine(lib, a, p, n, **kwargs):
    return lib.nn.functional.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda x1, x2: cosine_distance(lib, x1, x2), **kwargs)


MULTILABEL = idx(1, 0, -1, 2, 2, 3, -1, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0, 2, 3, 4).reshape(4, 5)
NO_GRAD_WEIGHT = (True, False, False)

LOSSES = [
    Sample(F + "triplet_margin_loss", (arr(4, 5), arr(4, 5), arr(4, 5)), name="default"),
    Sample(F + "triplet_margin_loss", (arr(4, 5), arr(4, 5), arr(4, 5)),
           {"swap": True, "reduction": "sum", "margin": 0.5}, name="swap"),
    Sample(F + "triplet_margin_loss", (arr(4, 5), arr(4, 5), arr(4, 5)),
           {"p": 1, "reduction": "none", "margin": 2.0}, name="p1_none"),
    Sample(F + "triplet_margin_loss", (arr(5), arr(5), arr(5)), {"margin": 3.0},
           name="unbatched"),
    Sample("triplet_margin_loss", (arr(3, 4), arr(3, 4), arr(3, 4), 2.0, 2.0, 1e-6, False, 0),
           name="torch_ns"),
    Sample(F + "triplet_margin_with_distance_loss", (arr(4, 5), arr(4, 5), arr(4, 5)),
           {"margin": 2.0}, name="default"),
    Sample(F + "triplet_margin_with_distance_loss", (arr(4, 5), arr(4, 5), arr(4, 5)),
           {"swap": True, "reduction": "none", "margin": 2.0}, name="swap"),
    Sample(triplet_with_cosine, (arr(4, 5), arr(4, 5), arr(4, 5)), {"margin": 1.5}),
    Sample(F + "multi_margin_loss", (arr(4, 5), idx(1, 0, 3, 4)), name="default"),
    Sample(F + "multi_margin_loss", (arr(4, 5), idx(1, 0, 3, 4)), {"p": 2, "margin": 0.7},
           name="p2"),
    Sample(F + "multi_margin_loss", (arr(4, 5), idx(1, 0, 3, 4), 1, 0.5, pos(5)),
           {"reduction": "sum"}, requires_grad=NO_GRAD_WEIGHT, name="weight"),
    Sample(F + "multi_margin_loss", (arr(4, 5), idx(2, 2, 0, 1), 2, 1.0, pos(5)),
           {"reduction": "none"}, requires_grad=NO_GRAD_WEIGHT, name="p2_weight_none"),
    Sample(F + "multi_margin_loss", (arr(6), idx(3)), {"reduction": "none"}, name="vector"),
    Sample(F + "multilabel_margin_loss", (arr(4, 5), MULTILABEL), name="default"),
    Sample(F + "multilabel_margin_loss", (arr(4, 5), MULTILABEL), {"reduction": "none"},
           name="none"),
    Sample(F + "multilabel_margin_loss", (arr(4, 5), MULTILABEL), {"reduction": "sum"},
           name="sum"),
    Sample(F + "multilabel_margin_loss", (arr(5), idx(3, 1, -1, 0, 4)), name="vector"),
]



def pool_indices(lead: tuple, pooled: tuple, kernel: int = 2, seed: int = 0) -> np.ndarray:
    """Flat per-plane indices a max pool with kernel = stride could return: one position in
    each window, so unpooling places every value somewhere distinct."""
    rng = np.random.default_rng(seed)
    size = tuple(n * kernel for n in pooled)
    coords = np.meshgrid(*[np.arange(n) for n in pooled], indexing="ij")
    picks = [c * kernel + rng.integers(0, kernel, lead + pooled) for c in coords]
    flat = picks[0]
    for p, n in zip(picks[1:], size[1:]):
        flat = flat * n + p
    return flat.astype(np.int64)


OTHERS = [
    Sample(F + "channel_shuffle", (arr(2, 6, 3), 3), name="3d"),
    Sample(F + "channel_shuffle", (arr(2, 4, 2, 3), 2), name="4d"),
    Sample("channel_shuffle", (arr(1, 6, 2, 2), 2), name="torch_ns"),
    Sample("conv_tbc", (arr(5, 2, 3), arr(3, 3, 4), arr(4)), name="no_pad"),
    Sample("conv_tbc", (arr(4, 2, 3), arr(2, 3, 2), arr(2), 2), name="pad"),
    Sample(F + "conv_tbc", (arr(6, 1, 2), arr(3, 2, 3), arr(3)), {"pad": -1},
           name="negative_pad"),
    Sample(F + "local_response_norm", (arr(2, 5, 4), 3), name="3d"),
    Sample(F + "local_response_norm", (arr(2, 5, 3, 3), 2),
           {"alpha": 0.1, "beta": 0.5, "k": 2.0}, name="4d"),
    Sample(F + "local_response_norm", (arr(1, 4, 2, 2, 3), 4), {"alpha": 0.2}, name="5d"),
    Sample(seeded("gumbel_softmax"), (arr(3, 5),), {"tau": 0.7}, random=True, name="soft"),
    # straight-through: the value is one-hot, the gradient the soft one's (no finite differences)
    Sample(seeded("gumbel_softmax"), (arr(3, 5),), {"hard": True, "dim": 0}, random=True,
           gradcheck=False, name="hard"),
    Sample(F + "max_unpool1d", (arr(2, 3, 4), pool_indices((2, 3), (4,)), 2), name="batched"),
    Sample(F + "max_unpool1d", (arr(3, 4), pool_indices((3,), (4,), seed=1), 2),
           {"output_size": [9]}, name="output_size"),
    Sample(F + "max_unpool2d", (arr(2, 2, 3, 2), pool_indices((2, 2), (3, 2)), 2),
           name="batched"),
    Sample(F + "max_unpool2d", (arr(2, 2, 3), pool_indices((2,), (2, 3), seed=2), 2),
           {"output_size": (5, 7)}, name="output_size"),
    Sample(F + "max_unpool3d", (arr(1, 2, 2, 2, 3), pool_indices((1, 2), (2, 2, 3)), 2),
           name="batched"),
]

BAG_IDX = idx(1, 2, 4, 5, 4, 3, 2, 9, 4, 4)
BAG_OFFSETS = idx(0, 4, 4, 7)

EMBEDDING_BAGS = [
    Sample(F + "embedding_bag", (BAG_IDX, arr(10, 3), BAG_OFFSETS), {"mode": "sum"},
           name="sum"),
    Sample(F + "embedding_bag", (BAG_IDX, arr(10, 3), BAG_OFFSETS), name="mean"),
    Sample(F + "embedding_bag", (BAG_IDX, arr(10, 3), BAG_OFFSETS), {"mode": "max"},
           name="max"),
    Sample(F + "embedding_bag", (BAG_IDX.reshape(2, 5), arr(10, 4)), {"padding_idx": 4},
           name="2d_padding"),
    Sample(F + "embedding_bag", (BAG_IDX, arr(10, 3), BAG_OFFSETS),
           {"mode": "max", "padding_idx": -6}, name="max_padding"),
    Sample(F + "embedding_bag", (BAG_IDX, arr(10, 3), idx(0, 4, 4, 7, 10)),
           {"mode": "mean", "include_last_offset": True}, name="last_offset"),
    # torch's CPU kernel divides by a shifted frequency (kept for parity): not the derivative
    Sample(F + "embedding_bag", (BAG_IDX, arr(10, 3), BAG_OFFSETS),
           {"mode": "sum", "scale_grad_by_freq": True}, gradcheck=False, name="freq"),
    Sample(F + "embedding_bag", (BAG_IDX, arr(10, 3), BAG_OFFSETS),
           {"mode": "sum", "per_sample_weights": pos(10)}, name="per_sample_weights"),
]

GRID = dict(low=-1.2, high=1.2)


def sampling(mode: str, padding_mode: str, align_corners: bool):
    return {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}


GRIDS = [
    Sample(F + "affine_grid", (arr(2, 2, 3), [2, 3, 4, 5]), {"align_corners": False},
           name="2d"),
    Sample(F + "affine_grid", (arr(2, 2, 3), [2, 1, 3, 2]), {"align_corners": True},
           name="2d_aligned"),
    Sample(F + "affine_grid", (arr(1, 3, 4), [1, 2, 2, 3, 4]), {"align_corners": False},
           name="3d"),
    Sample("affine_grid_generator", (arr(2, 2, 3), [2, 1, 3, 2], False), name="torch_ns"),
    Sample(F + "grid_sample", (arr(2, 3, 4, 5), arr(2, 3, 4, 2, **GRID)),
           sampling("bilinear", "zeros", False), name="bilinear_zeros"),
    Sample(F + "grid_sample", (arr(2, 2, 4, 5), arr(2, 3, 2, 2, **GRID)),
           sampling("bilinear", "border", True), name="bilinear_border"),
    Sample(F + "grid_sample", (arr(1, 2, 3, 4), arr(1, 4, 3, 2, low=-1.8, high=1.8)),
           sampling("bilinear", "reflection", False), name="bilinear_reflection"),
    Sample(F + "grid_sample", (arr(2, 2, 4, 5), arr(2, 3, 2, 2, **GRID)),
           sampling("nearest", "zeros", True), name="nearest"),
    Sample(F + "grid_sample", (arr(1, 2, 3, 3, 4), arr(1, 2, 2, 3, 3, **GRID)),
           sampling("bilinear", "zeros", True), name="3d_bilinear"),
    Sample(F + "grid_sample", (arr(1, 2, 3, 3, 4), arr(1, 2, 2, 3, 3, low=-1.8, high=1.8)),
           sampling("nearest", "reflection", True), name="3d_nearest"),
    Sample(F + "grid_sample", (arr(1, 2, 4, 5), arr(1, 3, 2, 2, **GRID)),
           sampling("bicubic", "zeros", False), name="bicubic_zeros"),
    Sample(F + "grid_sample", (arr(1, 2, 4, 5), arr(1, 3, 2, 2, low=-1.8, high=1.8)),
           sampling("bicubic", "reflection", True), name="bicubic_reflection"),
    Sample("grid_sampler", (arr(1, 2, 3, 4), arr(1, 2, 3, 2, **GRID), 0, 1, False),
           name="torch_ns"),
]

SAMPLES = ACTIVATIONS + POOLS + LOSSES + OTHERS + EMBEDDING_BAGS + GRIDS
