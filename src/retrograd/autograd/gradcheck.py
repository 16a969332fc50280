"""gradcheck / gradgradcheck: compare analytical gradients with central finite differences.

For every (differentiable output, input requiring grad) pair, the Jacobian from backward (one
row per output element, computed twice to catch nondeterministic backwards) must match the
finite-difference one. Then, as torch does: backward must scale with grad_output (zero in, zero
out), must cope with undefined output gradients (check_undefined_grad) and must give the same
vector-Jacobian products for a batch of grad_outputs as one at a time (check_batched_grad).
Failures raise GradcheckError with torch's messages, or return False (raise_exception=False).

fast_mode runs the same full check (torch's fast mode projects the Jacobians on random vectors
to save time; the exact check never accepts more). check_forward_ad=True also builds each
Jacobian with forward-mode AD (one dual evaluation per input element) and compares it with the
finite differences; check_batched_forward_grad needs vmap and adds nothing yet.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

import retrograd
from retrograd._tensor import Tensor, _wrap

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when a Jacobian does not match."""


FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""
FAILED_BATCHED_GRAD_MSG = (
    "gradcheck or gradgradcheck failed while testing batched gradient computation. The "
    "vector-Jacobian products of a batch of grad_outputs differ from the ones computed one "
    "grad_output at a time. Call gradcheck/gradgradcheck with `check_batched_grad=False` to "
    "skip this check."
)
UNDEFINED_GRAD_WARNING = (
    "Backwards compatibility: New undefined gradient support checking feature is enabled by "
    "default, but it may break existing callers of this function. If this is true for you, you "
    "can call this function with \"check_undefined_grad=False\" to disable the feature"
)
UNDEFINED_NOTES = (
    'Please look at "Notes about undefined output gradients" in '
    '"tools/autograd/derivatives.yaml"'
)
PRIVATE_API = (
    "`{}` was part of PyTorch's private API and not meant to be exposed. We are deprecating it "
    "and it will be removed in a future version of PyTorch. If you have a specific use for "
    "this or feature request for this to be a stable API, please file us an issue at "
    "https://github.com/pytorch/pytorch/issues/new"
)


def _as_tuple(x) -> tuple:
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _diff_inputs(inputs: tuple) -> list:
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _tensor_outputs(out) -> tuple:
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor))


def _f64(t: Tensor) -> np.ndarray:
    return np.asarray(t._data, dtype=np.float64)


def _check_inputs(inputs: tuple) -> list:
    diff_idx = _diff_inputs(inputs)
    for i in diff_idx:
        t = inputs[i]
        if t.dtype is not retrograd.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point or complex. This check will likely fail if all the inputs are "
                          "not of double precision floating point or complex. ", UserWarning,
                          stacklevel=4)
        if not all(st > 0 or sz <= 1 for st, sz in zip(t.stride(), t.shape)):
            raise RuntimeError(
                f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs "
                "that are non-overlapping to be able to compute the numerical gradients "
                "correctly. You should call .contiguous on the input before passing it to "
                "gradcheck.")
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    return diff_idx


def _same_meta(first: Tensor, again: Tensor, eps: float, index: tuple | None) -> None:
    where = "" if index is None else f"on index {index} "
    if first.shape != again.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs "
                             f"are perturbed {where}by {eps}, but got: shapes {first.shape} and "
                             f"{again.shape}.")
    if first.dtype != again.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs "
                             f"are perturbed {where}by {eps}, but got: dtypes {first.dtype} and "
                             f"{again.dtype}.")


def _numerical_jacobians(func: Callable, inputs: tuple, target: Tensor, outputs: tuple,
                         eps: float, with_index: bool = True) -> list:
    """d out / d target for every output, by central differences: arrays of shape
    (target.numel, out.numel), perturbing target's memory in place. The outputs at x - eps
    are copied before x + eps is tried (an output may share memory with the input)."""
    arr = target._data
    jacs = [np.zeros((arr.size, o._data.size)) for o in outputs]
    for k, index in enumerate(np.ndindex(arr.shape)):
        orig = arr[index].copy()
        arr[index] = orig - eps
        minus = _tensor_outputs(func(*inputs))
        minus_values = [np.array(m._data, dtype=np.float64) for m in minus]
        arr[index] = orig + eps
        plus = _tensor_outputs(func(*inputs))
        plus_values = [np.array(p._data, dtype=np.float64) for p in plus]
        arr[index] = orig
        for jac, m, mv, p, pv in zip(jacs, minus, minus_values, plus, plus_values):
            _same_meta(m, p, eps, index if with_index else None)
            jac[k] = ((pv - mv) / (2 * eps)).reshape(-1)
    return jacs


def _vjp(out: Tensor, diff: list, v: Tensor) -> tuple:
    return retrograd.autograd.grad(out, diff, v, retain_graph=True, allow_unused=True)


def _analytical_rows(out: Tensor, diff: list) -> tuple:
    """(Jacobians as (in.numel, out.numel) arrays, dtypes ok, sizes ok) from one backward per
    output element."""
    jacs = [np.zeros((t._data.size, out._data.size)) for t in diff]
    types_ok = sizes_ok = True
    for j in range(out._data.size):
        g = np.zeros(out._data.shape, out._data.dtype)
        g.reshape(-1)[j] = 1
        for jac, t, gr in zip(jacs, diff, _vjp(out, diff, _wrap(g))):
            if gr is None:
                continue
            types_ok = types_ok and gr.dtype is t.dtype
            if gr._data.size != t._data.size:
                sizes_ok = False
                continue
            jac[:, j] = _f64(gr).reshape(-1)
    return jacs, types_ok, sizes_ok


def _analytical_checked(out: Tensor, diff: list, nondet_tol: float,
                        check_grad_dtypes: bool) -> list:
    """The analytical Jacobians, computed twice: the two must agree within nondet_tol."""
    first, types_ok, sizes_ok = _analytical_rows(out, diff)
    second, _, _ = _analytical_rows(out, diff)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not _all_within(first, second, nondet_tol):
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output "
            "multiple times gives different values, although analytical gradient matches "
            f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
            + FAILED_NONDET_MSG)
    return first


def _all_within(a: list, b: list, tol: float) -> bool:
    return all(x.size == 0 or np.max(np.abs(x - y)) <= tol for x, y in zip(a, b))


def _as_tensor(a: np.ndarray) -> Tensor:
    return retrograd.tensor(a, dtype=retrograd.float64)


def _check_jacobians(func, inputs, outputs, diff_idx, eps, atol, rtol, nondet_tol,
                     check_grad_dtypes, fast_mode) -> None:
    diff = [inputs[i] for i in diff_idx]
    numerical = {i: _numerical_jacobians(func, inputs, inputs[i], outputs, eps, not fast_mode)
                 for i in diff_idx}
    for o_idx, out in enumerate(outputs):
        if not out.requires_grad:
            continue
        analytical = _analytical_checked(out, diff, nondet_tol, check_grad_dtypes)
        for k, i in enumerate(diff_idx):
            a, n = analytical[k], numerical[i][o_idx]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(f"Jacobian mismatch for output {o_idx} with respect to "
                                     f"input {i},\nnumerical:{_as_tensor(n)!r}\n"
                                     f"analytical:{_as_tensor(a)!r}\n")


def _check_no_differentiable_outputs(func, inputs, outputs, diff_idx, eps, fast_mode) -> None:
    for i in diff_idx:
        for jac in _numerical_jacobians(func, inputs, inputs[i], outputs, eps, not fast_mode):
            if np.count_nonzero(jac):
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _check_mul_by_grad_output(outputs: tuple, diff: list, masked: bool) -> None:
    zeros = [retrograd.zeros_like(o) for o in outputs]
    grads = retrograd.autograd.grad(outputs, diff, zeros, allow_unused=True)
    for gi, di in zip(grads, diff):
        if gi is None:
            continue
        if masked:
            if not np.allclose(gi._data, 0):
                raise GradcheckError("backward not multiplied by grad_output")
        elif np.any(gi._data != 0):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype is not di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")


def _check_undefined_grad(func, inputs: tuple, diff: list) -> None:
    """Backward with no gradient at all for the outputs (and, with several outputs, none for
    one of them) must run and give undefined or zero input gradients."""
    from retrograd._autograd.accumulate_grad import gradient_edge
    from retrograd._autograd.engine import run_backward
    from retrograd.autograd import _input_edge

    def run(seeds_for):
        outs = [o for o in _tensor_outputs(func(*inputs)) if o.requires_grad]
        if not outs:
            return
        roots = [gradient_edge(o) for o in outs]
        seeds = seeds_for(outs)
        try:
            grads = run_backward(roots, seeds, False, False, [_input_edge(t) for t in diff],
                                 False)
        except RuntimeError as e:
            warnings.warn(UNDEFINED_GRAD_WARNING, UserWarning, stacklevel=5)
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 + UNDEFINED_NOTES) from e
        for g in grads:
            if g is not None and np.any(g._data != 0):
                warnings.warn(UNDEFINED_GRAD_WARNING, UserWarning, stacklevel=5)
                raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                     "output grads are undefined or zero. " + UNDEFINED_NOTES)

    run(lambda outs: [None] * len(outs))
    n = len([o for o in _tensor_outputs(func(*inputs)) if o.requires_grad])
    if n > 1:
        for k in range(n):
            run(lambda outs, k=k: [None if j == k else retrograd.zeros_like(o)
                                   for j, o in enumerate(outs)])


def _check_batched_grad(func, inputs: tuple, diff: list, o_idx: int, out: Tensor) -> None:
    """Vector-Jacobian products for a batch of grad_outputs against one-at-a-time ones.

    Without vmap (retrograd has none yet) the batch is run as a loop over its members, each
    through a fresh forward of func, and stacked; the reference comes from the first output's
    graph, one grad_output at a time. Once vmap exists the batch will be one vmapped call."""
    def vjp(output: Tensor, v: Tensor) -> tuple:
        return tuple(retrograd.zeros_like(t) if g is None else g
                     for g, t in zip(_vjp(output, diff, v), diff))

    grad_outputs = [retrograd.randn_like(out) for _ in range(2)]
    expected = [retrograd.stack(list(rows)) for rows in
                zip(*(vjp(out, v) for v in grad_outputs))]
    batch = retrograd.stack(grad_outputs)
    try:
        rows = []
        for v in batch.unbind(0):
            fresh = [o for o in _tensor_outputs(func(*inputs)) if o.requires_grad][o_idx]
            rows.append(vjp(fresh, v))
        result = [retrograd.stack(list(r)) for r in zip(*rows)]
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n"
                             f"{FAILED_BATCHED_GRAD_MSG}") from ex
    for i, (res, exp) in enumerate(zip(result, expected)):
        if not retrograd.allclose(res, exp):
            raise GradcheckError(f"For output {o_idx} and input {i}:\n\n"
                                 f"{FAILED_BATCHED_GRAD_MSG}\n\nGot:\n{res}\n\nExpected:\n{exp}")


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, check_batched_grad, check_forward_ad, check_backward_ad,
               fast_mode, masked) -> bool:
    inputs = _as_tuple(inputs)
    diff_idx = _check_inputs(inputs)
    outputs = _tensor_outputs(func(*inputs))
    if check_backward_ad:
        diff_outputs = [o for o in outputs if o.requires_grad]
        if not diff_outputs:
            _check_no_differentiable_outputs(func, inputs, outputs, diff_idx, eps, fast_mode)
        else:
            _check_jacobians(func, inputs, outputs, diff_idx, eps, atol, rtol, nondet_tol,
                             check_grad_dtypes, fast_mode)
            diff = [inputs[i] for i in diff_idx]
            if check_batched_grad:
                for o_idx, out in enumerate(diff_outputs):
                    _check_batched_grad(func, inputs, diff, o_idx, out)
            _check_mul_by_grad_output(tuple(diff_outputs), diff, bool(masked))
            if check_undefined_grad:
                _check_undefined_grad(func, inputs, diff)
    if check_forward_ad:
        _check_forward_ad(func, inputs, outputs, diff_idx, eps, atol, rtol, fast_mode)
    return True


def _forward_jacobians(func, inputs: tuple, diff_idx: list, i: int, n_outputs: int) -> list:
    """d out / d inputs[i] for every output by forward-mode AD, one unit tangent per input
    element: arrays of shape (inputs[i].numel, out.numel). As in torch, func gets detached
    inputs, every differentiable one dual (zero tangents but the target's)."""
    from retrograd.autograd import forward_ad as fwAD

    target = inputs[i]
    jacs: list = [None] * n_outputs
    with fwAD.dual_level():
        for k in range(target.numel()):
            args = []
            for j, a in enumerate(inputs):
                if isinstance(a, Tensor):
                    a = a.detach()
                    if j in diff_idx:
                        tangent = np.zeros(a._data.shape, a._data.dtype)
                        if j == i:
                            tangent.reshape(-1)[k] = 1
                        a = fwAD.make_dual(a, _wrap(tangent))
                args.append(a)
            outs = _tensor_outputs(func(*args))
            for o_idx, out in enumerate(outs[:n_outputs]):
                if jacs[o_idx] is None:
                    jacs[o_idx] = np.zeros((target.numel(), out._data.size))
                out_tangent = fwAD.unpack_dual(out).tangent
                if out_tangent is not None:
                    jacs[o_idx][k] = _f64(out_tangent).reshape(-1)
    return jacs


def _check_forward_ad(func, inputs, outputs, diff_idx, eps, atol, rtol, fast_mode) -> None:
    for i in diff_idx:
        numerical = _numerical_jacobians(func, inputs, inputs[i], outputs, eps, not fast_mode)
        analytical = _forward_jacobians(func, inputs, diff_idx, i, len(outputs))
        for o_idx, out in enumerate(outputs):
            if not out.is_floating_point() or analytical[o_idx] is None:
                continue
            a, n = analytical[o_idx], numerical[o_idx]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(
                    f"Jacobian computed with forward mode mismatch for output {o_idx} with "
                    f"respect to input {i},\nnumerical:{_as_tensor(n)!r}\n"
                    f"analytical:{_as_tensor(a)!r}\n")


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
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, check_batched_grad, check_forward_ad,
                          check_backward_ad, fast_mode, masked)
    except GradcheckError:
        if raise_exception:
            raise
        return False


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
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    diff_idx = _diff_inputs(inputs)
    outputs = _tensor_outputs(func(*inputs))
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
        # forward-mode checks pass detached inputs: differentiate them again
        ins = tuple(t.requires_grad_() if k in diff_idx and not t.requires_grad else t
                    for k, t in enumerate(ins))
        outs = [o for o in _tensor_outputs(func(*ins)) if o.requires_grad and
                o.is_floating_point()]
        grads = retrograd.autograd.grad(outs, [ins[i] for i in diff_idx], gos,
                                        create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, fast_mode=fast_mode, masked=masked)


def get_numerical_jacobian(fn: Callable, inputs, target=None, eps: float = 1e-3,
                           grad_out: float = 1.0) -> tuple:
    """Deprecated in torch: finite-difference Jacobians of fn's first output (fn takes the
    inputs as one tuple) with respect to each target, each of shape (target.numel, out.numel)."""
    warnings.warn(PRIVATE_API.format("get_numerical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    inputs = _as_tuple(inputs)
    targets = [inputs[i] for i in _diff_inputs(inputs)] if target is None else \
        [t for t in _as_tuple(target) if isinstance(t, Tensor) and t.requires_grad]

    def packed(*ins):
        return fn(ins)

    outputs = _tensor_outputs(packed(*inputs))
    return tuple(retrograd.tensor(_numerical_jacobians(packed, inputs, t, outputs, eps)[0],
                                  dtype=outputs[0].dtype) for t in targets)


def get_analytical_jacobian(inputs, output: Tensor, nondet_tol: float = 0.0,
                            grad_out: float = 1.0) -> tuple:
    """Deprecated in torch: (Jacobians of output from backward, reentrant, sizes ok, types ok)."""
    warnings.warn(PRIVATE_API.format("get_analytical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    inputs = _as_tuple(inputs)
    diff = [inputs[i] for i in _diff_inputs(inputs)]
    first, types_ok, sizes_ok = _analytical_rows(output, diff)
    second, _, _ = _analytical_rows(output, diff)
    reentrant = _all_within(first, second, nondet_tol)
    jacs = tuple(retrograd.tensor(j, dtype=output.dtype) for j in first)
    return jacs, reentrant, sizes_ok, types_ok
