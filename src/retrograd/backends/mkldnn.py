"""retrograd.backends.mkldnn: a settable flag; retrograd does not use oneDNN."""

enabled = True


def is_available() -> bool:
    return False
