"""Running an in-place op: checks, the write, the version bump, and rebasing history.

NOTE [Rebasing history]
`x.mul_(y)` behaves for autograd as if x were replaced by a new tensor `x * y`: the op's node is
built with x's old gradient edge as its input, then becomes x's grad_fn. Formulas that need the
old value of x get a snapshot taken before the write (PyTorch saves `self.clone()` likewise).
If x is a view whose base needs grad, the base's history is rebased instead, through CopySlices
(retrograd._autograd.copy_slices), and the view's grad_fn is regenerated from the base's.
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from retrograd._autograd.frames import user_frame
from retrograd._autograd.state import state
from retrograd._ops import forward_ad
from retrograd._ops.kernels.shape import internal_overlap
from retrograd._tensor import Tensor, _wrap

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
INFERENCE_INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed.You " \
    "can make a clone to get a normal tensor before doing inplace update.See " \
    "https://github.com/pytorch/rfcs/pull/17 for more details."


INTERNAL_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.")


READ_ONLY_MEMORY = (
    "retrograd: this tensor's memory is read-only (it was made from an immutable buffer, such "
    "as bytes, or a read-only memory map), so it cannot be written in place; clone() it first")


def _allow_write(dst: np.ndarray) -> None:
    """An expanded array is marked read-only to guard its shared elements; a view of it where no
    two elements alias (`expanded[0]`) may be written, as in torch. So may a view of an array
    the user marked read-only (torch.from_numpy warns about those, then writes them): NumPy
    lets a view turn writeable only after its bases, so they are turned first."""
    if internal_overlap(dst):
        raise RuntimeError(INTERNAL_OVERLAP)
    try:
        dst.flags.writeable = True
        return
    except ValueError:
        pass
    chain = [dst]
    while isinstance(chain[-1].base, np.ndarray):
        chain.append(chain[-1].base)
    try:
        for arr in reversed(chain):
            if not arr.flags.writeable and not internal_overlap(arr):
                arr.flags.writeable = True
        dst.flags.writeable = True
    except ValueError:  # memory NumPy holds read-only (bytes, a read-only map)
        raise RuntimeError(READ_ONLY_MEMORY) from None


def check_inplace(t: Tensor, any_grad: bool) -> None:
    if t._version_counter is None and not state.inference:
        raise RuntimeError(INFERENCE_INPLACE)
    if not state.grad_enabled:
        return
    if t._requires_grad and t._grad_fn is None and t._view is None:
        raise RuntimeError(LEAF_INPLACE)
    view = t._view
    # a view made under no_grad of a tensor that requires grad does not require grad itself,
    # but writing it with grad mode on is still refused
    if view is not None and (t._requires_grad or any_grad or view.base._requires_grad):
        from retrograd._autograd.copy_slices import check_view_inplace

        check_view_inplace(t)


def bump_version(t: Tensor, op_name: str, depth: int = 3) -> None:
    """Count an in-place write of t, remembering the op and the user's line that made it
    (`depth`: how many frames up the caller's caller is; retrograd's own frames are skipped)."""
    vc = t._version_counter
    if vc is None:
        return
    vc.version += 1
    vc.last_op = op_name
    frame = user_frame(sys._getframe(depth))
    # formatted only if a version check fails (see SavedVariable._version_message)
    vc.last_site = (frame.f_code.co_filename, frame.f_lineno) if frame else None


def run_inplace(op, args: tuple, call: list, any_grad: bool):
    if op.written_lists:
        return run_list_inplace(op, args, call, any_grad)
    idx = op.inplace_idx[0]
    self_t = args[idx]
    check_inplace(self_t, any_grad)
    build = any_grad and state.grad_enabled and op.node_cls is not None
    if build:
        # the old value and old history of self, for formulas that read `self`
        snap = _wrap(np.array(call[idx], copy=True)) if reads_self(op) else None
        if snap is not None:
            as_old_self(snap, self_t)
    before = self_t._version_counter.version if self_t._version_counter is not None else 0
    dst = call[idx]
    if not dst.flags.writeable:
        _allow_write(dst)
    # a saved-tensor pack hook may raise while the node is built, after the write: keep what
    # is needed to undo it (only when such hooks are active)
    undo = _undo_record(self_t, dst, before) if build and state.saved_hooks else None
    op.forward(*call)
    bump_version(self_t, op.schema.name)
    if build:
        from retrograd._autograd.copy_slices import rebase_history

        saved_args = args if snap is None else args[:idx] + (snap,) + args[idx + 1:]
        if undo is None:
            rebase_history(op, self_t, saved_args, idx)
        else:
            try:
                rebase_history(op, self_t, saved_args, idx)
            except BaseException:
                _undo(self_t, dst, undo)
                raise
        record_pre_write_versions(self_t, before)
    return self_t


def run_list_inplace(op, args: tuple, call: list, any_grad: bool) -> None:
    """An op that writes lists of tensors and returns nothing (torch's `_foreach_add_`,
    `_fused_adam_`, ...; NOTE [Optimizer dispatch]): every written tensor is checked as an
    in-place op checks it, the kernel runs on the arrays, every version is bumped. They have
    no derivative here, so they refuse to run where one would be recorded."""
    written = [t for i in op.written_lists for t in args[i]]
    for t in written:
        check_inplace(t, any_grad)
    if any_grad and state.grad_enabled:
        raise RuntimeError(f"retrograd: {op.schema.name} has no derivative; call it under "
                           "torch.no_grad() (optimizers do)")
    for i in op.written_lists:
        for dst in call[i]:
            if not dst.flags.writeable:
                _allow_write(dst)
    op.forward(*call)
    name = op.schema.name
    for t in written:
        vc = t._version_counter
        if vc is not None:
            vc.version += 1
            vc.last_op = name
            vc.last_site = None
    return None


def _undo_record(t: Tensor, dst: np.ndarray, version: int) -> tuple:
    return (np.array(dst, copy=True), version, t._grad_fn, t._output_nr, t._requires_grad)


def _undo(t: Tensor, dst: np.ndarray, record: tuple) -> None:
    """Put t back as it was before a write whose history could not be recorded."""
    data, version, t._grad_fn, t._output_nr, t._requires_grad = record
    np.copyto(dst, data)
    if t._version_counter is not None:
        t._version_counter.version = version


def record_pre_write_versions(self_t: Tensor, before: int) -> None:
    """Other arguments that share self's memory (`y.mul_(y)`, `v.add_(base)`) were read before
    the write: saved at the version they had then, so backward reports the overwrite as torch
    does instead of using the new values."""
    from retrograd._autograd.saved import SavedVariable

    fn = self_t._grad_fn
    node = getattr(fn, "fn", None) or fn  # CopySlices wraps the op's node
    saved = getattr(node, "_saved", None)
    if not saved:
        return
    vc = self_t._version_counter
    for sv in saved:
        if sv.__class__ is SavedVariable and sv._original and sv._data is not None \
                and sv._data._version_counter is vc:
            sv._version = before


def as_old_self(snap: Tensor, self_t: Tensor) -> None:
    """Make `snap`, a copy of self's values before the write, self's old value as the node
    reads it: self's history, and (so that forward over reverse, jvp of grad or hessian,
    differentiates the formula at the old value) a copy of self's old tangent, since forward
    AD then writes the new one into self's."""
    snap._grad_fn = self_t.grad_fn
    snap._output_nr = self_t._output_nr
    snap._requires_grad = self_t._requires_grad
    snap._grad_acc = self_t._grad_acc
    t = forward_ad.tangent_of(self_t) if forward_ad.levels else None
    if t is None:
        return
    from retrograd._ops.subclass import _Unhidden
    from retrograd._tensor import _is_wrapper

    # a batched tangent (jacfwd, hessian) is copied by its class, whose dispatcher is hidden
    # while it runs this write
    with forward_ad.suspended(), (_Unhidden() if _is_wrapper(t) else contextlib.nullcontext()):
        copy = t.clone()
    forward_ad.set_tangent(snap, copy)


def reads_self(op) -> bool:
    name = op.arg_names[op.inplace_idx[0]]
    return any(name in f.params for f in op.formulas)
