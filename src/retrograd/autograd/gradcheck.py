"""gradcheck / gradgradcheck: compare analytical gradients with central finite differences."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import retrograd
from retrograd._tensor import Tensor, _wrap

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when a Jacobian does not match."""


def _as_tuple(x) -> tuple:
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _diff_inputs(inputs: tuple) -> list:
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _outputs(func: Callable, inputs: tuple) -> tuple:
    return tuple(o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor))


def _numerical_jacobian(func, inputs, out_idx, in_idx, eps) -> np.ndarray:
    """d out[out_idx] / d in[in_idx] by central differences, shape (in.numel, out.numel)."""
    x = inputs[in_idx]
    arr = x._data
    out0 = _outputs(func, inputs)[out_idx]
    jac = np.zeros((arr.size, out0._data.size), dtype=np.float64)
    for k, index in enumerate(np.ndindex(arr.shape)):
        orig = arr[index].copy()
        arr[index] = orig + eps
        plus = np.array(_outputs(func, inputs)[out_idx]._data, dtype=np.float64)
        arr[index] = orig - eps
        minus = np.array(_outputs(func, inputs)[out_idx]._data, dtype=np.float64)
        arr[index] = orig
        jac[k] = ((plus - minus) / (2 * eps)).reshape(-1)
    return jac


def _analytical_jacobian(func, inputs, out_idx, diff_idx) -> list:
    outputs = _outputs(func, inputs)
    out = outputs[out_idx]
    jacs = [np.zeros((inputs[i]._data.size, out._data.size)) for i in diff_idx]
    if not out.requires_grad:
        return jacs
    for j in range(out._data.size):
        g = np.zeros(out._data.shape, out._data.dtype)
        g.reshape(-1)[j] = 1
        grads = retrograd.autograd.grad(out, [inputs[i] for i in diff_idx], _wrap(g),
                                        retain_graph=True, allow_unused=True)
        for col, gr in zip(jacs, grads):
            if gr is not None:
                col[:, j] = np.asarray(gr._data, np.float64).reshape(-1)
    return jacs


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(func: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True if the analytical Jacobian of func matches finite differences for every
    (output, differentiable input) pair; raises GradcheckError otherwise (or returns False).

    >>> import retrograd as torch
    >>> x = torch.rand(3, dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(torch.sin, (x,))
    True
    >>> class WrongSquare(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, t):
    ...         return t * t
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         return grad  # should be 2 * t * grad
    >>> torch.autograd.gradcheck(WrongSquare.apply, (x,), raise_exception=False)
    False
    """
    inputs = _as_tuple(inputs)
    diff_idx = _diff_inputs(inputs)
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")
    for i in diff_idx:
        if inputs[i].dtype is not retrograd.float64:
            import warnings

            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point. This check will likely fail if all the inputs are not of "
                          "double precision floating point. ", UserWarning, stacklevel=2)
    outputs = _outputs(func, inputs)
    for o_idx, out in enumerate(outputs):
        if not out.is_floating_point():
            continue
        analytical = _analytical_jacobian(func, inputs, o_idx, diff_idx)
        for k, i in enumerate(diff_idx):
            numerical = _numerical_jacobian(func, inputs, o_idx, i, eps)
            a = analytical[k]
            if not np.allclose(a, numerical, rtol=rtol, atol=atol):
                return _fail(
                    f"Jacobian mismatch for output {o_idx} with respect to input {i},\n"
                    f"numerical:{retrograd.tensor(numerical, dtype=retrograd.float64)!r}\n"
                    f"analytical:{retrograd.tensor(a, dtype=retrograd.float64)!r}\n",
                    raise_exception)
        if check_backward_ad and out.requires_grad:
            # backward twice must agree (reentrancy / nondeterminism check)
            again = _analytical_jacobian(func, inputs, o_idx, diff_idx)
            for a, b in zip(analytical, again):
                if np.max(np.abs(a - b), initial=0.0) > nondet_tol:
                    return _fail("Backward is not reentrant, i.e., running backward with same "
                                 "input and grad_output multiple times gives different values, "
                                 "although analytical gradient matches numerical gradient."
                                 f"The tolerance for nondeterminism was {nondet_tol}.",
                                 raise_exception)
    return True


def gradgradcheck(func: Callable, inputs, grad_outputs=None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """gradcheck of the function (inputs, grad_outputs) -> gradients of func w.r.t. inputs.

    >>> import retrograd as torch
    >>> x = torch.rand(3, dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradgradcheck(lambda t: (t ** 3).sum(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    diff_idx = _diff_inputs(inputs)
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            retrograd.tensor(rng.standard_normal(o._data.shape), dtype=o.dtype,
                             requires_grad=True)
            for o in outputs if o.requires_grad and o.is_floating_point())
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_order(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _outputs(func, ins) if o.requires_grad and o.is_floating_point()]
        grads = retrograd.autograd.grad(outs, [ins[i] for i in diff_idx], gos,
                                        create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol)
