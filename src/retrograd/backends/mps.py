"""retrograd.backends.mps: no Metal device."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
