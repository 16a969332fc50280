"""Conformance: PyTorch's own autograd tests run against retrograd (NOTE [Conformance runner])."""
