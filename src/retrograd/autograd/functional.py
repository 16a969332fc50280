"""retrograd.autograd.functional: derivatives of whole functions (vjp, jvp, jacobian, hessian,
vhp, hvp), with torch's signatures, result structures and errors.

`func` takes the inputs as positional arguments. A Tensor given where a tuple of Tensors is
allowed gives back a Tensor; a tuple gives back a tuple (Jacobians and Hessians nest two deep:
outputs first, then inputs). Results are detached unless create_graph=True, in which case they
can be differentiated again, with respect to the inputs too when these require grad.

Forward-mode products (jvp, hvp) use the double-backward trick: the backward of a function is
linear in its grad_output u, so differentiating <grad_input(u), v> with respect to u gives
J @ v without forward-mode AD.
"""

from __future__ import annotations

from collections.abc import Callable

import retrograd
from retrograd.autograd import _functional_utils as U
from retrograd.autograd._functional_utils import (
    as_tuple as _as_tuple,
)
from retrograd.autograd._functional_utils import (
    construct_standard_basis_for as _construct_standard_basis_for,
)
from retrograd.autograd._functional_utils import (
    tuple_postprocess as _tuple_postprocess,
)

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

# torch exposes these helpers under these names; programs and tests reach them
_grad_preprocess = U.grad_preprocess
_grad_postprocess = U.grad_postprocess
_validate_v = U.validate_v
_check_requires_grad = U.check_requires_grad
_autograd_grad = U.autograd_grad
_fill_in_zeros = U.fill_in_zeros
_as_tuple_nocheck = U.as_tuple_nocheck

_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a single "
                  "Tensor with a single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a "
                 "single Tensor with a single element.")
_OUTPUTS = "outputs of the user-provided function"


def _prepare(func_name: str, inputs, v, create_graph: bool, v_like_inputs: bool):
    """Inputs made ready for differentiation and v checked against them (when v_like_inputs;
    vjp checks v against the outputs itself). Runs under enable_grad."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", func_name)
    inputs = U.grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v_like_inputs:
        v = _prepare_v(func_name, v, inputs, is_inputs_tuple, create_graph, _V_NONE_INPUT)
    return is_inputs_tuple, inputs, v


def _prepare_v(func_name: str, v, like: tuple, like_is_tuple: bool, create_graph: bool,
               none_error: str):
    """v as a tuple, checked against `like` (the inputs or the outputs); None only where `like`
    is a single one-element tensor."""
    if v is not None:
        _, v = _as_tuple(v, "v", func_name)
        v = U.grad_preprocess(v, create_graph=create_graph, need_graph=False)
        U.validate_v(v, like, like_is_tuple)
    elif len(like) != 1 or like[0].nelement() != 1:
        raise RuntimeError(none_error)
    return v


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product of func at inputs.

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import vjp
    >>> out, g = vjp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.ones(2))
    >>> g.tolist()
    [2.0, 4.0]
    """
    with retrograd.enable_grad():
        is_inputs_tuple, inputs, _ = _prepare("vjp", inputs, None, create_graph, False)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, _OUTPUTS, "vjp")
        U.check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v("vjp", v, outputs, is_outputs_tuple, create_graph, _V_NONE_OUTPUT)
    with retrograd.set_grad_enabled(create_graph or retrograd.is_grad_enabled()):
        grad_res = U.autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = U.fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = U.grad_postprocess(outputs, create_graph)
    res = U.grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product of func at inputs, by double backward.

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import jvp
    >>> out, jv = jvp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.ones(2))
    >>> jv.tolist()
    [2.0, 4.0]
    """
    with retrograd.enable_grad():
        is_inputs_tuple, inputs, v = _prepare("jvp", inputs, v, create_graph, True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, _OUTPUTS, "jvp")
        U.check_requires_grad(outputs, "outputs", strict=strict)
        # the backward is linear in these, so their value is irrelevant as long as it is finite
        grad_outputs = tuple(retrograd.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = U.autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        U.check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with retrograd.set_grad_enabled(create_graph or retrograd.is_grad_enabled()):
        grad_res = U.autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = U.fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = U.grad_postprocess(outputs, create_graph)
    res = U.grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_outputs_tuple))


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of func at inputs: entry [i][j] has shape outputs[i].shape +
    inputs[j].shape (unpacked where func's outputs or the inputs are single Tensors).

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, torch.tensor([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        from retrograd.autograd._functional_fwd import jacfwd

        return jacfwd(func, inputs, strict, vectorize)
    with retrograd.enable_grad():
        is_inputs_tuple, inputs, _ = _prepare("jacobian", inputs, None, create_graph, False)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, _OUTPUTS, "jacobian")
        U.check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`.")
            jac = _jacobian_batched(outputs, inputs, create_graph)
        else:
            jac = _jacobian_rows(outputs, inputs, create_graph, strict)
        jac = U.grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_batched(outputs: tuple, inputs: tuple, create_graph: bool) -> tuple:
    """All rows of the Jacobian from one batch of grad_outputs: the standard basis of the
    flattened outputs put end to end."""
    numels = tuple(out.numel() for out in outputs)
    flat = tuple(out.reshape(-1) for out in outputs)
    basis = _construct_standard_basis_for(flat, numels)
    per_input = U.autograd_grad(flat, inputs, basis, create_graph=create_graph,
                                is_grads_batched=True)
    total = sum(numels)
    by_input = []
    for g, inp in zip(per_input, inputs):
        if g is None:
            g = retrograd.zeros_like(inp).expand((total, *inp.shape))
        by_input.append([jac.view(out.shape + inp.shape)
                         for jac, out in zip(g.split(numels, dim=0), outputs)])
    return tuple(zip(*by_input))


def _jacobian_rows(outputs: tuple, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """The Jacobian one row (one output element) at a time."""
    jac: tuple = ()
    for i, out in enumerate(outputs):
        rows: tuple = tuple([] for _ in inputs)
        flat = out.reshape(-1)
        for k in range(out.nelement()):
            grads = U.autograd_grad((flat[k],), inputs, retain_graph=True,
                                    create_graph=create_graph)
            for j, (g, inp) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is "
                                           f"independent of input {j}. This is not allowed in "
                                           f"strict mode.")
                    g = retrograd.zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    # names the output's index, as torch's message does
                    raise RuntimeError(f"The jacobian of the user-provided function is "
                                       f"independent of input {i}. This is not allowed in "
                                       f"strict mode when create_graph=True.")
                rows[j].append(g)
        jac += (tuple(retrograd.stack(r, dim=0).view(out.size() + inp.size())
                      for r, inp in zip(rows, inputs)),)
    return jac


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar func at inputs: entry [i][j] has shape inputs[i].shape +
    inputs[j].shape (a Tensor for a single input).

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, _OUTPUTS, "hessian")
        U.check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, retrograd.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            # the inner jacobian keeps its inputs attached only if they require grad
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        U.check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(func_name: str, func: Callable, inputs: tuple, strict: bool):
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, _OUTPUTS, func_name)
    U.check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], retrograd.Tensor):
        raise RuntimeError(f"The function given to {func_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {func_name} should "
                           f"contain a single element")
    return is_outputs_tuple, outputs


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H): the vector-Hessian product of a scalar func at inputs.

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import vhp
    >>> out, r = vhp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2))
    >>> r.tolist()
    [6.0, 12.0]
    """
    with retrograd.enable_grad():
        is_inputs_tuple, inputs, v = _prepare("vhp", inputs, v, create_graph, True)
        is_outputs_tuple, outputs = _scalar_output("vhp", func, inputs, strict)
        jac = U.autograd_grad(outputs, inputs, create_graph=True)
        U.check_requires_grad(jac, "jacobian", strict=strict)
    with retrograd.set_grad_enabled(create_graph or retrograd.is_grad_enabled()):
        grad_res = U.autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = U.fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = U.grad_postprocess(outputs, create_graph)
    res = U.grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v): the Hessian-vector product of a scalar func at inputs, by double
    backward (equal to vhp for twice continuously differentiable functions).

    >>> import retrograd as torch
    >>> from retrograd.autograd.functional import hvp
    >>> out, r = hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.ones(2))
    >>> r.tolist()
    [6.0, 12.0]
    """
    with retrograd.enable_grad():
        is_inputs_tuple, inputs, v = _prepare("hvp", inputs, v, create_graph, True)
        is_outputs_tuple, outputs = _scalar_output("hvp", func, inputs, strict)
        jac = U.autograd_grad(outputs, inputs, create_graph=True)
        U.check_requires_grad(jac, "jacobian", strict=strict)
        grad_jac = tuple(retrograd.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = U.autograd_grad(jac, inputs, grad_jac, create_graph=True)
        U.check_requires_grad(jac, "hessian", strict=strict)
    with retrograd.set_grad_enabled(create_graph or retrograd.is_grad_enabled()):
        grad_res = U.autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = U.fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = U.grad_postprocess(outputs, create_graph)
    res = U.grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))
