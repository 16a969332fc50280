"""NumPy kernels of matrix products: mm/bmm/mv/dot/addmm and friends with torch's checks and BLAS
layouts, batched matmul, trilinear, einsum's planner and contraction, qr and inverse.
retrograd._ops.linalg declares the ops. No Tensor here: plain arrays and Python numbers.
"""

from __future__ import annotations

from math import prod

import numpy as np

from retrograd import _dtype as D
from retrograd import _errors as E
from retrograd._ops.kernels.linalg_solvers import solve_triangular
from retrograd._ops.kernels.shape import _expand_forward
from retrograd._ops.layout import not_implemented, type_name


def cpp_name(a: np.ndarray) -> str:
    """The C++ type name torch prints for an array's dtype ("float", "long int", ...)."""
    return D.CPP_NAMES.get(a.dtype.name, a.dtype.name)


def blas_operand(a: np.ndarray) -> np.ndarray:
    """`a`, made contiguous if it is expanded (a zero stride over more than one element):
    NumPy's matmul hands such an operand to its own slow loop instead of BLAS."""
    if 0 in a.strides and any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape)):
        return np.ascontiguousarray(a)
    return a


def repeated_operands(a: np.ndarray, b: np.ndarray) -> bool:
    """Every row of `a` is the same, or every column of `b` (an expanded operand, as the
    gradient of sum() reaches a linear layer): np_matmul multiplies one and repeats it."""
    return a.ndim >= 2 and b.ndim >= 2 and (
        (a.shape[-2] > 1 and a.strides[-2] == 0) or (b.shape[-1] > 1 and b.strides[-1] == 0))


def _repeated_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.shape[-2] > 1 and a.strides[-2] == 0:
        one, axis = np_matmul(a[..., :1, :], b), -2
    else:
        one, axis = np_matmul(a, b[..., :1]), -1
    shape = list(one.shape)
    shape[axis] = a.shape[-2] if axis == -2 else b.shape[-1]
    out = np.empty(shape, one.dtype)
    out[...] = one
    return out


def np_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.matmul in the inputs' dtype (NumPy computes bfloat16/float8 products in float32)."""
    if 0 in a.strides or 0 in b.strides:  # (one test for the common case: no zero stride)
        if repeated_operands(a, b):
            return _repeated_matmul(a, b)
        a = blas_operand(a)
        b = blas_operand(b)
    out = np.matmul(a, b)
    return out if out.dtype is a.dtype or out.dtype == a.dtype else out.astype(a.dtype)


def _scaled(x: np.ndarray, s) -> np.ndarray:
    # a Python scalar keeps NumPy's result in x's dtype (NEP 50 weak scalars); x is fresh.
    # ml_dtypes' bfloat16 and float8 take a Python float as float32: rounded back to x's dtype
    if s == 1:
        return x
    if np.result_type(x, s) == x.dtype:
        return np.multiply(x, s, out=x)
    out = np.multiply(x, s)
    return out.astype(x.dtype) if x.dtype.kind in "fV" and out.dtype.kind == "f" else out


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
        raise not_implemented(kernel, a.dtype)


def _mm_forward(a, b):
    _check_mm(a, b)
    return np_matmul(a, b)


def _column_major(shape: tuple, strides: tuple) -> bool:
    return len(shape) == 2 and strides[0] == 1 and strides[1] == shape[0] and shape[1] > 1


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


def _check_bmm(a, b, kernel="bmm"):
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {type_name(a.dtype)} but found "
                           f"{type_name(b.dtype)}")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    if a.dtype == np.bool_:
        raise not_implemented(kernel, a.dtype)


def _bmm_forward(a, b):
    _check_bmm(a, b)
    return np_matmul(a, b)


def _check_mv(self_ndim, mat, vec, self_dtype_of):
    if self_ndim > 1 or mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self_ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if not (self_dtype_of.dtype == mat.dtype == vec.dtype):
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{type_name(self_dtype_of.dtype)}, {type_name(mat.dtype)}, and "
                           f"{type_name(vec.dtype)}")


def _mv_size_error(n_self, mat, vec):
    return RuntimeError(f"size mismatch, got input ({n_self}), mat ({mat.shape[0]}x{mat.shape[1]}"
                        f"), vec ({vec.shape[0]})")


def _mv_forward(mat, vec):
    _check_mv(1, mat, vec, vec)
    if mat.shape[1] != vec.shape[0]:
        raise _mv_size_error(mat.shape[0], mat, vec)
    if mat.dtype == np.bool_:
        raise not_implemented("addmv_impl_cpu", mat.dtype)
    return np_matmul(mat, vec)


def _dot_forward(a, b, kernel="dot"):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found "
                           f"{type_name(a.dtype)} and {type_name(b.dtype)}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
            f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
            "respectively")
    if a.dtype == np.bool_:
        raise not_implemented(kernel, a.dtype)
    return np.asarray(np.dot(a, b)).astype(a.dtype, copy=False)


def _addmm_forward(s, m1, m2, beta, alpha):
    dt = m2.dtype
    if (m1.dtype is dt and s.dtype is dt and dt.kind == "f" and m1.ndim == 2 and m2.ndim == 2
            and m1.shape[1] == m2.shape[0] and beta == 1 and alpha == 1
            and (s.shape == (m2.shape[1],) or s.shape == (m1.shape[0], m2.shape[1]))):
        # the common case (F.linear: float operands, a bias row or a full matrix): no checks
        # can fail, the product is fresh, the bias is added in place
        if 0 in m1.strides or 0 in m2.strides:
            out = np_matmul(m1, m2)  # (an expanded operand: np_matmul's ways round it)
        else:
            out = np.matmul(m1, m2)
        return np.add(out, s, out=out)
    if m1.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {m1.ndim}-D tensor")
    if m2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {m2.ndim}-D tensor")
    if s.dtype != m2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {type_name(s.dtype)} "
                           f"and {type_name(m2.dtype)}")
    if m1.dtype != m2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {type_name(m1.dtype)} "
                           f"and {type_name(m2.dtype)}")
    if m1.shape[1] != m2.shape[0]:
        raise RuntimeError(E.MATMUL_SHAPES.format(*m1.shape, *m2.shape))
    shape = (m1.shape[0], m2.shape[1])
    if s.shape != shape and s.shape != shape[1:]:  # a bias row broadcasts as it is
        s = _expand_forward(s, shape)
    if m1.dtype == np.bool_:
        raise not_implemented("addmm_impl_cpu_", m1.dtype)
    if m1.dtype.itemsize == 2 and m1.dtype.kind in "fV":
        # half types: product, scaling and sum in float32, rounded once (as torch's kernel)
        f32 = np.float32
        out = _add_scaled(np_matmul(m1.astype(f32), m2.astype(f32)), s.astype(f32), beta,
                          alpha)
        return out.astype(m1.dtype)
    return _add_scaled(np_matmul(m1, m2), s, beta, alpha)


def _add_scaled(prod_, s, beta, alpha):
    """beta * s + alpha * prod_, in place in the fresh product; beta == 0 ignores s (nan too)."""
    out = _scaled(prod_, alpha)
    if beta == 0:
        return out
    if beta == 1:
        return np.add(out, s, out=out)
    scaled = np.multiply(s, beta)
    if scaled.dtype != out.dtype and out.dtype.kind in "fV" and scaled.dtype.kind == "f":
        return np.add(out.astype(scaled.dtype), scaled).astype(out.dtype)  # (bfloat16)
    return np.add(out, scaled, out=out)


def _addmv_forward(s, mat, vec, beta, alpha):
    _check_mv(s.ndim, mat, vec, s)
    if mat.shape[1] != vec.shape[0] or (s.ndim == 1 and s.shape[0] not in (1, mat.shape[0])):
        raise _mv_size_error(s.shape[0] if s.ndim else 1, mat, vec)
    if mat.dtype == np.bool_:
        raise not_implemented("addmv_impl_cpu", mat.dtype)
    return _add_scaled(np_matmul(mat, vec), s, beta, alpha)


def _check_batches_3d(b1, b2):
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim < 3:
        raise IndexError(E.DIM_RANGE.format(-max(b2.ndim, 1), max(b2.ndim, 1) - 1, 2))
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")


def _check_baddbmm(s, b1, b2):
    _check_batches_3d(b1, b2)
    if s.dtype != b1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {cpp_name(s)}, batch1: "
                           f"{cpp_name(b1)}, batch2: {cpp_name(b2)}")
    _check_bmm(b1, b2)


def _baddbmm_forward(s, b1, b2, beta, alpha):
    _check_baddbmm(s, b1, b2)
    s = _expand_forward(s, (b1.shape[0], b1.shape[1], b2.shape[2]))
    return _add_scaled(np_matmul(b1, b2), s, beta, alpha)


def _check_addbmm(s, b1, b2):
    _check_batches_3d(b1, b2)
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
                               f"{type_name(x.dtype)} and {type_name(b2.dtype)}")
    if b1.dtype == np.bool_:
        raise not_implemented("addmm_impl_cpu_", b1.dtype)


def _addbmm_forward(s, b1, b2, beta, alpha):
    _check_addbmm(s, b1, b2)
    n, p = b1.shape[1], b2.shape[2]
    s = _expand_forward(s, (n, p))
    # the sum over the batch is one BLAS call: (n, b*m) @ (b*m, p)
    flat1 = b1.transpose(1, 0, 2).reshape(n, -1)
    return _add_scaled(np_matmul(flat1, b2.reshape(-1, p)), s, beta, alpha)


def _matmul_batched_forward(a, b):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {type_name(a.dtype)} but found "
                           f"{type_name(b.dtype)}")
    if a.dtype == np.bool_:
        raise not_implemented("bmm", a.dtype)
    return np_matmul(a, b)


def _broadcast_batch(b1: tuple, b2: tuple) -> tuple:
    n = max(len(b1), len(b2))
    p1, p2 = (1,) * (n - len(b1)) + tuple(b1), (1,) * (n - len(b2)) + tuple(b2)
    out = []
    for i, (x, y) in enumerate(zip(p1, p2)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(E.BROADCAST.format(x, y, i))
        out.append(y if x == 1 else x)
    return tuple(out)


def _trilinear_forward(x1, w, x2):
    # out[b, o] = sum_ij x1[b, i] w[o, i, j] x2[b, j]
    t = np.tensordot(x1, w, axes=([1], [1]))  # (b, o, j)
    return np_matmul(t, x2[:, :, None])[:, :, 0]


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
        raise RuntimeError(f"expected scalar type {type_name(left.dtype)} but found "
                           f"{type_name(right.dtype)}")
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


def _einsum_diag_embed_forward(a, equation, size):
    out = np.zeros(size, a.dtype)
    np.einsum(equation, out)[...] = a  # einsum of one operand with repeats is a writable view
    return out


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


def _inplace_forward(compute):
    def forward(dst, *args):
        out = compute(dst, *args)  # the out-of-place op's checks, then the product
        if out.shape != dst.shape:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(dst.shape)} and "
                               f"output tensor size {list(out.shape)} should match")
        np.copyto(dst, out)

    return forward


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
    """R^-1 for the QR gradient (R upper triangular): LAPACK's inverse, or for a singular R
    the triangular substitution's inf / nan, as torch's triangular solve gives them there
    instead of an error."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
        return solve_triangular(a, eye, True, True, False)
