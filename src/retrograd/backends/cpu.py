"""retrograd.backends.cpu: the CPU's vector capability as torch names it."""


def get_cpu_capability() -> str:
    return "DEFAULT"  # NumPy picks its own SIMD paths at run time
