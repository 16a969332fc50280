"""retrograd.nn.utils: gradient clipping, parameter/vector conversion, packed sequences,
parametrizations, weight and spectral normalization."""

from retrograd.nn.utils import clip_grad, convert_parameters, parametrize, rnn
from retrograd.nn.utils import parametrizations
from retrograd.nn.utils.clip_grad import (
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm,
)
from retrograd.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from retrograd.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from retrograd.nn.utils.weight_norm import remove_weight_norm, weight_norm
