"""Every user-visible error and warning message, worded as PyTorch words it.

Users search for these strings, so they are copied from PyTorch verbatim; `{}` fields are filled
with str.format at the raise site.
"""

# engine
NOT_SCALAR = "grad can be implicitly created only for scalar outputs"
NOT_FLOAT_IMPLICIT = "grad can be implicitly created only for real scalar outputs but got {}"
NO_GRAD_FN = "element {} of tensors does not require grad and does not have a grad_fn"
UNUSED_INPUT = (
    "The differentiated Tensor at index {} appears to not have been used in the graph. "
    "Set allow_unused=True if this is the desired behavior."
)
INPUT_NO_GRAD = "One of the differentiated Tensors does not require grad"
GRAD_SHAPE_MISMATCH = (
    "Mismatch in shape: grad_output[{}] has a shape of {} and output[{}] has a shape of {}."
)
INVALID_GRADIENT = (
    "Function {} returned an invalid gradient at index {} - got {} but expected shape "
    "compatible with {}"
)
WRONG_GRAD_COUNT = "function {} returned an incorrect number of gradients (expected {}, got {})"
BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed when "
    "you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)
OUTPUTS_INPUTS_EMPTY = "`inputs` argument to `grad()` cannot be empty."
BACKWARD_EMPTY_INPUTS = "`inputs` argument to `backward()` cannot be empty."
LEN_MISMATCH = "got {} tensors and {} gradients"

# tensors
REQUIRES_GRAD_NONLEAF = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
    "variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach()."
)
REQUIRES_GRAD_DTYPE = "only Tensors of floating point dtype can require gradients"
ITEM_NUMEL = "a Tensor with {} elements cannot be converted to Scalar"
NUMPY_REQUIRES_GRAD = (
    "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
)
RETAIN_GRAD_NO_GRAD = "can't retain_grad on Tensor that has requires_grad=False"
BOOL_AMBIGUOUS = "Boolean value of Tensor with more than one value is ambiguous"
VOLATILE_GET_WARNING = "volatile was removed (Variable.volatile is always False)"
VOLATILE_SET_WARNING = (
    "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.")
NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more informations."
)
HOOK_NO_GRAD = "cannot register a hook on a tensor that doesn't require gradient"

# shapes and indexing
BROADCAST = (
    "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {}"
)
DIM_RANGE = "Dimension out of range (expected to be in range of [{}, {}], but got {})"
DIM_SCALAR = "Dimension specified as {} but tensor has no dimensions"
VIEW_SHAPE = "shape '{}' is invalid for input of size {}"
VIEW_STRIDE = (
    "view size is not compatible with input tensor's size and stride (at least one dimension "
    "spans across two contiguous subspaces). Use .reshape(...) instead."
)
MATMUL_SHAPES = "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})"
CAT_SIZES = (
    "Sizes of tensors must match except in dimension {}. Expected size {} but got size {} for "
    "tensor number {} in the list."
)
CAT_DIMS = (
    "Tensors must have same number of dimensions: got {} and {}"
)
INDEX_RANGE = "index {} is out of bounds for dimension {} with size {}"
SCALAR_CONVERSION = "only one element tensors can be converted to Python scalars"
FLOAT_OF_REQUIRES_GRAD = ("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.")
MT_ZERO_DIM = ("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these "
               "cases.")
MH_ZERO_DIM = "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj()."
ADJOINT_ZERO_DIM = "adjoint() is deprecated on 0-D tensors. Consider using x.conj()."
T_DEPRECATED = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
    "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
    "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
    "tensor."
)

# --- autocast and GradScaler (retrograd.amp) ---------------------------------------------------
DEVICE_STRING = (
    "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, "
    "xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device "
    "string: {}"
)
AUTOCAST_DEVICE = "User specified an unsupported autocast device_type '{}'"
AUTOCAST_DEVICE_TYPE = "Expected `device_type` of type `str`, got: `{}`"
AUTOCAST_CPU_DTYPE = (
    "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
    "CPU Autocast only supports dtypes of torch.bfloat16, torch.float16 currently."
)
AUTOCAST_NO_CUDA = "CUDA is not available or torch_xla is imported. Disabling autocast."
AUTOCAST_NOT_CALLABLE = (
    "autocast()(func) requires a callable, but got {}. Did you mean to use autocast as a "
    "context manager? For example:\n    with torch.autocast(device_type=...):\n"
    "        output = model(input)"
)

# profiler
PROFILER_NOT_REENTRANT = "Profiler context manager is not reentrant"
PROFILER_ALREADY_ENABLED = "Profiler is already enabled on this thread"
PROFILER_USE_CUDA_DEPRECATED = (
    "The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
    "instead."
)
PROFILER_DEVICE_UNAVAILABLE = "{} is not available, disabling {} profiling"
PROFILER_INVALID_DEVICE = "The {} is not a valid device option."
PROFILER_UNFINISHED = "<unfinished torch.autograd.profile>"
ITT_NOT_REENTRANT = "ITT annotation context manager is not reentrant"
NVTX_NOT_REENTRANT = "NVTX annotation context manager is not reentrant"
PROFILER_SCHEDULE_ARGS = (
    "Invalid profiler schedule arguments. Got wait={} (need >= 0), warmup={} (need >= 0), "
    "active={} (need > 0), repeat={} (need >= 0), skip_first={} (need >= 0)."
)
PROFILER_NO_WARMUP = "Profiler won't be using warmup, this can skew profiler results"

COMPILE_NOT_CALLABLE = "A callable function is expected, but {} is provided."

BROADCAST_SHAPES = (
    "Attempting to broadcast a dimension of length {} at {}! Mismatching argument at index {} "
    "had {}; but expected shape should be broadcastable to {}"
)
IS_FLOATING_POINT_NOT_TENSOR = (
    "is_floating_point(): argument 'input' (position 1) must be Tensor, not {}"
)
SET_NUM_THREADS = "set_num_threads expects a positive integer"
SET_NUM_INTEROP_THREADS = "Expected positive number of threads"
MATMUL_PRECISION = (
    "{} is not one of 'highest', 'high', or 'medium'; the current"
    "setFloat32MatmulPrecision call has no effect."
)

# an OpOverload called without a required argument
OP_MISSING_ARGUMENT = "aten::{}() is missing value for argument '{}'. Declaration: {}"

# reading the values of a wrapper tensor subclass directly (its class holds them)
NUMPY_SUBCLASS = ".numpy() is not supported for tensor subclasses."
TOLIST_SUBCLASS = ".tolist() is not supported for tensor subclasses, got {}"

# arguments that fit none of an op's overloads (NOTE [Overloads])
INVALID_ARGUMENTS = ("{}() received an invalid combination of arguments - got ({}), but "
                     "expected one of:")
INVALID_TYPES = "      didn't match because some of the arguments have invalid types: ({})"
INVALID_KEYWORDS = "      didn't match because some of the keywords were incorrect: {}"
