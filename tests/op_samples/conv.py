"""Samples for convolutions and pooling (small images keep gradgradcheck affordable)."""

from tests.op_samples import Sample, arr

F = "nn.functional."


def max_pool2d_indices(lib, x):
    return lib.nn.functional.max_pool2d(x, 3, 2, 1, return_indices=True)


def max_pool1d_indices(lib, x):
    return lib.nn.functional.max_pool1d(x, 2, return_indices=True)


def _distinct(*shape, seed: int = 0):
    """Values spaced well apart, so no window has a near-tie for its maximum."""
    import numpy as np

    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n) * 0.1 - n * 0.05).reshape(shape)


def _distinct_noncontig(*shape):
    return _distinct(*shape[::-1], seed=1).T


def _conv_samples() -> list:
    x, w, b = arr(2, 2, 4, 4), arr(2, 2, 3, 3), arr(2)
    out = [
        Sample(F + "conv2d", (arr(2, 3, 5, 5), arr(2, 3, 3, 3), b), name="bias"),
        Sample(F + "conv2d", (x, w), name="no_bias"),
        Sample(F + "conv2d", (x, w, b), {"stride": 2}, name="stride"),
        Sample(F + "conv2d", (x, arr(2, 2, 2, 3), b), {"padding": (1, 2), "stride": (2, 1)},
               name="padding_tuple"),
        Sample(F + "conv2d", (x, arr(2, 2, 2, 2), b), {"dilation": 2}, name="dilation"),
        Sample(F + "conv2d", (arr(2, 4, 3, 3), arr(4, 2, 2, 2), arr(4)), {"groups": 2},
               name="groups"),
        Sample(F + "conv2d", (arr(2, 2, 4, 4), arr(2, 1, 3, 3), arr(2)),
               {"groups": 2, "padding": 1}, name="depthwise"),
        Sample(F + "conv2d", (arr(1, 2, 5, 5), arr(4, 1, 2, 2)),
               {"groups": 2, "stride": 2, "dilation": 2}, name="depthwise_multiplier"),
        Sample(F + "conv2d", (arr(1, 2, 4, 4), w, b), {"padding": "same"}, name="same"),
        Sample(F + "conv2d", (x, arr(3, 2, 2, 2)), {"padding": "same"}, name="same_even"),
        Sample(F + "conv2d", (x, arr(3, 2, 2, 2)), {"padding": "valid"}, name="valid"),
        Sample(F + "conv2d", (arr(2, 4, 4, noncontig=True), arr(3, 2, 2, 2)), name="unbatched"),
        Sample(F + "conv2d", (arr(1, 2, 4, 4, noncontig=True), arr(3, 2, 2, 2, noncontig=True)),
               {"padding": 1}, name="noncontig"),
        Sample(F + "conv2d", (arr(0, 2, 4, 4), arr(3, 2, 2, 2)), name="empty_batch"),
        Sample(F + "conv1d", (arr(2, 2, 5), arr(3, 2, 2), arr(3)), {"padding": 1, "stride": 2},
               name="stride_padding"),
        Sample(F + "conv1d", (arr(2, 2, 5), arr(3, 2, 2)), {"padding": "same", "dilation": 2},
               name="same_dilation"),
        Sample(F + "conv3d", (arr(1, 1, 3, 3, 3), arr(2, 1, 2, 2, 2), arr(2)), {"padding": 1,
                                                                             "stride": 2}),
        Sample(F + "conv_transpose2d", (arr(2, 2, 3, 3), arr(2, 3, 2, 2), arr(3)),
               name="bias"),
        Sample(F + "conv_transpose2d", (arr(1, 2, 3, 3), arr(2, 2, 3, 3)),
               {"stride": 2, "padding": 1, "output_padding": 1}, name="stride"),
        Sample(F + "conv_transpose2d", (arr(1, 4, 3, 3), arr(4, 1, 2, 2), arr(2)),
               {"groups": 2, "dilation": 2}, name="groups_dilation"),
        Sample(F + "conv_transpose2d", (arr(1, 2, 3, 3), arr(2, 2, 2, 2)),
               {"dilation": 2, "output_padding": 1}, name="output_padding_dilation"),
        Sample(F + "conv_transpose2d", (arr(1, 2, 3, 3), arr(2, 1, 2, 2)),
               {"stride": 2, "dilation": 3, "output_padding": 2, "groups": 2},
               name="output_padding_depthwise"),
        Sample(F + "conv_transpose1d", (arr(2, 2, 4), arr(2, 3, 3)), {"stride": 2}),
        # the same kernels as above: first order is enough
        Sample("conv2d", (x, w, b), {"padding": 1}, name="torch_namespace", gradgrad=False),
        Sample("convolution", (x, w, b, [1, 1], [1, 0], [1, 1], False, [0, 0], 1),
               gradgrad=False),
        Sample("convolution", (arr(1, 2, 3, 3), arr(2, 2, 2, 2), None, [2], [0], [1], True,
                               [1], 1), name="transposed"),
    ]
    return out


def _pool_samples() -> list:
    x = _distinct(2, 2, 5, 5)
    return [
        Sample(F + "max_pool2d", (x, 2), name="k2"),
        Sample(F + "max_pool2d", (x, 3), {"stride": 2, "padding": 1}, name="padding"),
        Sample(F + "max_pool2d", (x, 2), {"dilation": 2, "stride": 1}, name="dilation"),
        Sample(F + "max_pool2d", (x, 2), {"stride": 2, "ceil_mode": True}, name="ceil"),
        Sample(F + "max_pool2d", (x, (2, 3)), {"stride": (1, 2)}, name="rect"),
        Sample(F + "max_pool2d", (_distinct(2, 4, 4), 2), name="unbatched"),
        Sample(F + "max_pool2d", (_distinct_noncontig(2, 2, 4, 4), 2), name="noncontig"),
        Sample(max_pool2d_indices, (x,)),
        Sample("max_pool2d", (x, 2), name="torch_namespace"),
        Sample(F + "max_pool1d", (_distinct(2, 2, 5), 2), name="k2"),
        Sample(F + "max_pool1d", (_distinct(2, 2, 6), 3), {"stride": 2, "padding": 1},
               name="padding"),
        Sample(max_pool1d_indices, (_distinct(2, 2, 5),)),
        Sample(F + "avg_pool2d", (arr(2, 2, 5, 5), 2), name="k2"),
        Sample(F + "avg_pool2d", (arr(2, 2, 5, 5), 3), {"stride": 2, "padding": 1},
               name="padding"),
        Sample(F + "avg_pool2d", (arr(2, 2, 5, 5), 3),
               {"stride": 2, "padding": 1, "count_include_pad": False}, name="exclude_pad"),
        Sample(F + "avg_pool2d", (arr(1, 2, 6, 6), 3),
               {"stride": 2, "padding": 1, "ceil_mode": True}, name="ceil"),
        Sample(F + "avg_pool2d", (arr(1, 2, 6, 6), 3),
               {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
               name="ceil_exclude_pad"),
        Sample(F + "avg_pool2d", (arr(2, 2, 4, 4), 2), {"divisor_override": 3},
               name="divisor"),
        Sample(F + "avg_pool2d", (arr(2, 4, 4, noncontig=True), 2), name="unbatched"),
        Sample(F + "avg_pool1d", (arr(2, 2, 5), 2), name="k2"),
        Sample(F + "avg_pool1d", (arr(2, 2, 6), 3),
               {"stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True},
               name="options"),
        Sample("avg_pool1d", (arr(2, 2, 5), 2), name="torch_namespace"),
        Sample(F + "adaptive_avg_pool2d", (arr(2, 2, 5, 5), 2), name="2"),
        Sample(F + "adaptive_avg_pool2d", (arr(2, 2, 5, 5), (3, 2)), name="rect"),
        Sample(F + "adaptive_avg_pool2d", (arr(2, 2, 4, 4), 1), name="global"),
        Sample(F + "adaptive_avg_pool2d", (arr(2, 2, 4, 4), (None, 3)), name="none"),
        Sample(F + "adaptive_avg_pool2d", (arr(2, 3, 3), 5), name="upsample_unbatched"),
        Sample(F + "adaptive_avg_pool1d", (arr(2, 2, 5), 3)),
        Sample("adaptive_avg_pool1d", (arr(2, 2, 5), 2), name="torch_namespace"),
    ]


SAMPLES = _conv_samples() + _pool_samples()
