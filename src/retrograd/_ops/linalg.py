"""Linear algebra: mm, bmm, mv, dot, the add*-fused forms, matmul, linear, einsum, tensordot.

Every product is one NumPy matmul call in the input dtype (float32 stays float32). matmul and
linear are decomposed the way torch decomposes them, so results carry torch's grad_fn
(MmBackward0, UnsafeViewBackward0, ViewBackward0 around AddmmBackward0, ...) and strides.
"""

from __future__ import annotations

from math import prod

import numpy as np

from retrograd import _dtype as D
from retrograd import _errors as E
from retrograd._ops import dispatch
from retrograd._ops.registry import op, register, register_functional, register_method
from retrograd._ops.shape import _expand_forward
from retrograd._tensor import Tensor


def cpp_name(a: np.ndarray) -> str:
    """The C++ type name torch prints for an array's dtype ("float", "long int", ...)."""
    return D.CPP_NAMES.get(a.dtype.name, a.dtype.name)


def scalar_name(a: np.ndarray) -> str:
    """torch's ScalarType name for an array's dtype ("Float", "Long", ...)."""
    return D.SCALAR_NAMES.get(a.dtype.name, a.dtype.name)


def not_implemented(kernel: str, a: np.ndarray) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_name(a)}\'')


def blas_operand(a: np.ndarray) -> np.ndarray:
    """`a`, made contiguous if it is expanded (a zero stride over more than one element):
    NumPy's matmul hands such an operand to its own slow loop instead of BLAS."""
    if 0 in a.strides and any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape)):
        return np.ascontiguousarray(a)
    return a


def np_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.matmul in the inputs' dtype (NumPy computes bfloat16/float8 products in float32)."""
    out = np.matmul(blas_operand(a), blas_operand(b))
    return out if out.dtype is a.dtype or out.dtype == a.dtype else out.astype(a.dtype)


def _scaled(x: np.ndarray, s) -> np.ndarray:
    # a Python scalar keeps NumPy's result in x's dtype (NEP 50 weak scalars); x is fresh
    if s == 1:
        return x
    return np.multiply(x, s, out=x if np.result_type(x, s) == x.dtype else None)


def _mul(grad: Tensor, s) -> Tensor:
    return grad if s == 1 else grad * s


# --- mm / bmm / mv / dot ---------------------------------------------------------------------


def _check_mm(a, b, kernel="addmm_impl_cpu_"):
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {cpp_name(a)} != "
                           f"{cpp_name(b)}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(E.MATMUL_SHAPES.format(*a.shape, *b.shape))
    if a.dtype == np.bool_:
        raise not_implemented(kernel, a)


def _mm_forward(a, b):
    _check_mm(a, b)
    return np_matmul(a, b)


def _column_major(shape: tuple, strides: tuple) -> bool:
    return len(shape) == 2 and strides[0] == 1 and strides[1] == shape[0] and shape[1] > 1


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


def _mm_mat1_grad_array(grad, mat2, mat1_shape, mat1_strides):
    """mm_mat1_grad on arrays (NOTE [Array formulas])."""
    if _column_major(mat1_shape, mat1_strides):
        return np_matmul(mat2, grad.T).T
    return np_matmul(grad, mat2.T)


def _mm_mat2_grad_array(grad, mat1, mat2_shape, mat2_strides):
    """mm_mat2_grad on arrays (NOTE [Array formulas])."""
    if _column_major(mat2_shape, mat2_strides):
        return np_matmul(grad.T, mat1).T
    return np_matmul(mat1.T, grad)


def _amul(a, s):
    """_mul on an array: the array itself when s is 1 (a passed-through gradient stays one)."""
    return a if s == 1 else np.multiply(a, s)


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


def _check_bmm(a, b, kernel="bmm"):
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(a)} but found {scalar_name(b)}")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    if a.dtype == np.bool_:
        raise not_implemented(kernel, a)


def _bmm_forward(a, b):
    _check_bmm(a, b)
    return np_matmul(a, b)


bmm = op("bmm(Tensor self, Tensor mat2) -> Tensor", _bmm_forward,
         grads={"self": lambda grad, mat2: grad.bmm(mat2.transpose(1, 2)),
                "mat2": lambda grad, self: self.transpose(1, 2).bmm(grad)},
         array_grads={"self": lambda grad, mat2: np_matmul(grad, mat2.transpose(0, 2, 1)),
                      "mat2": lambda grad, self: np_matmul(self.transpose(0, 2, 1), grad)})


def _check_mv(self_ndim, mat, vec, self_dtype_of):
    if self_ndim > 1 or mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self_ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if not (self_dtype_of.dtype == mat.dtype == vec.dtype):
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{scalar_name(self_dtype_of)}, {scalar_name(mat)}, and "
                           f"{scalar_name(vec)}")


def _mv_size_error(n_self, mat, vec):
    return RuntimeError(f"size mismatch, got input ({n_self}), mat ({mat.shape[0]}x{mat.shape[1]}"
                        f"), vec ({vec.shape[0]})")


def _mv_forward(mat, vec):
    _check_mv(1, mat, vec, vec)
    if mat.shape[1] != vec.shape[0]:
        raise _mv_size_error(mat.shape[0], mat, vec)
    if mat.dtype == np.bool_:
        raise not_implemented("addmv_impl_cpu", mat)
    return np_matmul(mat, vec)


mv = op("mv(Tensor self, Tensor vec) -> Tensor", _mv_forward,
        grads={"self": lambda grad, vec: outer(grad, vec),
               "vec": lambda grad, self: self.t().mv(grad)})


def _dot_forward(a, b, kernel="dot"):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{scalar_name(a)} and {scalar_name(b)}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
            f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
            "respectively")
    if a.dtype == np.bool_:
        raise not_implemented(kernel, a)
    return np.asarray(np.dot(a, b)).astype(a.dtype, copy=False)


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


def _addmm_forward(s, m1, m2, beta, alpha):
    dt = m2.dtype
    if (m1.dtype is dt and s.dtype is dt and dt.kind == "f" and m1.ndim == 2 and m2.ndim == 2
            and m1.shape[1] == m2.shape[0] and beta == 1 and alpha == 1
            and (s.shape == (m2.shape[1],) or s.shape == (m1.shape[0], m2.shape[1]))):
        # the common case (F.linear: float operands, a bias row or a full matrix): no checks
        # can fail, the product is fresh, the bias is added in place
        out = np.matmul(blas_operand(m1), blas_operand(m2))
        return np.add(out, s, out=out)
    if m1.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {m1.ndim}-D tensor")
    if m2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {m2.ndim}-D tensor")
    if s.dtype != m2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {scalar_name(s)} "
                           f"and {scalar_name(m2)}")
    if m1.dtype != m2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {scalar_name(m1)} "
                           f"and {scalar_name(m2)}")
    if m1.shape[1] != m2.shape[0]:
        raise RuntimeError(E.MATMUL_SHAPES.format(*m1.shape, *m2.shape))
    shape = (m1.shape[0], m2.shape[1])
    if s.shape != shape and s.shape != shape[1:]:  # a bias row broadcasts as it is
        s = _expand_forward(s, shape)
    if m1.dtype == np.bool_:
        raise not_implemented("addmm_impl_cpu_", m1)
    return _add_scaled(np_matmul(m1, m2), s, beta, alpha)


def _add_scaled(prod_, s, beta, alpha):
    """beta * s + alpha * prod_, in place in the fresh product; beta == 0 ignores s (nan too)."""
    out = _scaled(prod_, alpha)
    if beta == 0:
        return out
    if beta == 1:
        return np.add(out, s, out=out)
    return np.add(out, np.multiply(s, beta), out=out)


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


def _addmv_forward(s, mat, vec, beta, alpha):
    _check_mv(s.ndim, mat, vec, s)
    if mat.shape[1] != vec.shape[0] or (s.ndim == 1 and s.shape[0] not in (1, mat.shape[0])):
        raise _mv_size_error(s.shape[0] if s.ndim else 1, mat, vec)
    if mat.dtype == np.bool_:
        raise not_implemented("addmv_impl_cpu", mat)
    return _add_scaled(np_matmul(mat, vec), s, beta, alpha)


addmv = op("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> "
           "Tensor", _addmv_forward,
           grads={"self": lambda grad, beta: _mul(grad, beta),
                  "mat": lambda grad, vec, alpha: _mul(outer(grad, vec), alpha),
                  "vec": lambda grad, mat, alpha: _mul(mat.t().mv(grad), alpha)})


def _check_baddbmm(s, b1, b2):
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim < 3:
        raise IndexError(E.DIM_RANGE.format(-max(b2.ndim, 1), max(b2.ndim, 1) - 1, 2))
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if s.dtype != b1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {cpp_name(s)}, batch1: "
                           f"{cpp_name(b1)}, batch2: {cpp_name(b2)}")
    _check_bmm(b1, b2)


def _baddbmm_forward(s, b1, b2, beta, alpha):
    _check_baddbmm(s, b1, b2)
    s = _expand_forward(s, (b1.shape[0], b1.shape[1], b2.shape[2]))
    return _add_scaled(np_matmul(b1, b2), s, beta, alpha)


baddbmm = op("baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "
             "Scalar alpha=1) -> Tensor", _baddbmm_forward,
             grads={"self": lambda grad, beta: _mul(grad, beta),
                    "batch1": lambda grad, batch2, alpha:
                    _mul(grad.bmm(batch2.transpose(1, 2)), alpha),
                    "batch2": lambda grad, batch1, alpha:
                    _mul(batch1.transpose(1, 2).bmm(grad), alpha)})


def _check_addbmm(s, b1, b2):
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim < 3:
        raise IndexError(E.DIM_RANGE.format(-max(b2.ndim, 1), max(b2.ndim, 1) - 1, 2))
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b1.shape[0] != b2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{b1.shape[0]} and {b2.shape[0]}")
    if b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({b1.shape[1]}x{b1.shape[2]} and "
                           f"{b2.shape[1]}x{b2.shape[2]})")
    # torch checks the fused sum as an addmm of the folded batch
    for name, x in (("self", s), ("mat1", b1)):
        if x.dtype != b2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{scalar_name(x)} and {scalar_name(b2)}")
    if b1.dtype == np.bool_:
        raise not_implemented("addmm_impl_cpu_", b1)


def _addbmm_forward(s, b1, b2, beta, alpha):
    _check_addbmm(s, b1, b2)
    n, p = b1.shape[1], b2.shape[2]
    s = _expand_forward(s, (n, p))
    # the sum over the batch is one BLAS call: (n, b*m) @ (b*m, p)
    flat1 = b1.transpose(1, 0, 2).reshape(n, -1)
    return _add_scaled(np_matmul(flat1, b2.reshape(-1, p)), s, beta, alpha)


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


def _squeeze_dim_forward(a, dim):
    dim %= max(a.ndim, 1)
    return a.reshape(a.shape[:dim] + a.shape[dim + 1:]) if a.shape[dim] == 1 else a.view()


# squeeze.dim, for the decompositions here (matmul's batch squeeze, the 1-d conv and pools)
squeeze_dim = op("_squeeze_dim(Tensor(a) self, int dim) -> Tensor(a)", _squeeze_dim_forward,
                 node="SqueezeBackward1",
                 grads={"self": lambda grad, self_shape: grad.reshape(self_shape)},
                 function=False, method=False)


def _matmul_batched_forward(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(a)} but found {scalar_name(b)}")
    if a.dtype == np.bool_:
        raise not_implemented("bmm", a)
    return np_matmul(a, b)


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


def _broadcast_batch(b1: tuple, b2: tuple) -> tuple:
    n = max(len(b1), len(b2))
    p1, p2 = (1,) * (n - len(b1)) + tuple(b1), (1,) * (n - len(b2)) + tuple(b2)
    out = []
    for i, (x, y) in enumerate(zip(p1, p2)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(E.BROADCAST.format(x, y, i))
        out.append(y if x == 1 else x)
    return tuple(out)


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


def _trilinear_forward(x1, w, x2):
    # out[b, o] = sum_ij x1[b, i] w[o, i, j] x2[b, j]
    t = np.tensordot(x1, w, axes=([1], [1]))  # (b, o, j)
    return np_matmul(t, x2[:, :, None])[:, :, 0]


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
    if isinstance(dims, Tensor):
        dims = dims.tolist()
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


# The forward replays torch's algorithm on NumPy arrays (diagonals for repeated labels, align all
# operands to one dim order, contract left to right, each pair as one batched matmul), so values
# come from BLAS and the result has torch's memory layout. Gradients are einsums of the incoming
# gradient with the other operands, so every order of derivative is again an einsum.

_ELL = 52  # the ellipsis, after the 52 letters (A-Z are 0-25, a-z are 26-51, as torch numbers)
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _subscript(ch: str) -> int:
    return ord(ch) - 65 if ch.isupper() else ord(ch) - 71


class _Plan:
    """A parsed equation for given operand ranks: where every operand dim goes."""

    __slots__ = ("op_labels", "perm_of", "ell_index", "ell_num_dim", "out_num_dim", "n_dims",
                 "letters", "out")


def _parse_lhs(lhs: str, num_ops: int) -> list:
    op_labels: list = [[] for _ in range(num_ops)]
    cur, ell, i = 0, False, 0
    while i < len(lhs):
        ch = lhs[i]
        if ch == ".":
            if ell:
                raise RuntimeError(f"einsum(): found '.' for operand {cur} for which an ellipsis "
                                   "was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {cur} that is not part of "
                                   "any ellipsis")
            op_labels[cur].append(_ELL)
            ell = True
            i += 2
        elif ch == ",":
            cur += 1
            if cur >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                                   "equation")
            ell = False
        elif ch != " ":
            if ch not in _LETTERS:
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            op_labels[cur].append(_subscript(ch))
        i += 1
    if cur != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


def _count_labels(op_labels: list, ndims: tuple) -> tuple:
    count = [0] * _ELL
    ell_num_dim = 0
    for i, labels in enumerate(op_labels):
        n = len(labels)
        has_ell = _ELL in labels
        if has_ell:
            n -= 1
            ell_num_dim = max(ell_num_dim, ndims[i] - n)
        for s in labels:
            if s != _ELL:
                count[s] += 1
        if (n > ndims[i]) if has_ell else (n != ndims[i]):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n}) "
                + ("is more than" if has_ell else "does not match")
                + f" the number of dimensions ({ndims[i]}) for operand {i}"
                + ("" if has_ell else " and no ellipsis was given"))
    return count, ell_num_dim


def _parse_output(rhs: str, lhs_len: int, count: list, perm_of: list, ell_num_dim: int) -> tuple:
    pos, ell_index, ell_out, i = 0, 0, False, 0
    while i < len(rhs):
        ch = rhs[i]
        if ch == ".":
            if ell_out:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                   "already found")
            if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                   "ellipsis (...)")
            i += 2
            ell_index, pos, ell_out = pos, pos + ell_num_dim, True
        elif ch != " ":
            if ch not in _LETTERS:
                raise RuntimeError(f"einsum(): invalid subscript given at index {lhs_len + 2 + i}"
                                   " in the equation string, subscripts must be in [a-zA-Z]")
            s = _subscript(ch)
            if not (count[s] > 0 and perm_of[s] == -1):
                raise RuntimeError(f"einsum(): output subscript {ch}" + (
                    " appears more than once in the output" if perm_of[s] > -1
                    else " does not appear in the equation for any input operand"))
            perm_of[s] = pos
            pos += 1
        i += 1
    return pos, ell_index, ell_out


_PLANS: dict = {}


def _plan(equation: str, ndims: tuple) -> _Plan:
    key = (equation, ndims)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _make_plan(equation, ndims)
        if len(_PLANS) > 1024:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def _make_plan(equation: str, ndims: tuple) -> _Plan:
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_lhs(lhs, len(ndims))
    count, ell_num_dim = _count_labels(op_labels, ndims)
    perm_of = [-1] * _ELL
    if arrow < 0:
        # implicit output: the ellipsis, then the labels seen once, in label order
        pos, ell_index, ell_out = ell_num_dim, 0, True
        for s in range(_ELL):
            if count[s] == 1:
                perm_of[s] = pos
                pos += 1
    else:
        pos, ell_index, ell_out = _parse_output(equation[arrow + 2:], len(lhs), count, perm_of,
                                                ell_num_dim)
    p = _Plan()
    p.out_num_dim = pos
    if not ell_out:
        ell_index, pos = pos, pos + ell_num_dim
    for s in range(_ELL):
        if count[s] > 0 and perm_of[s] == -1:
            perm_of[s] = pos
            pos += 1
    p.op_labels, p.perm_of, p.ell_index, p.ell_num_dim, p.n_dims = (
        op_labels, perm_of, ell_index, ell_num_dim, pos)
    _name_dims(p, count)
    return p


def _name_dims(p: _Plan, count: list) -> None:
    """Give every aligned dim a letter (spare letters for ellipsis dims), for gradient equations."""
    letters = [""] * p.n_dims
    for s in range(_ELL):
        if p.perm_of[s] >= 0:
            letters[p.perm_of[s]] = _LETTERS[s]
    spare = iter(c for s, c in enumerate(_LETTERS) if count[s] == 0)
    for j in range(p.ell_num_dim):
        letters[p.ell_index + j] = next(spare)
    p.letters = letters
    p.out = "".join(letters[: p.out_num_dim])


def _operand_subs(p: _Plan, ndims: tuple) -> list:
    """Each operand's letters, dim by dim (ellipsis expanded)."""
    out = []
    for i, labels in enumerate(p.op_labels):
        sub = []
        for s in labels:
            if s == _ELL:
                n = ndims[i] - (len(labels) - 1)
                sub.extend(p.letters[p.ell_index + j] for j in range(p.ell_num_dim - n,
                                                                     p.ell_num_dim))
            else:
                sub.append(p.letters[p.perm_of[s]])
        out.append("".join(sub))
    return out


def _align(p: _Plan, arrays: list) -> tuple:
    """Take diagonals, add missing dims and permute every operand to the common dim order."""
    label_size = [1] * _ELL
    ell_sizes = [1] * p.ell_num_dim
    counts = [0] * p.n_dims
    ops = []
    for i, a in enumerate(arrays):
        labels = p.op_labels[i]
        perm = [-1] * p.n_dims
        dim = 0
        for s in labels:
            if s == _ELL:
                n = arrays[i].ndim - (len(labels) - 1)
                for j in range(p.ell_num_dim - n, p.ell_num_dim):
                    size = a.shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}"
                                f"has size {size} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        counts[p.ell_index + j] += 1
                    perm[p.ell_index + j] = dim
                    dim += 1
            elif perm[p.perm_of[s]] == -1:
                size = a.shape[dim]
                if size != 1:
                    if label_size[s] not in (1, size):
                        raise RuntimeError(
                            f"einsum(): subscript {_LETTERS[s]} has size {size} for operand {i} "
                            f"which does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    counts[p.perm_of[s]] += 1
                perm[p.perm_of[s]] = dim
                dim += 1
            else:
                prev = perm[p.perm_of[s]]
                if a.shape[dim] != a.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_LETTERS[s]} is repeated for operand {i} but the "
                        f"sizes don't match, {a.shape[dim]} != {a.shape[prev]}")
                a = np.moveaxis(np.diagonal(a, 0, prev, dim), -1, prev)
        for k in range(p.n_dims):
            if perm[k] == -1:
                a = np.expand_dims(a, dim)
                perm[k] = dim
                dim += 1
        ops.append(a.transpose(perm))
    return ops, counts


def _sum_keep(a: np.ndarray, dims) -> np.ndarray:
    return np.sum(a, axis=tuple(dims), keepdims=True, dtype=a.dtype)


def _sumproduct_pair(left: np.ndarray, right: np.ndarray, sum_dims: list) -> np.ndarray:
    """(left * right).sum(sum_dims, keepdim=True) as one batched matmul, in torch's layout."""
    if not sum_dims:
        from retrograd._ops.layout import binary

        if left.dtype != right.dtype:  # a pointwise product promotes as torch's mul does
            from retrograd import _dtype as D

            target = D.promote_types(D.from_numpy_dtype(left.dtype),
                                     D.from_numpy_dtype(right.dtype)).np
            left, right = left.astype(target, copy=False), right.astype(target, copy=False)
        return binary(np.multiply)(left, right)
    if left.dtype != right.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(left)} but found "
                           f"{scalar_name(right)}")
    lro, lo, ro = [], [], []
    sum_size = 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            sum_size *= left.shape[i]
        elif sl and sr:
            lro.append(i)
        elif sl:
            lo.append(i)
        else:
            ro.append(i)
    if lo and ro and ro[-1] < lo[0]:
        # torch swaps the operands so the product comes out in the output's dim order
        left, right, lo, ro = right, left, ro, lo
    lsz = [left.shape[d] for d in lro] + [left.shape[d] for d in lo]
    rsz = [right.shape[d] for d in ro]
    order = lro + lo + sum_dims + ro
    lmat = left.transpose(lro + lo + sum_dims + ro).reshape(prod(lsz[:len(lro)]),
                                                            prod(lsz[len(lro):]), sum_size)
    rmat = right.transpose(lro + sum_dims + ro + lo).reshape(prod(lsz[:len(lro)]), sum_size,
                                                             prod(rsz))
    out = np_matmul(lmat, rmat).reshape(lsz + [1] * len(sum_dims) + rsz)
    inverse = [0] * len(order)
    for pos, d in enumerate(order):
        inverse[d] = pos
    return out.transpose(inverse)


def _einsum_forward(equation: str, arrays: list) -> np.ndarray:
    p = _plan(equation, tuple(a.ndim for a in arrays))
    ops, counts = _align(p, arrays)
    contract = range(p.out_num_dim, p.n_dims)
    while len(ops) > 1:
        a, b = ops[0], ops[1]
        sum_dims, a_sum, b_sum = [], [], []
        for d in contract:
            if a.shape[d] != 1 and b.shape[d] != 1:
                counts[d] -= 1
                if counts[d] == 1:
                    sum_dims.append(d)
                    counts[d] = 0
            elif counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    counts[d] = 0
        if a_sum:
            a = _sum_keep(a, a_sum)
        if b_sum:
            b = _sum_keep(b, b_sum)
        ops[:2] = [_sumproduct_pair(a, b, sum_dims)]
    out = ops[0]
    if p.n_dims > p.out_num_dim:
        if len(arrays) > 1:
            return out.reshape(out.shape[:p.out_num_dim])
        return np.sum(out, axis=tuple(contract), dtype=out.dtype)
    if len(arrays) == 1 and np.may_share_memory(out, arrays[0]):
        out = out.copy(order="K")  # the public einsum makes views itself, with permute
    return out


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


def _diag_embed_forward(a, equation, size):
    out = np.zeros(size, a.dtype)
    np.einsum(equation, out)[...] = a  # einsum of one operand with repeats is a writable view
    return out


_einsum_diag_embed = op(
    "_einsum_diag_embed(Tensor self, str equation, int[] size) -> Tensor", _diag_embed_forward,
    grads={"self": lambda grad, equation: _einsum(equation, [grad])},
    function=False, method=False)

_einsum = op("_einsum(str equation, Tensor[] tensors) -> Tensor", _einsum_forward,
             grads={"tensors": _einsum_grads}, function=False, method=False)

# the same op when torch's last step is a pointwise product (no label is summed)
_einsum_mul = op("_einsum_mul(str equation, Tensor[] tensors) -> Tensor", _einsum_forward,
                 node="MulBackward0", grads={"tensors": _einsum_grads},
                 function=False, method=False)


def _sublist_equation(args: tuple) -> tuple:
    def sub(n) -> str:
        if n is Ellipsis:
            return "..."
        if 0 <= n < 52:
            return _LETTERS[n]
        raise ValueError("einsum(): subscript in subscript list is not within the valid range "
                         "[0, 52)")

    equation = ",".join("".join(sub(s) for s in lst) for lst in args[1::2])
    if len(args) % 2 == 1:
        return equation + "->" + "".join(sub(s) for s in args[-1]), args[:-1:2]
    return equation, args[::2]


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


def _inplace_forward(compute):
    def forward(dst, *args):
        out = compute(dst, *args)  # the out-of-place op's checks, then the product
        if out.shape != dst.shape:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(dst.shape)} and "
                               f"output tensor size {list(out.shape)} should match")
        np.copyto(dst, out)

    return forward


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


def _column_major_batch(a: np.ndarray) -> np.ndarray:
    """a with each matrix stored column by column (LAPACK's layout, and so torch's strides)."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)


def _qr_forward(a, mode):
    if a.shape[-2] == 0 or a.shape[-1] == 0:  # NumPy's LAPACK wrapper refuses empty matrices
        m, n = a.shape[-2:]
        k = m if mode == "complete" else min(m, n)
        q = np.zeros(a.shape[:-2] + (m, k), a.dtype)
        q[..., range(k), range(k)] = 1
        r = np.zeros(a.shape[:-2] + (min(m, n) if mode != "complete" else m, n), a.dtype)
        return (np.zeros((0,), a.dtype) if mode == "r" else _column_major_batch(q),
                _column_major_batch(r))
    if mode == "r":
        r = np.linalg.qr(a, mode="r")
        return np.zeros((0,), a.dtype), _column_major_batch(r.astype(a.dtype, copy=False))
    q, r = np.linalg.qr(a, mode=mode)
    return (_column_major_batch(q.astype(a.dtype, copy=False)),
            _column_major_batch(r.astype(a.dtype, copy=False)))


def _inverse_forward(a):
    return np.linalg.inv(a)


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
                           f"Got {scalar_name(A._data)}")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    return return_types.linalg_qr(linalg_qr(A, mode))
