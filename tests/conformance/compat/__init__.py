"""retrograd's stand-in for `torch.testing._internal`: the helpers PyTorch's test files import.

It is written against whatever `torch` is bound to (real torch for the control run, retrograd
otherwise), so both runs see the same assertEqual, parametrization and device instantiation.
"""
