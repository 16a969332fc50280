"""retrograd.backends.mkl: retrograd calls NumPy's BLAS, not MKL directly."""


def is_available() -> bool:
    return False
