"""Samples for the random ops that have derivatives (torch defines them all as zero).

Each sample draws from a freshly seeded generator, so a call is a deterministic function of its
inputs and gradcheck can run. The in-place samplers overwrite a clone of the input, so their
output does not depend on it: the numerical gradient is zero, as the declared one is.
random=True: parity compares shapes, dtypes and node names only (the generators differ).
"""

from tests.op_samples import Sample, arr, pos


def _gen(lib):
    return lib.Generator().manual_seed(0)


def normal_tensor_float(lib, mean):
    return lib.normal(mean, 0.5, generator=_gen(lib))


def normal_float_tensor(lib, std):
    return lib.normal(1.0, std, generator=_gen(lib))


def normal_tensor_tensor(lib, mean, std):
    return lib.normal(mean, std, generator=_gen(lib))


# normal's value moves with mean and std while torch declares its derivative zero, so gradcheck
# can only confirm the zero through a product with 0 (the node still runs in the graph)
def normal_tensor_float_times0(lib, mean):
    return normal_tensor_float(lib, mean) * 0


def normal_float_tensor_times0(lib, std):
    return normal_float_tensor(lib, std) * 0


def normal_tensor_tensor_times0(lib, mean, std):
    return normal_tensor_tensor(lib, mean, std) * 0


def bernoulli_probs(lib, p):
    return lib.bernoulli(p, generator=_gen(lib))


def normal_inplace(lib, x):
    return x.clone().normal_(0.5, 2.0, generator=_gen(lib))


def uniform_inplace(lib, x):
    return x.clone().uniform_(-2.0, 3.0, generator=_gen(lib))


def bernoulli_inplace_float(lib, x):
    return x.clone().bernoulli_(0.3, generator=_gen(lib))


def bernoulli_inplace_tensor(lib, x, p):
    return x.clone().bernoulli_(p, generator=_gen(lib))


def random_inplace(lib, x):
    return x.clone().random_(generator=_gen(lib))


def random_inplace_to(lib, x):
    return x.clone().random_(10, generator=_gen(lib))


def random_inplace_from_to(lib, x):
    return x.clone().random_(-5, 5, generator=_gen(lib))


def exponential_inplace(lib, x):
    return x.clone().exponential_(2.0, generator=_gen(lib))


def cauchy_inplace(lib, x):
    return x.clone().cauchy_(1.0, 0.5, generator=_gen(lib))


def log_normal_inplace(lib, x):
    return x.clone().log_normal_(0.0, 0.5, generator=_gen(lib))


def geometric_inplace(lib, x):
    return x.clone().geometric_(0.3, generator=_gen(lib))


def inplace_on_view(lib, x):
    # an in-place sampler on a view of a non-leaf rebases the base's history (CopySlices)
    y = x.clone()
    y.transpose(0, 1).normal_(generator=_gen(lib))
    return y


_RAND = {"random": True}

SAMPLES = [
    # zero-derivative checks (gradcheck + gradgradcheck)
    Sample(normal_tensor_float_times0, (arr(2, 3),), parity=False),
    Sample(normal_float_tensor_times0, (pos(2, 3),), parity=False),
    Sample(normal_tensor_tensor_times0, (arr(2, 1), pos(3)), name="broadcast", parity=False),
    Sample(normal_tensor_tensor_times0, (arr(2, 3), pos(2, 3)), parity=False),
    Sample(bernoulli_probs, (pos(2, 3, low=0.1, high=0.9),), **_RAND),
    Sample(bernoulli_probs, (pos(0, 3, low=0.1, high=0.9),), name="empty", **_RAND),
    Sample(normal_inplace, (arr(2, 3),), **_RAND),
    Sample(normal_inplace, (arr(3, 2, noncontig=True),), name="noncontig", **_RAND),
    Sample(uniform_inplace, (arr(2, 3),), **_RAND),
    Sample(bernoulli_inplace_float, (arr(2, 3),), **_RAND),
    Sample(bernoulli_inplace_tensor, (arr(2, 3), pos(3, low=0.1, high=0.9)), **_RAND),
    Sample(random_inplace, (arr(4),), **_RAND),
    Sample(random_inplace_to, (arr(2, 2),), **_RAND),
    Sample(random_inplace_from_to, (arr(2, 2),), **_RAND),
    Sample(exponential_inplace, (arr(5),), **_RAND),
    Sample(cauchy_inplace, (arr(5),), **_RAND),
    Sample(log_normal_inplace, (arr(5),), **_RAND),
    Sample(geometric_inplace, (arr(5),), **_RAND),
    Sample(inplace_on_view, (arr(2, 3),), **_RAND),
    # the raw samplers: parity of node names (NormalBackward1/2/3) and dtypes; their values
    # move with the inputs, so no gradcheck (see the *_times0 samples above)
    Sample(normal_tensor_float, (arr(2, 3),), gradcheck=False, **_RAND),
    Sample(normal_float_tensor, (pos(2, 3),), gradcheck=False, **_RAND),
    Sample(normal_tensor_tensor, (arr(2, 1), pos(3)), gradcheck=False, **_RAND),
]
