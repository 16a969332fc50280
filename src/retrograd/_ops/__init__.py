"""The op library. Importing it declares every op and installs Tensor methods and operators."""

from retrograd._ops import registry
from retrograd._ops import pointwise, reduction, shape, linalg, copy, creation
from retrograd._ops import operators

operators.install()
registry.install_methods()
