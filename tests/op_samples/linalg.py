"""Samples for matrix products: mm, bmm, mv, dot, the add*-fused ops, matmul, linear, bilinear,
einsum and tensordot."""

from tests.op_samples import Sample, arr


def rmatmul(lib, a, b):
    return a.__rmatmul__(b)


def addmm_inplace(lib, s, a, b):
    return s.clone().addmm_(a, b, beta=0.5, alpha=2.0)


def addmv_inplace(lib, s, a, b):
    return s.clone().addmv_(a, b)


def baddbmm_inplace(lib, s, a, b):
    return s.clone().baddbmm_(a, b, alpha=0.5)


def addbmm_inplace(lib, s, a, b):
    return (s * 1).addbmm_(a, b, beta=2.0)


def einsum_list(lib, a, b):
    return lib.einsum("ij,jk->ik", [a, b])


def einsum_sublist(lib, a, b):
    return lib.einsum(a, [0, 1], b, [1, 2], [0, 2])


def _matmul_samples() -> list:
    shapes = [
        ((3,), (3,), "dot"), ((2, 3), (3,), "mv"), ((3,), (3, 4), "vec_mat"),
        ((2, 3), (3, 4), "mm"), ((2, 2, 3), (3, 4), "fold"), ((2, 2, 3), (3,), "fold_vec"),
        ((3,), (2, 3, 2), "vec_batch"), ((2, 3), (2, 3, 2), "mat_batch"),
        ((2, 2, 3), (2, 3, 2), "bmm"), ((2, 2, 3), (1, 3, 2), "batch1"),
        ((2, 1, 2, 3), (2, 3, 2), "broadcast"), ((0, 2, 3), (3, 2), "empty"),
    ]
    out = [Sample("matmul", (arr(*a), arr(*b)), name=n) for a, b, n in shapes]
    # the folded path is taken only when the smaller operand requires grad
    out += [Sample("matmul", (arr(2, 2, 3), arr(3, 2)), requires_grad=(True, False),
                   name="no_fold"),
            Sample("matmul", (arr(2, 3), arr(2, 3, 2)), requires_grad=(False, True),
                   name="mat_batch_nograd"),
            Sample("matmul", (arr(2, 3, 2, noncontig=True), arr(2, 3)), requires_grad=(True, False),
                   name="noncontig"),
            Sample("matmul", (arr(3, 2, noncontig=True), arr(2, 4, noncontig=True)),
                   name="noncontig_mm"),
            Sample("operator.matmul", (arr(2, 3), arr(3, 2)), name="operator"),
            Sample(rmatmul, (arr(3, 2), arr(2, 3)))]
    return out


SAMPLES = _matmul_samples() + [
    Sample("mm", (arr(2, 0), arr(0, 3)), name="empty"),
    Sample("bmm", (arr(2, 2, 3), arr(2, 3, 2))),
    Sample("bmm", (arr(2, 2, 3, noncontig=True), arr(2, 3, 2)), name="noncontig"),
    Sample("mv", (arr(2, 3), arr(3))),
    Sample("mv", (arr(3, 2, noncontig=True), arr(2)), name="noncontig"),
    Sample("dot", (arr(4), arr(4))),
    Sample("dot", (arr(0), arr(0)), name="empty"),
    Sample("vdot", (arr(4), arr(4))),
    Sample("outer", (arr(3), arr(2))),
    Sample("Tensor.ger", (arr(3), arr(2))),
    Sample("addmm", (arr(2, 4), arr(2, 3), arr(3, 4))),
    Sample("addmm", (arr(4), arr(2, 3), arr(3, 4)), name="broadcast"),
    Sample("addmm", (arr(2, 1), arr(2, 3), arr(3, 4)), {"beta": 0.5, "alpha": 2.0},
           name="beta_alpha"),
    Sample("addmm", (arr(4), arr(2, 3), arr(3, 4)), {"beta": 0.0}, name="beta0"),
    Sample("addmv", (arr(2), arr(2, 3), arr(3))),
    Sample("addmv", (arr(1), arr(2, 3), arr(3)), {"beta": 2.0, "alpha": 0.5},
           name="beta_alpha"),
    Sample("addmv", (arr(), arr(2, 3, noncontig=True), arr(3)), name="scalar_self"),
    Sample("baddbmm", (arr(2, 2, 3), arr(2, 2, 2), arr(2, 2, 3))),
    Sample("baddbmm", (arr(3), arr(2, 2, 2), arr(2, 2, 3)), {"beta": 0.5, "alpha": 2.0},
           name="broadcast"),
    Sample("addbmm", (arr(2, 3), arr(2, 2, 2), arr(2, 2, 3))),
    Sample("addbmm", (arr(3), arr(2, 2, 2), arr(2, 2, 3)), {"beta": 0.5, "alpha": 2.0},
           name="broadcast"),
    Sample(addmm_inplace, (arr(2, 4), arr(2, 3), arr(3, 4))),
    Sample(addmv_inplace, (arr(2), arr(2, 3), arr(3))),
    Sample(baddbmm_inplace, (arr(2, 2, 3), arr(2, 2, 2), arr(2, 2, 3))),
    Sample(addbmm_inplace, (arr(2, 3), arr(2, 2, 2), arr(2, 2, 3))),
    Sample("nn.functional.linear", (arr(2, 3), arr(4, 3), arr(4)), name="addmm"),
    Sample("nn.functional.linear", (arr(2, 3), arr(4, 3)), name="no_bias"),
    Sample("nn.functional.linear", (arr(2, 2, 3), arr(4, 3), arr(4)), name="3d"),
    Sample("nn.functional.linear", (arr(2, 2, 3), arr(4, 3)), name="3d_no_bias"),
    Sample("nn.functional.linear", (arr(3), arr(4, 3), arr(4)), name="1d"),
    Sample("nn.functional.linear", (arr(2, 3, 2, noncontig=True), arr(4, 2), arr(4)),
           name="noncontig"),
    Sample("nn.functional.linear", (arr(2, 2, 3), arr(4, 3), arr(2, 4)), name="bias_2d"),
    Sample("nn.functional.bilinear", (arr(2, 3), arr(2, 2), arr(4, 3, 2), arr(4))),
    Sample("nn.functional.bilinear", (arr(2, 2, 3), arr(2, 2, 2), arr(4, 3, 2)),
           name="3d_no_bias"),
    Sample("tensordot", (arr(2, 3, 2), arr(3, 2, 2))),
    Sample("tensordot", (arr(2, 3), arr(3, 2)), {"dims": 1}, name="int"),
    Sample("tensordot", (arr(2, 3, 2), arr(2, 3, 2)), {"dims": ([1, 0], [1, 0])}, name="lists"),
    Sample("tensordot", (arr(2, 1), arr(3, 2)), {"dims": ([1], [0])}, name="broadcast"),
    Sample("einsum", ("ij,jk->ik", arr(2, 3), arr(3, 4)), name="mm"),
    Sample("einsum", ("ij,jk", arr(2, 3), arr(3, 4)), name="implicit"),
    Sample("einsum", ("bij,bjk->kib", arr(2, 2, 3), arr(2, 3, 2)), name="permuted_out"),
    Sample("einsum", ("bhqd,bhkd->bhqk", arr(1, 2, 2, 3), arr(1, 2, 3, 3)), name="attention"),
    Sample("einsum", ("i,j->ij", arr(3), arr(2)), name="outer"),
    Sample("einsum", ("ij,ij->ji", arr(2, 3), arr(2, 3)), name="mul"),
    Sample("einsum", ("ij->ji", arr(2, 3)), name="permute"),
    Sample("einsum", ("ijk->kj", arr(2, 3, 2)), name="sum"),
    Sample("einsum", ("...ij,...jk->...ik", arr(2, 2, 3), arr(3, 2)), name="ellipsis"),
    Sample("einsum", ("...i,...i->...", arr(2, 1, 3), arr(1, 2, 3)), name="ellipsis_bcast"),
    Sample("einsum", ("ij,jk,kl->il", arr(2, 3), arr(3, 2), arr(2, 2)), name="three"),
    Sample("einsum", ("ab,bc->", arr(2, 3), arr(3, 2)), name="full"),
    Sample("einsum", ("ij,j->i", arr(2, 3), arr(1)), name="size1"),
    Sample("einsum", ("ij,kl->j", arr(2, 3), arr(2, 2)), name="unused"),
    Sample("einsum", ("iij,jk->ik", arr(3, 3, 2), arr(2, 2)), name="diagonal"),
    Sample("einsum", ("ii->i", arr(3, 3)), name="diag_single"),
    Sample("einsum", ("iij->j", arr(2, 2, 3)), name="trace_single"),
    Sample("einsum", ("ij,jj->ij", arr(2, 3), arr(3, 3)), name="diag_in_pair"),
    Sample(einsum_list, (arr(2, 3), arr(3, 2))),
    Sample(einsum_sublist, (arr(2, 3), arr(3, 2))),
    # QR: tall, square, wide and batched matrices; 'complete' where it is differentiable
    Sample("linalg.qr", (arr(4, 3, seed=21),), name="tall"),
    Sample("linalg.qr", (arr(3, 3, seed=22),), name="square"),
    Sample("linalg.qr", (arr(3, 5, seed=23),), name="wide"),
    Sample("linalg.qr", (arr(2, 4, 3, seed=24),), name="batched"),
    Sample("linalg.qr", (arr(2, 3, 4, seed=25), "complete"), name="complete_wide"),
    Sample("linalg.qr", (arr(3, 3, seed=26),), {"mode": "complete"}, name="complete_square"),
]
