"""retrograd.nn.utils: gradient clipping, parameter/vector conversion, packed sequences,
parametrizations, weight and spectral normalization, conv/linear + batch norm fusion,
conv weight memory formats, skip_init and the stateless functional_call."""

from retrograd.nn.utils import clip_grad, convert_parameters, parametrize, rnn
from retrograd.nn.utils import fusion, init, memory_format, parametrizations, stateless
from retrograd.nn.utils.clip_grad import (
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from retrograd.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from retrograd.nn.utils.fusion import (
    fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights,
)
from retrograd.nn.utils.init import skip_init
from retrograd.nn.utils.memory_format import (
    convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format,
)
from retrograd.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from retrograd.nn.utils.weight_norm import remove_weight_norm, weight_norm
