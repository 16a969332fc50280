"""The CUDA facts the tests branch on: this stand-in runs on CPU only."""

TEST_CUDA = False
TEST_MULTIGPU = False
TEST_CUDNN = False
TEST_CUDA_GRAPH = False
SM80OrLater = False
PLATFORM_SUPPORTS_FLASH_ATTENTION = False
