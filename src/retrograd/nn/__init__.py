"""retrograd.nn: modules, parameters, functional."""

from retrograd.nn import functional
