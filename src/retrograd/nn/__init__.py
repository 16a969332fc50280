"""retrograd.nn: modules, parameters, functional."""

from retrograd.nn import functional
from retrograd.nn.parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer
from retrograd.nn.modules import *
from retrograd.nn.modules import Module
from retrograd.nn import attention, common_types, grad, init, parallel, utils
from retrograd.nn.parallel import DataParallel
