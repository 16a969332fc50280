"""retrograd.backends: torch's backend switches.

retrograd computes with NumPy only, so no backend is available; the flags are kept, settable and
readable, so programs that configure cuDNN or TF32 before training run unchanged.
"""

from retrograd.backends import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp
