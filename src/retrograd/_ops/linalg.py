"""Linear algebra: mm, bmm, mv, dot, the add*-fused forms, matmul, linear, einsum, tensordot.

Every product is one NumPy matmul call in the input dtype (float32 stays float32). matmul and
linear are decomposed the way torch decomposes them, so results carry torch's grad_fn
(MmBackward0, UnsafeViewBackward0, ViewBackward0 around AddmmBackward0, ...) and strides.

The NumPy kernels the declarations run are in kernels/linalg.py.
"""

from __future__ import annotations

from math import prod

from retrograd import _errors as E
from retrograd._ops import dispatch
from retrograd._ops.kernels.linalg import (
    _ELL,
    _LETTERS,
    _addbmm_forward,
    _addmm_forward,
    _addmv_forward,
    _amul,
    _baddbmm_forward,
    _bmm_forward,
    _broadcast_batch,
    _column_major,
    _dot_forward,
    _einsum_diag_embed_forward,
    _einsum_forward,
    _inplace_forward,
    _inverse_forward,
    _matmul_batched_forward,
    _mm_forward,
    _mm_mat1_grad_array,
    _mm_mat2_grad_array,
    _mv_forward,
    _operand_subs,
    _Plan,
    _plan,
    _qr_forward,
    _sublist_equation,
    _trilinear_forward,
    np_matmul,
)
from retrograd._ops.kernels.shape import _squeeze_dim_forward
from retrograd._ops.layout import type_name
from retrograd._ops.registry import op, register, register_functional, register_method
from retrograd._tensor import Tensor


def _mul(grad: Tensor, s) -> Tensor:
    return grad if s == 1 else grad * s


# --- mm / bmm / mv / dot ---------------------------------------------------------------------


def mm_mat1_grad(grad, mat2, mat1_shape, mat1_strides):
    """d(mat1 @ mat2)/d mat1, laid out like mat1: a column-major mat1 (a weight's .t()) gets
    its gradient as the transpose of a row-major product, as torch's mm_mat1_backward does, so
    the weight's gradient arrives row-major and AccumulateGrad keeps it without a copy."""
    if _column_major(mat1_shape, mat1_strides):
        return mat2.mm(grad.t()).t()
    return grad.mm(mat2.t())


def mm_mat2_grad(grad, mat1, mat2_shape, mat2_strides):
    """d(mat1 @ mat2)/d mat2, laid out like mat2 (see mm_mat1_grad)."""
    if _column_major(mat2_shape, mat2_strides):
        return grad.t().mm(mat1).t()
    return mat1.t().mm(grad)


mm = op("mm(Tensor self, Tensor mat2) -> Tensor", _mm_forward,
        grads={"self": lambda grad, mat2, self_shape, self_strides:
               mm_mat1_grad(grad, mat2, self_shape, self_strides),
               "mat2": lambda grad, self, mat2_shape, mat2_strides:
               mm_mat2_grad(grad, self, mat2_shape, mat2_strides)},
        array_grads={"self": lambda grad, mat2, self_shape, self_strides:
                     _mm_mat1_grad_array(grad, mat2, self_shape, self_strides),
                     "mat2": lambda grad, self, mat2_shape, mat2_strides:
                     _mm_mat2_grad_array(grad, self, mat2_shape, mat2_strides)})
# torch.spmm on dense operands is mm (same node, same errors); no Tensor method, as in torch
register("spmm", mm)


bmm = op("bmm(Tensor self, Tensor mat2) -> Tensor", _bmm_forward,
         grads={"self": lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
                "mat2": lambda grad, self: self.transpose(1, 2).bmm(grad)},
         array_grads={"self": lambda grad, mat2: np_matmul(grad, mat2.transpose(0, 2, 1)),
                      "mat2": lambda grad, self: np_matmul(self.transpose(0, 2, 1), grad)})


mv = op("mv(Tensor self, Tensor vec) -> Tensor", _mv_forward,
        grads={"self": lambda grad, vec: outer(grad, vec),
               "vec": lambda grad, self: self.t().mv(grad)})


dot = op("dot(Tensor self, Tensor tensor) -> Tensor", _dot_forward,
         grads={"self": lambda grad, tensor: grad * tensor,
                "tensor": lambda grad, self: grad * self})

vdot = op("vdot(Tensor self, Tensor other) -> Tensor",
          lambda a, b: _dot_forward(a, b, "vdot"),
          grads={"self": lambda grad, other: grad * other,
                 "other": lambda grad, self: grad * self})


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """torch.outer: a column view of input times vec2 (torch's grad_fn is MulBackward0)."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")
    return input.reshape(input.shape[0], 1) * vec2


register("outer", outer, method=True)
register("ger", outer, method=True)


# --- fused add + product: addmm, addmv, baddbmm, addbmm ---------------------------------------


addmm = op("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> "
           "Tensor", _addmm_forward,
           grads={"self": lambda grad, beta: _mul(grad, beta),
                  "mat1": lambda grad, mat2, alpha, mat1_shape, mat1_strides:
                  _mul(mm_mat1_grad(grad, mat2, mat1_shape, mat1_strides), alpha),
                  "mat2": lambda grad, mat1, alpha, mat2_shape, mat2_strides:
                  _mul(mm_mat2_grad(grad, mat1, mat2_shape, mat2_strides), alpha)},
           array_grads={"self": lambda grad, beta: _amul(grad, beta),
                        "mat1": lambda grad, mat2, alpha, mat1_shape, mat1_strides:
                        _amul(_mm_mat1_grad_array(grad, mat2, mat1_shape, mat1_strides), alpha),
                        "mat2": lambda grad, mat1, alpha, mat2_shape, mat2_strides:
                        _amul(_mm_mat2_grad_array(grad, mat1, mat2_shape, mat2_strides), alpha)})


addmv = op("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> "
           "Tensor", _addmv_forward,
           grads={"self": lambda grad, beta: _mul(grad, beta),
                  "mat": lambda grad, vec, alpha: _mul(outer(grad, vec), alpha),
                  "vec": lambda grad, mat, alpha: _mul(mat.t().mv(grad), alpha)})


baddbmm = op("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
             "Scalar alpha=1) -> Tensor", _baddbmm_forward,
             grads={"self": lambda grad, beta: _mul(grad, beta),
                    "batch1": lambda grad, batch2, alpha:
                    _mul(grad.bmm(batch2.transpose(1, 2)), alpha),
                    "batch2": lambda grad, batch1, alpha:
                    _mul(batch1.transpose(1, 2).bmm(grad), alpha)})


addbmm = op("addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
            "Scalar alpha=1) -> Tensor", _addbmm_forward,
            grads={"self": lambda grad, beta: _mul(grad, beta),
                   "batch1": lambda grad, batch2, alpha:
                   _mul(grad.unsqueeze(0).expand(batch2.shape[0], *grad.shape)
                        .bmm(batch2.transpose(1, 2)), alpha),
                   "batch2": lambda grad, batch1, alpha:
                   _mul(batch1.transpose(1, 2).bmm(
                       grad.unsqueeze(0).expand(batch1.shape[0], *grad.shape)), alpha)})


# --- matmul ----------------------------------------------------------------------------------

# _unsafe_view: torch's reshape of a fresh result; not a view for autograd
_unsafe_view = op("_unsafe_view(Tensor self, SymInt[] size) -> Tensor",
                  lambda a, size: a.reshape(size),
                  grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
                  array_grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
                  function=False, method=False)

# the in-place squeeze_(0) torch applies to the (1, p) product of a vector and a matrix
_squeeze_row = op("_squeeze_row(Tensor self) -> Tensor", lambda a: a.reshape(a.shape[1:]),
                  node="SqueezeBackward4", grads={"self": lambda grad: grad.unsqueeze(0)},
                  function=False, method=False)


# squeeze.dim, for the decompositions here (matmul's batch squeeze, the 1-d conv and pools)
squeeze_dim = op("_squeeze_dim(Tensor(a) self, int dim) -> Tensor(a)", _squeeze_dim_forward,
                 node="SqueezeBackward1",
                 grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
                 function=False, method=False)


# torch expands both operands to a common batch and calls bmm; NumPy broadcasts batch dims
# itself, so one call does it without materializing the expanded operands
_matmul_batched = op("_matmul_batched(Tensor self, Tensor mat2) -> Tensor",
                     _matmul_batched_forward, node="BmmBackward0",
                     grads={"self": lambda grad, mat2: _matmul_batched(grad, mat2.mT),
                            "mat2": lambda grad, self: _matmul_batched(self.mT, grad)},
                     function=False, method=False)


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """torch's test for computing an N-D x (1|2)-D product as one mm/mv on a folded matrix."""
    a_larger = a.dim() >= b.dim()
    t1 = a if a_larger else b.mT
    dim_t2 = b.dim() if a_larger else a.dim()
    if not (t1.dim() >= 3 and dim_t2 <= 2):
        return False
    if (b if a_larger else a).requires_grad:
        return True
    if a.dim() == 2:
        return False
    if t1.numel() == 0:
        return True
    shape, strides = t1.shape, t1.stride()
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(t1.dim() - 2))


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """torch.matmul, dispatched to dot / mv / mm / a folded mm or mv / a batched product."""
    try:
        da, db = input._data.ndim, other._data.ndim
    except AttributeError:
        from retrograd._ops.arg_check import not_tensor

        raise not_tensor("matmul", {"input": input, "other": other}) from None
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input, other = dispatch.autocast.cast("lower", input, other)
    if da == 0 or db == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da <= 2 and db <= 2:
        if db == 1:
            return dot(input, other) if da == 1 else mv(input, other)
        if da == 1:
            out = _squeeze_row(mm(input.unsqueeze(0), other))
            vc = out._version_counter
            if vc is not None:  # torch's squeeze_ in place counts as a write: version 1
                vc.version += 1
            return out
        return mm(input, other)
    if _should_fold(input, other):
        return _matmul_folded(input, other)
    return _matmul_broadcast(input, other)


def _matmul_folded(a: Tensor, b: Tensor) -> Tensor:
    transpose = b.dim() > a.dim()
    t1 = b.mT if transpose else a
    t2 = (a.t() if a.dim() == 2 else a) if transpose else b
    lead = tuple(t1.shape[:-1])
    folded = t1.reshape(prod(lead), t1.shape[-1])
    if t2.dim() == 2:
        out = _unsafe_view(mm(folded, t2), lead + (t2.shape[1],))
        return out.mT.contiguous() if transpose else out
    return _unsafe_view(mv(folded, t2), lead)


def _matmul_broadcast(a: Tensor, b: Tensor) -> Tensor:
    da, db = a.dim(), b.dim()
    if da == 3 and db == 3 and a.shape[0] != b.shape[0]:
        # torch drops a size-1 batch of a grad-requiring operand and folds instead
        if a.shape[0] == 1 and a.requires_grad:
            return matmul(squeeze_dim(a, 0), b)
        if b.shape[0] == 1 and b.requires_grad:
            return matmul(a, squeeze_dim(b, 0))
    batch = _broadcast_batch(a.shape[:max(da - 2, 0)], b.shape[:max(db - 2, 0)])
    a2 = a if da > 1 else a.unsqueeze(0)
    b2 = b if db > 1 else b.unsqueeze(1)
    if a2.shape[-1] != b2.shape[-2]:
        n = prod(batch)
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{n}, {a2.shape[-1]}] but got: [{n}, {b2.shape[-2]}].")
    out_shape = batch + ((a.shape[-2],) if da > 1 else ()) + ((b.shape[-1],) if db > 1 else ())
    return _unsafe_view(_matmul_batched(a2, b2), out_shape)


register("matmul", matmul, method=True)
register_method("__matmul__", matmul)
register_method("__rmatmul__", lambda self, other: matmul(other, self))


# --- linear / bilinear -----------------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """F.linear: addmm for 2-D input with bias, a flattened addmm for contiguous N-D input."""
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        input, weight, bias = dispatch.autocast.cast("lower", input, weight, bias)
    nd = input._data.ndim
    if bias is not None:
        if nd == 2:
            return addmm(bias, input, weight.t())
        b = bias._data
        if b.ndim >= 1 and b.size == b.shape[-1] and input.is_contiguous():
            return _flatten_nd_linear(input, weight, bias)
    out = matmul(input, weight.t())
    return out if bias is None else out + bias


def _flatten_nd_linear(input: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    lead = tuple(input.shape[:-1])
    flat = input.reshape(prod(lead), input.shape[-1])
    out = addmm(bias, flat, weight.t())
    return out.view(lead + ((weight.shape[0],) if weight.dim() == 2 else ()))


register_functional("linear", linear)


_bilinear_core = op(
    "_bilinear_core(Tensor input1, Tensor weight, Tensor input2) -> Tensor", _trilinear_forward,
    node="TrilinearBackward0",
    grads={"input1": lambda grad, weight, input2: _einsum("bo,oij,bj->bi",
                                                          [grad, weight, input2]),
           "weight": lambda grad, input1, input2: _einsum("bo,bi,bj->oij",
                                                          [grad, input1, input2]),
           "input2": lambda grad, input1, weight: _einsum("bo,bi,oij->bj",
                                                          [grad, input1, weight])},
    function=False, method=False)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """F.bilinear: out[..., o] = input1[..., i] weight[o, i, j] input2[..., j] + bias[o]."""
    s1, s2 = tuple(input1.shape), tuple(input2.shape)
    if len(s1) != len(s2):
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {len(s1)} and "
                           f"{len(s2)}")
    for i in range(len(s1) - 1):
        if s1[i] != s2[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{s1[i]} and {s2[i]}")
    ws = tuple(weight.shape)
    if len(ws) < 3:
        raise IndexError(E.DIM_RANGE.format(-len(ws), len(ws) - 1, 2))
    if s1[-1] != ws[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {s1[-1]} "
                           f"but expected {ws[1]}")
    if s2[-1] != ws[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {s2[-1]} "
                           f"but expected {ws[2]}")
    if bias is not None and bias.shape[0] != ws[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {ws[0]}")
    out = _bilinear_core(input1.reshape(-1, s1[-1]), weight, input2.reshape(-1, s2[-1]))
    out = out.reshape(s1[:-1] + (ws[0],))
    return out if bias is None else out + bias


register_functional("bilinear", bilinear)
register("bilinear", bilinear)


# --- tensordot -------------------------------------------------------------------------------


def _tensordot_dims(a: Tensor, dims) -> tuple:
    if isinstance(dims, Tensor):  # one number (truncated to an int), or the two lists
        dims = int(dims.item()) if dims.numel() <= 1 else (dims[0].tolist(), dims[1].tolist())
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        return list(range(-dims, 0)), list(range(dims))
    d1, d2 = dims
    if isinstance(d1, int):
        d1 = [d1]
    if isinstance(d2, int):
        d2 = [d2]
    return list(d1), list(d2)


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """torch.tensordot: permute both operands, fold them to matrices, one mm, reshape."""
    from retrograd._dims import wrap_dim

    if out is not None:
        raise NotImplementedError("tensordot(out=...) is not supported")
    dims1, dims2 = _tensordot_dims(a, dims)
    if len(dims1) != len(dims2):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    dims1 = [wrap_dim(d, a.dim()) for d in dims1]
    dims2 = [wrap_dim(d, b.dim()) for d in dims2]
    raw1, raw2 = _tensordot_dims(a, dims)
    csize = 1
    t1, t2 = a, b
    for d1, d2, r1, r2 in zip(dims1, dims2, raw1, raw2):
        s1, s2 = a.shape[d1], b.shape[d2]
        if s2 == 1:
            t1 = t1.sum(d1, keepdim=True)
        elif s1 == 1:
            t2 = t2.sum(d2, keepdim=True)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in "
                               f"dim {r1} and second has size {s2} in dim {r2}")
        else:
            csize *= s1
    keep1 = [i for i in range(a.dim()) if i not in dims1]
    keep2 = [i for i in range(b.dim()) if i not in dims2]
    rsizes = [t1.shape[i] for i in keep1] + [t2.shape[i] for i in keep2]
    m1 = t1.permute(keep1 + dims1).reshape(prod(t1.shape[i] for i in keep1), csize)
    m2 = t2.permute(dims2 + keep2).reshape(csize, prod(t2.shape[i] for i in keep2))
    return mm(m1, m2).reshape(rsizes)


register("tensordot", tensordot)


# --- einsum ----------------------------------------------------------------------------------


# The forward (kernels/linalg.py) replays torch's algorithm on NumPy arrays. Gradients are
# einsums of the incoming gradient with the other operands, so every order of derivative is again
# an einsum.


def _einsum_grads(grad: Tensor, tensors: list, equation: str) -> list:
    ndims = tuple(t._data.ndim for t in tensors)
    p = _plan(equation, ndims)
    subs = _operand_subs(p, ndims)
    out = []
    for k, t in enumerate(tensors):
        if not t.requires_grad:
            out.append(None)
            continue
        others = [j for j in range(len(tensors)) if j != k]
        out.append(_operand_grad(grad, p.out, subs[k], t, [subs[j] for j in others],
                                 [tensors[j] for j in others]))
    return out


def _operand_grad(grad: Tensor, out_sub: str, sub: str, t: Tensor, other_subs: list,
                  others: list) -> Tensor:
    """d(einsum)/d(operand) contracted with grad: an einsum of grad and the other operands."""
    uniq = "".join(dict.fromkeys(sub))
    avail = set(out_sub).union(*other_subs)
    keep = "".join(c for c in uniq if c in avail)
    g = _einsum(",".join([out_sub] + other_subs) + "->" + keep, [grad] + others)
    size = {c: t.shape[sub.index(c)] for c in uniq}
    shrink = [i for i, c in enumerate(keep) if size[c] == 1 and g.shape[i] != 1]
    if shrink:  # t was broadcast along these dims
        g = g.sum(shrink, keepdim=True)
    for i, c in enumerate(uniq):
        if c not in avail:  # summed away in the forward: the gradient is constant along it
            g = g.unsqueeze(i)
    target = [size[c] for c in uniq]
    if list(g.shape) != target:
        g = g.expand(target)
    if len(uniq) != len(sub):
        g = _einsum_diag_embed(g, f"{sub}->{uniq}", list(t.shape))
    return g


_einsum_diag_embed = op(
    "_einsum_diag_embed(Tensor self, str equation, int[] size) -> Tensor",
    _einsum_diag_embed_forward,
    grads={"self": lambda grad, equation: _einsum(equation, [grad])},
    function=False, method=False)

_einsum = op("_einsum(str equation, Tensor[] tensors) -> Tensor", _einsum_forward,
             grads={"tensors": _einsum_grads}, function=False, method=False)

# the same op when torch's last step is a pointwise product (no label is summed)
_einsum_mul = op("_einsum_mul(str equation, Tensor[] tensors) -> Tensor", _einsum_forward,
                 node="MulBackward0", grads={"tensors": _einsum_grads},
                 function=False, method=False)


def einsum(*args) -> Tensor:
    """torch.einsum (equation and operands, a list of operands, or the sublist format)."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    p = _plan(equation, tuple(t._data.ndim for t in operands))
    if len(operands) == 1:
        return _einsum_single(p, operands[0])
    if p.n_dims > p.out_num_dim:
        # torch's result is a view dropping the contracted (size-1) dims of the last product
        out = _einsum(equation, list(operands))
        return out.view(tuple(out.shape))
    return _einsum_mul(equation, list(operands))


def _einsum_single(p: _Plan, x: Tensor) -> Tensor:
    """One operand: torch takes diagonals for repeated labels, permutes, sums contracted dims."""
    labels = p.op_labels[0]
    perm = [-1] * p.n_dims
    dim = 0
    for s in labels:
        if s == _ELL:
            n = x._data.ndim - (len(labels) - 1)
            for j in range(p.ell_num_dim - n, p.ell_num_dim):
                perm[p.ell_index + j] = dim
                dim += 1
        elif perm[p.perm_of[s]] == -1:
            perm[p.perm_of[s]] = dim
            dim += 1
        else:
            prev = perm[p.perm_of[s]]
            if x.shape[dim] != x.shape[prev]:
                raise RuntimeError(
                    f"einsum(): subscript {_LETTERS[s]} is repeated for operand 0 but the sizes "
                    f"don't match, {x.shape[dim]} != {x.shape[prev]}")
            x = x.diagonal(0, prev, dim).movedim(-1, prev)
    out = x.permute(perm)
    if p.n_dims > p.out_num_dim:
        out = out.sum(list(range(p.out_num_dim, p.n_dims)))
    return out


register("einsum", einsum)


# --- in-place variants -----------------------------------------------------------------------


def _declare_inplace() -> None:
    for fn in (addmm, addmv, baddbmm, addbmm):
        od = fn.opdef
        head, rest = od.schema.text.split("(", 1)
        args = rest.rsplit("->", 1)[0].replace("Tensor self", "Tensor(a!) self", 1)
        grads = {od.arg_names[od.tensor_idx[f.inputs[0]]]: f.fn for f in od.formulas}
        op(f"{head}_({args}-> Tensor(a!)", _inplace_forward(od.forward), grads=grads,
           node=od.node_name, function=False)


_declare_inplace()


# --- QR --------------------------------------------------------------------------------------

QR_R_MODE = ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
             "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
             "linalg.qr.")
QR_COMPLETE_TALL = ("The QR decomposition is not differentiable when mode='complete' and "
                    "nrows > ncols.")


# R^-1 for the QR gradient (R is triangular, but the general inverse differentiates the same way)
_qr_r_inverse = op("_qr_r_inverse(Tensor self) -> Tensor", _inverse_forward,
                   grads={"self": lambda grad, result:
                          -matmul(matmul(result.mT, grad), result.mT)},
                   function=False, method=False)


def _qr_square_grad(gQ: Tensor, gR: Tensor, Q: Tensor, R: Tensor) -> Tensor:
    """dL/dA for A = QR with R square (m >= n): (gQ + Q sym(M)) R^-T, with M = R gR^T - gQ^T Q
    and sym(M) the symmetric matrix that has M's lower triangle."""
    M = matmul(R, gR.mT) - matmul(gQ.mT, Q)
    sym = M.tril() + M.tril(-1).mT
    return matmul(gQ + matmul(Q, sym), _qr_r_inverse(R).mT)


def _qr_grad(grads, Q, R, mode):
    if mode == "r":
        raise RuntimeError(QR_R_MODE)
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(QR_COMPLETE_TALL)
    gQ, gR = grads
    if gQ is None:
        gQ = Q.new_zeros(Q.shape)
    if gR is None:
        gR = R.new_zeros(R.shape)
    if m >= n:
        return _qr_square_grad(gQ, gR, Q, R)
    # A = Q [U | V] with U square: the first m columns X = QU are a square QR; the others,
    # Y = QV, reach Q through V = Q^T Y, which adds Y gV^T to X's gQ
    U, V = R[..., :m], R[..., m:]
    gU, gV = gR[..., :m], gR[..., m:]
    from retrograd._ops.shape import cat

    gX = _qr_square_grad(gQ + matmul(matmul(Q, V), gV.mT), gU, Q, U)
    return cat([gX, matmul(Q, gV)], -1)


linalg_qr = op("linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)", _qr_forward,
               grads={"A": _qr_grad}, function=False, method=False)


def qr(A: Tensor, mode: str = "reduced") -> tuple:
    """torch.linalg.qr: (Q, R) with A = QR; mode 'reduced', 'complete' or 'r' (Q left empty)."""
    from retrograd._ops.reduction import return_types

    if A.dim() < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError("linalg.qr: Expected a floating point or complex tensor as input. "
                           f"Got {type_name(A._data.dtype)}")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return return_types.linalg_qr(linalg_qr(A, mode))
