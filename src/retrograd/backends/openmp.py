"""retrograd.backends.openmp: retrograd runs no OpenMP parallel regions of its own."""


def is_available() -> bool:
    return False
