"""jacobian(..., strategy="forward-mode"): the Jacobian by forward-mode AD, one column (one
input element's tangent) at a time. Needs retrograd.autograd.forward_ad."""

from __future__ import annotations

from collections.abc import Callable

import retrograd
from retrograd.autograd import _functional_utils as U


def _forward_ad():
    try:
        from retrograd.autograd import forward_ad
    except ImportError:
        raise NotImplementedError(
            'torch.autograd.functional.jacobian: strategy="forward-mode" needs forward-mode AD '
            '(retrograd.autograd.forward_ad), which retrograd does not have yet. Use '
            '`strategy="reverse-mode"`.') from None
    return forward_ad


def jacfwd(func: Callable, inputs, strict: bool = False, vectorize: bool = False):
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` "
            "are not supported together (yet). Please either set `strict=False` or "
            "`strategy=\"reverse-mode\"`.")
    is_inputs_tuple, inputs = U.as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        # the missing space is torch's
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    fwad = _forward_ad()
    numels = tuple(inp.numel() for inp in inputs)
    basis = U.construct_standard_basis_for(inputs, numels)
    is_outputs_tuple = False
    primals: list = []
    columns = []  # per basis row: the output tangents
    for k in range(sum(numels)):
        with fwad.dual_level():
            duals = tuple(fwad.make_dual(inp, b[k].view_as(inp)) for inp, b in zip(inputs, basis))
            is_outputs_tuple, outs = U.as_tuple(func(*duals), "outputs")
            primals, tangents = [], []
            for out in outs:
                primal, tangent = fwad.unpack_dual(out)
                primals.append(primal)
                tangents.append(retrograd.zeros_like(primal) if tangent is None else tangent)
            columns.append(tangents)
    jac = []
    for i, out in enumerate(primals):
        stacked = retrograd.stack([col[i] for col in columns], dim=0)
        row = []
        for part, inp in zip(stacked.split(numels, dim=0), inputs):
            # dim 0 runs over input elements: move it last, then unflatten it
            row.append(part.permute(*range(1, part.ndim), 0).reshape((*out.shape, *inp.shape)))
        jac.append(row)
    return U.tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))
