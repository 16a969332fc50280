"""NumPy kernels of the op families: functions on arrays and Python numbers, no Tensor."""
