"""`.grad =` and `.data =` assignments, empty `inputs=`, numpy() under no_grad, against torch."""

from __future__ import annotations

import pytest

from tests.parity.harness import both, error_of

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
          "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_of_wrong_dtype(dtype):
    def prog(lib):
        x = lib.ones(2, requires_grad=True)
        y = lib.ones(2, dtype=getattr(lib, dtype))
        return (error_of(setattr, x, "grad", lib.ones(2, dtype=getattr(lib, dtype))),
                error_of(setattr, y, "grad", lib.ones(2)))

    both(prog)


def test_grad_assignment_checks():
    def prog(lib):
        x = lib.ones(2, 3, requires_grad=True)
        out = [error_of(setattr, x, "grad", x), error_of(setattr, x, "grad", lib.ones(3, 2)),
               error_of(setattr, x, "grad", 0), error_of(setattr, x, "grad", lib.ones(2, 3).t())]
        x.grad = lib.ones(3, 2).t()
        out.append(x.grad.stride())
        y = x * 2
        y.grad = lib.ones(2, 3)
        out.append(y.grad)
        x.grad = None
        out.append(x.grad)
        return out

    both(prog)


def test_data_assignment():
    def prog(lib):
        a = lib.ones(2)
        a.data = lib.ones(2, dtype=lib.int64)
        b = lib.tensor(1.0, requires_grad=True)
        b.data = lib.tensor(2.0)
        return (a.dtype, a, b, b.requires_grad,
                error_of(setattr, b, "data", lib.tensor(3)),
                error_of(setattr, b, "data", 3), b.dtype)

    both(prog)


def test_empty_inputs():
    def prog(lib):
        x = lib.ones(2, requires_grad=True)
        return (error_of(lambda: x.sum().backward(inputs=[])),
                error_of(lambda: lib.autograd.backward(x.sum(), inputs=())),
                error_of(lambda: lib.autograd.grad(x.sum(), [])),
                error_of(lambda: lib.autograd.grad(2 * x, [], grad_outputs=lib.ones(2))))

    both(prog)


def test_numpy_of_tensor_requiring_grad():
    def prog(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        with lib.no_grad():
            inside = (x.numpy().tolist(), y.numpy().tolist())
        return inside, error_of(lambda: x.numpy()), error_of(lambda: y.numpy()), \
            x.detach().numpy().tolist()

    both(prog)


def test_attribute_deletion():
    def prog(lib):
        x = lib.randn(2, 2, requires_grad=True)
        x.grad = lib.ones(2, 2)
        del x.grad
        out = [x.grad]
        # `del x._grad_fn` is not refused (NOTE [No __delattr__ on Tensor]): tested below
        for name in ("data", "requires_grad", "_backward_hooks"):
            out.append(error_of(delattr, x, name))
        out.append(error_of(setattr, x, "data", None))
        p = lib.nn.Parameter(lib.ones(2))
        p.note = 1
        del p.note
        out.append(hasattr(p, "note"))
        return out

    both(prog)


def test_tensor_defines_no_delattr():
    """A __delattr__ would slow every attribute write on every tensor (NOTE [No __delattr__ on
    Tensor]); deleting _grad_fn is the one deletion torch refuses that retrograd leaves alone."""
    import retrograd

    assert "__delattr__" not in vars(retrograd.Tensor)
    assert "__setattr__" not in vars(retrograd.Tensor)
