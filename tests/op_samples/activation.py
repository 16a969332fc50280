"""Samples for activation functions (functional forms, torch-namespace forms, in-place)."""

from tests.op_samples import Sample, arr


def inplace_f(name: str, **fixed):
    """f(lib, x, *args): nn.functional.<name>(x.clone(), *args, **fixed) on a non-leaf."""

    def f(lib, x, *args, **kwargs):
        return getattr(lib.nn.functional, name)(x.clone(), *args, **fixed, **kwargs)

    f.__name__ = f"inplace_F_{name}"
    return f


def relu_method_(lib, x):
    return x.clone().relu_()


def torch_relu_(lib, x):
    return lib.relu_(x.clone())


def torch_selu_(lib, x):
    return lib.selu_(x.clone())


F = "nn.functional."
# wide range so the kinks at +-3 (hardsigmoid, hardswish) and 0 are all exercised (not hit)
WIDE = dict(low=-5.0, high=5.0)

SAMPLES = [
    Sample(F + "relu", (arr(2, 3),)),
    Sample("relu", (arr(3, 2, noncontig=True),), name="noncontig"),
    Sample("Tensor.relu", (arr(2, 3),)),
    Sample(relu_method_, (arr(2, 3),)),
    Sample(torch_relu_, (arr(2, 3),)),
    Sample(inplace_f("relu", inplace=True), (arr(2, 3),)),
    Sample("threshold", (arr(2, 3), 0.1, -2.0)),
    Sample(F + "threshold", (arr(3, 2, noncontig=True), -0.2, 0.5)),
    Sample(inplace_f("threshold", inplace=True), (arr(2, 3), 0.1, 0.0)),
    Sample(inplace_f("threshold_"), (arr(2, 3), 0.0, 3.0)),
    Sample(F + "relu_", (arr(2, 3),), requires_grad=(False,), name="no_grad"),
    Sample(F + "gelu", (arr(2, 3, **WIDE),), name="none"),
    Sample(F + "gelu", (arr(2, 3, **WIDE),), {"approximate": "tanh"}, name="tanh"),
    Sample(F + "silu", (arr(2, 3, **WIDE),)),
    Sample(inplace_f("silu", inplace=True), (arr(2, 3),)),
    Sample(F + "softplus", (arr(2, 3, **WIDE),), name="default"),
    Sample(F + "softplus", (arr(2, 3, **WIDE),), {"beta": 2.0, "threshold": 3.0},
           name="beta_threshold"),
    Sample(F + "elu", (arr(2, 3, **WIDE),), name="default"),
    Sample(F + "elu", (arr(2, 3),), {"alpha": 0.5}, name="alpha"),
    Sample(inplace_f("elu", inplace=True), (arr(2, 3),), {"alpha": 1.5}),
    Sample(inplace_f("elu_"), (arr(2, 3),)),
    Sample(F + "leaky_relu", (arr(2, 3),), name="default"),
    Sample(F + "leaky_relu", (arr(2, 3),), {"negative_slope": 0.2}, name="slope"),
    Sample(inplace_f("leaky_relu", inplace=True), (arr(2, 3),), {"negative_slope": 0.3}),
    Sample(inplace_f("leaky_relu_"), (arr(2, 3),)),
    Sample(F + "hardtanh", (arr(2, 3, low=-2, high=2),), name="default"),
    Sample(F + "hardtanh", (arr(2, 3),), {"min_val": -0.5, "max_val": 0.25}, name="bounds"),
    Sample(inplace_f("hardtanh", inplace=True), (arr(2, 3, low=-2, high=2),)),
    Sample(inplace_f("hardtanh_"), (arr(2, 3, low=-2, high=2),)),
    Sample(F + "relu6", (arr(2, 3, low=-3, high=8),)),
    Sample(inplace_f("relu6", inplace=True), (arr(2, 3, low=-3, high=8),)),
    Sample(F + "selu", (arr(2, 3, **WIDE),)),
    Sample("selu", (arr(2, 3),), name="torch_ns"),
    Sample(inplace_f("selu", inplace=True), (arr(2, 3),)),
    Sample(torch_selu_, (arr(2, 3),)),
    Sample(F + "mish", (arr(2, 3, **WIDE),)),
    Sample(inplace_f("mish", inplace=True), (arr(2, 3),)),
    Sample(F + "hardsigmoid", (arr(2, 4, **WIDE),)),
    Sample(inplace_f("hardsigmoid", inplace=True), (arr(2, 4, **WIDE),)),
    Sample(F + "hardswish", (arr(2, 4, **WIDE),)),
    Sample(inplace_f("hardswish", inplace=True), (arr(2, 4, **WIDE),)),
    Sample(F + "logsigmoid", (arr(2, 3, **WIDE),)),
    Sample(F + "sigmoid", (arr(2, 3),)),
    Sample(F + "tanh", (arr(2, 3),)),
]

SAMPLES += [
    Sample(F + "glu", (arr(2, 4),)),
    Sample(F + "glu", (arr(4, 3, noncontig=True), 0), name="dim0"),
    Sample(F + "glu", (arr(2, 6, 2),), {"dim": -2}, name="kw_neg_dim"),
]
