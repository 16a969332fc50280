"""retrograd.nn.modules: the layer classes."""

from retrograd.nn.modules.module import Module
from retrograd.nn.modules.container import (
    Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict,
)
from retrograd.nn.modules.linear import Identity, Linear, Bilinear
from retrograd.nn.modules.conv import (
    Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,
)
from retrograd.nn.modules.pooling import (
    MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool1d, AdaptiveAvgPool2d,
    AdaptiveMaxPool1d, AdaptiveMaxPool2d,
)
from retrograd.nn.modules.activation import (
    Threshold, ReLU, Hardtanh, ReLU6, Sigmoid, Hardsigmoid, Tanh, SiLU, Mish, Hardswish, ELU,
    CELU, SELU, GLU, GELU, Hardshrink, LeakyReLU, LogSigmoid, Softplus, Softshrink, PReLU,
    Softsign, Tanhshrink, Softmin, Softmax, Softmax2d, LogSoftmax,
)
from retrograd.nn.modules.dropout import (
    Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout,
)
from retrograd.nn.modules.normalization import (
    LayerNorm, GroupNorm, RMSNorm, BatchNorm1d, BatchNorm2d, BatchNorm3d, InstanceNorm1d,
    InstanceNorm2d, InstanceNorm3d,
)
from retrograd.nn.modules.sparse import Embedding
from retrograd.nn.modules.flatten import Flatten, Unflatten
from retrograd.nn.modules.loss import (
    L1Loss, NLLLoss, KLDivLoss, MSELoss, BCELoss, BCEWithLogitsLoss, SmoothL1Loss, HuberLoss,
    CrossEntropyLoss,
)
from retrograd.nn.modules.transformer_decoder import (
    TransformerDecoderLayer, TransformerDecoder, Transformer,
)
from retrograd.nn.modules.distance import CosineSimilarity, PairwiseDistance
from retrograd.nn.modules.fold import Fold, Unfold
from retrograd.nn.modules.upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
from retrograd.nn.modules.rnn_cell import RNNCellBase, RNNCell, LSTMCell, GRUCell
from retrograd.nn.modules.rnn import RNNBase, RNN, LSTM, GRU
from retrograd.nn.modules.transformer import (
    MultiheadAttention, TransformerEncoderLayer, TransformerEncoder,
)

from retrograd.nn.modules.padding import (
    ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d,
    ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
    ReplicationPad3d, CircularPad1d, CircularPad2d, CircularPad3d,
)
from retrograd.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from retrograd.nn.modules.rrelu import RReLU
from retrograd.nn.modules.pooling3d import (
    MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d,
)
from retrograd.nn.modules.lp_pooling import LPPool1d, LPPool2d, LPPool3d
from retrograd.nn.modules.margin_loss import (
    TripletMarginLoss, TripletMarginWithDistanceLoss, MultiMarginLoss, MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss, SoftMarginLoss, MarginRankingLoss, HingeEmbeddingLoss,
    CosineEmbeddingLoss, PoissonNLLLoss, GaussianNLLLoss,
)
from retrograd.nn.modules.unpooling import MaxUnpool1d, MaxUnpool2d, MaxUnpool3d
from retrograd.nn.modules.channel_ops import LocalResponseNorm, ChannelShuffle
from retrograd.nn.modules.cross_map_lrn import CrossMapLRN2d
from retrograd.nn.modules.embedding_bag import EmbeddingBag
from retrograd.nn.modules.lazy_linear import LazyLinear
from retrograd.nn.modules.ctc_loss import CTCLoss
from retrograd.nn.modules.linear_cross_entropy import (
    LinearCrossEntropyLoss, LinearCrossEntropyOptions,
)
from retrograd.nn.modules.fractional_pooling import FractionalMaxPool2d, FractionalMaxPool3d
from retrograd.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss
from retrograd.nn.modules.deprecated import Container, NLLLoss2d
from retrograd.nn.modules.sync_batchnorm import SyncBatchNorm
from retrograd.nn.modules.lazy_conv import (
    LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
    LazyConvTranspose3d,
)
from retrograd.nn.modules.lazy_norm import (
    LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d,
    LazyInstanceNorm3d,
)

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Identity", "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "Threshold", "ReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish",
    "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid",
    "Softplus", "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax",
    "Softmax2d", "LogSoftmax", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
    "FeatureAlphaDropout", "LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "Embedding", "Flatten",
    "Unflatten", "L1Loss", "NLLLoss", "KLDivLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss",
    "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "MultiheadAttention",
    "TransformerEncoderLayer", "TransformerEncoder", "RNNCellBase", "RNNCell", "LSTMCell",
    "GRUCell", "RNNBase", "RNN", "LSTM", "GRU", "TransformerDecoderLayer", "TransformerDecoder",
    "Transformer", "CosineSimilarity", "PairwiseDistance", "Fold", "Unfold", "Upsample",
    "UpsamplingNearest2d", "UpsamplingBilinear2d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "PixelShuffle", "PixelUnshuffle",
    "RReLU", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "LPPool1d",
    "LPPool2d", "LPPool3d", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
    "MultiMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "SoftMarginLoss",
    "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss", "PoissonNLLLoss",
    "GaussianNLLLoss", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LocalResponseNorm",
    "ChannelShuffle", "EmbeddingBag", "LazyLinear", "CTCLoss",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "AdaptiveLogSoftmaxWithLoss",
    "LazyConv1d", "LazyConv2d",
    "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
    "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
    "LazyInstanceNorm2d", "LazyInstanceNorm3d", "Container", "NLLLoss2d",
    "SyncBatchNorm", "LinearCrossEntropyLoss", "LinearCrossEntropyOptions", "CrossMapLRN2d"]
