"""Argument and result plumbing shared by the functions of retrograd.autograd.functional.

A function's inputs, outputs and v may each be one Tensor or a tuple of Tensors. Everything is
carried as a tuple inside, and each result is unpacked at the end to mirror how it came in: a
lone Tensor gives back a Tensor, a tuple gives back a tuple (nested two deep for Jacobians and
Hessians, outputs first then inputs).
"""

from __future__ import annotations

import retrograd
from retrograd._tensor import Tensor


def as_tuple_nocheck(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def as_tuple(inp, arg_name: str | None = None, fn_name: str | None = None) -> tuple:
    """(was it a tuple, its members as a tuple); every member must be a Tensor."""
    if arg_name is None and fn_name is None:
        return as_tuple_nocheck(inp)
    was_tuple = isinstance(inp, tuple)
    items = inp if was_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = (f"the value at index {i} has type {type(el)}" if was_tuple
                     else f"the given {arg_name} has type {type(el)}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where}.")
    return was_tuple, items


def tuple_postprocess(res, to_unpack):
    """Unpack `res` so that it takes the form its arguments were given in. `to_unpack` is one
    flag, or two (outer, inner) for nested results such as Jacobians."""
    if isinstance(to_unpack, tuple):
        if len(to_unpack) != 2:
            raise AssertionError("Expected to_unpack tuple to have exactly 2 elements")
        outer, inner = to_unpack
        if not inner:
            res = tuple(el[0] for el in res)
        if not outer:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def grad_preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensors to differentiate against. Under create_graph an input that already needs
    gradients stays connected to the caller's graph (through a view), so that the results can
    be differentiated with respect to it; otherwise each input is cut loose."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def grad_postprocess(inputs, create_graph: bool):
    """Detach the results (recursively through nested tuples) unless a graph was asked for."""
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(grad_postprocess(inp, create_graph) for inp in inputs)


def validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prefix = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {_size(el_other)} but "
                               f"got {_size(el_v)}.")


def _size(t: Tensor) -> str:
    # messages name the size as torch prints it, so that programs matching them keep working
    return f"torch.Size({list(t.shape)})"


# what strict mode says when a stage's result does not require grad (by input_type)
_NO_GRAD_MESSAGES = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of "
                    "the user-provided function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."),
}


def check_requires_grad(inputs: tuple, input_type: str, strict: bool) -> None:
    """In strict mode, every tensor of a stage must exist and depend on the inputs."""
    if not strict:
        return
    if input_type not in _NO_GRAD_MESSAGES:
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_NO_GRAD_MESSAGES[input_type].format(i=i))


def autograd_grad(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph: bool = False,
                  retain_graph: bool | None = None, is_grads_batched: bool = False) -> tuple:
    """autograd.grad over the outputs that require grad only; None for every input when none
    does, and None for the inputs the outputs do not reach."""
    if not isinstance(outputs, tuple):
        raise AssertionError("Expected outputs to be a tuple")
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    if not isinstance(grad_outputs, tuple):
        raise AssertionError("Expected grad_outputs to be a tuple")
    if len(outputs) != len(grad_outputs):
        raise AssertionError(f"Expected outputs and grad_outputs to have the same length, but "
                             f"got {len(outputs)} and {len(grad_outputs)}")
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs)
             if out is not None and out.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, gouts = zip(*pairs)
    return retrograd.autograd.grad(outs, inputs, gouts, allow_unused=True,
                                   create_graph=create_graph, retain_graph=retain_graph,
                                   is_grads_batched=is_grads_batched)


def fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                  stage: str) -> tuple:
    """Zeros where a gradient is missing; strict mode refuses missing or unconnected ones."""
    if stage not in ("back", "back_trick", "double_back", "double_back_trick"):
        raise RuntimeError(f"Invalid stage argument '{stage}' to _fill_in_zeros")
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_missing_message(stage, i))
            g = retrograd.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        res.append(g)
    return tuple(res)


def _missing_message(stage: str, i: int) -> str:
    if stage == "back":
        return (f"The output of the user-provided function is independent of input {i}. This "
                f"is not allowed in strict mode.")
    if stage == "back_trick":
        return (f"The gradient with respect to the input is independent of entry {i} in the "
                f"grad_outputs when using the double backward trick to compute forward mode "
                f"gradients. This is not allowed in strict mode.")
    if stage == "double_back":
        return (f"The jacobian of the user-provided function is independent of input {i}. "
                f"This is not allowed in strict mode.")
    return (f"The hessian of the user-provided function is independent of entry {i} in the "
            f"grad_jacobian. This is not allowed in strict mode as it prevents from using the "
            f"double backward trick to replace forward mode AD.")


def construct_standard_basis_for(tensors: tuple, tensor_numels: tuple) -> tuple:
    """The rows of the identity of size sum(numels), split by columns into one chunk per tensor:
    chunk k has shape (total, numels[k]) in the dtype of tensors[k]."""
    if len(tensors) != len(tensor_numels):
        raise AssertionError(f"Expected tensors and tensor_numels to have the same length, but "
                             f"got {len(tensors)} and {len(tensor_numels)}")
    if not tensors:
        raise AssertionError("Expected at least one tensor")
    total = sum(tensor_numels)
    chunks = tuple(t.new_zeros(total, n) for t, n in zip(tensors, tensor_numels))
    offset = 0
    for chunk, n in zip(chunks, tensor_numels):
        chunk.diagonal(-offset).fill_(1)
        offset += n
    return chunks
