"""NumPy kernels of the CTC loss: the forward (alpha) and backward (beta) recursions in log space.

Each target is extended with blanks (blank, l1, blank, l2, ..., blank: 2 S + 1 states). Both
recursions step through time and are vectorized over the batch and the states; a batch entry's
own input and target lengths mask what it does not use. The arithmetic follows torch's CPU
kernel (a log-sum-exp shifted by the maximum, a maximum of -inf taken as 0), so the values and
the inf / nan cases agree with it.
"""

from __future__ import annotations

import numpy as np


def check_inputs(log_probs: np.ndarray, targets: np.ndarray, input_lengths: list,
                 target_lengths: list, blank: int) -> tuple:
    """torch's checks of ctc_loss_allocate_outputs; returns (target offsets, target stride
    dim, max target length)."""
    where = " (while checking arguments for ctc_loss_allocate_outputs)"
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional "
                           f"tensor for argument #1 'log_probs'{where}")
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional "
                           f"tensor for argument #2 'targets'{where}")
    _, batch, labels = log_probs.shape
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for tl in target_lengths:
        if tl < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                               f"{tl}{where}")
    max_target = max(target_lengths, default=0)
    if targets.ndim == 1:
        offsets = np.concatenate([[0], np.cumsum(target_lengths, dtype=np.int64)[:-1]]) \
            if batch else np.zeros(0, np.int64)
        total = int(sum(target_lengths))
        if targets.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {targets.shape[0]} for argument #2 'targets'{where}")
    else:
        offsets = np.zeros(batch, np.int64)
        if targets.shape[0] != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got "
                               f"size {targets.shape[0]} for argument #2 'targets'{where}")
        if targets.shape[1] < max_target:
            raise RuntimeError(f"Expected tensor to have size at least {max_target} at "
                               f"dimension 1, but got size {targets.shape[1]} for argument #2 "
                               f"'targets'{where}")
    max_input = log_probs.shape[0]
    for il in input_lengths:
        if il < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                               f"{il}{where}")
        if il > max_input:
            raise RuntimeError(f"Expected input_lengths to have value at most {max_input}, but "
                               f"got value {il}{where}")
    return offsets, max_target


def _extended_labels(targets: np.ndarray, offsets: np.ndarray, target_lengths: np.ndarray,
                     max_target: int, blank: int) -> np.ndarray:
    """(N, 2 S + 1) labels of the states: blanks at even positions, the targets at odd ones
    (blank past a target's length, where the states are masked anyway)."""
    batch = len(target_lengths)
    ext = np.full((batch, 2 * max_target + 1), blank, dtype=np.int64)
    k = np.arange(max_target)
    valid = k[None, :] < target_lengths[:, None]
    if targets.ndim == 1:
        pos = np.where(valid, offsets[:, None] + k[None, :], 0)
        labels = targets[pos] if targets.size else np.zeros(pos.shape, np.int64)
    else:
        labels = targets[:, :max_target]
    ext[:, 1::2] = np.where(valid, labels, blank)
    return ext


def _logaddexp3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    m = np.maximum(np.maximum(a, b), c)
    m = np.where(m == -np.inf, 0, m).astype(a.dtype)
    with np.errstate(over="ignore", divide="ignore"):
        return np.log(np.exp(a - m) + np.exp(b - m) + np.exp(c - m)) + m


def _shift(a: np.ndarray, k: int) -> np.ndarray:
    """a moved k states to the right (k < 0: to the left) along the last axis, -inf coming in."""
    out = np.full_like(a, -np.inf)
    n = a.shape[-1]
    if abs(k) < n:
        if k >= 0:
            out[..., k:] = a[..., :n - k]
        else:
            out[..., :n + k] = a[..., -k:]
    return out


class _Setup:
    """What both recursions need: state labels, the per-state log-probabilities, masks."""

    def __init__(self, log_probs: np.ndarray, targets: np.ndarray, input_lengths: list,
                 target_lengths: list, blank: int) -> None:
        offsets, max_target = check_inputs(log_probs, targets, input_lengths, target_lengths,
                                           blank)
        self.il = np.asarray(input_lengths, dtype=np.int64).reshape(-1)
        self.tl = np.asarray(target_lengths, dtype=np.int64).reshape(-1)
        self.ext = _extended_labels(targets.astype(np.int64, copy=False), offsets, self.tl,
                                    max_target, blank)
        n_states = self.ext.shape[1]
        s = np.arange(n_states)
        self.used = s[None, :] <= 2 * self.tl[:, None]  # states of each entry's own target
        prev2 = np.full_like(self.ext, blank)
        prev2[:, 2:] = self.ext[:, :-2]
        # a skip over a blank, into a label state (odd s >= 3) whose label differs from the
        # previous label
        self.skip = (s[None, :] % 2 == 1) & (s[None, :] >= 3) & (self.ext != prev2)
        # (T, N, states): each state's log-probability at each time
        self.lp_states = np.take_along_axis(log_probs, self.ext[None, :, :], axis=2)
        self.neg_inf = np.array(-np.inf, dtype=log_probs.dtype)


def ctc_forward(log_probs: np.ndarray, targets: np.ndarray, input_lengths: list,
                target_lengths: list, blank: int) -> tuple:
    """(neg_log_likelihood (N,), log_alpha (N, T, 2 S + 1))."""
    st = _Setup(log_probs, targets, input_lengths, target_lengths, blank)
    steps, batch = log_probs.shape[:2]
    n_states = st.ext.shape[1]
    dtype = log_probs.dtype
    alpha = np.full((steps, batch, n_states), -np.inf, dtype=dtype)
    if steps:
        alpha[0, :, 0] = st.lp_states[0, :, 0]
        if n_states > 1:
            alpha[0, :, 1] = np.where(st.tl > 0, st.lp_states[0, :, 1], -np.inf)
    for t in range(1, steps):
        a = alpha[t - 1]
        a2 = np.where(st.skip, _shift(a, 2), st.neg_inf)
        alpha[t] = np.where(st.used, _logaddexp3(a, _shift(a, 1), a2) + st.lp_states[t], st.neg_inf)
    nll = np.empty(batch, dtype=dtype)
    for b in range(batch):
        il, tl = int(st.il[b]), int(st.tl[b])
        if il == 0:
            nll[b] = -(dtype.type(0) if tl == 0 else dtype.type(-np.inf))
            continue
        last = alpha[il - 1, b]
        l1 = last[2 * tl]
        l2 = last[2 * tl - 1] if tl > 0 else dtype.type(-np.inf)
        m = max(l1, l2)
        m = dtype.type(0) if m == -np.inf else m
        with np.errstate(divide="ignore"):
            nll[b] = -(np.log(np.exp(l1 - m) + np.exp(l2 - m)) + m)
    log_alpha = np.ascontiguousarray(alpha.transpose(1, 0, 2))
    # rows past an entry's input length are never computed (torch leaves them unset)
    log_alpha[np.arange(steps)[None, :] >= st.il[:, None]] = 0
    return nll, log_alpha


def ctc_backward(grad: np.ndarray, log_probs: np.ndarray, targets: np.ndarray,
                 input_lengths: list, target_lengths: list, nll: np.ndarray,
                 log_alpha: np.ndarray, blank: int, zero_infinity: bool) -> np.ndarray:
    """d loss / d log_probs: exp(lp) - exp(log sum over the states of a class of
    alpha beta + nll - lp), times the incoming gradient of each entry; 0 past an entry's input
    length (and for an infinite loss under zero_infinity)."""
    st = _Setup(log_probs, targets, input_lengths, target_lengths, blank)
    steps, batch, labels = log_probs.shape
    n_states = st.ext.shape[1]
    dtype = log_probs.dtype
    tt = np.arange(steps)
    beta = np.full((steps, batch, n_states), -np.inf, dtype=dtype)
    s = np.arange(n_states)
    # the two final states of each entry at its last time step
    final = st.used & (s[None, :] >= 2 * st.tl[:, None] - 1)
    nxt = np.full((batch, n_states), -np.inf, dtype=dtype)
    # the skip from s to s + 2 is the skip into s + 2
    skip_next = _shift(st.skip.astype(dtype), -2) == 1
    for t in range(steps - 1, -1, -1):
        b2 = np.where(skip_next, _shift(nxt, -2), st.neg_inf)
        step = np.where(st.used, _logaddexp3(nxt, _shift(nxt, -1), b2) + st.lp_states[t],
                        st.neg_inf)
        start = np.where(final, st.lp_states[t], st.neg_inf)
        last = st.il - 1
        cur = np.where(np.equal(last, t)[:, None], start,
                       np.where(np.greater(last, t)[:, None], step, st.neg_inf))
        beta[t] = cur
        nxt = cur
    alpha = log_alpha.transpose(1, 0, 2)  # (T, N, states)
    active = (tt[:, None] < st.il[None, :])[:, :, None]
    ab = np.where(active & st.used[None], alpha + beta, st.neg_inf)
    # torch sets, not adds, the last step's two terms (a blank and a label, different unless
    # the last label is the blank itself): then only the label state counts
    last_is_blank = [b for b in range(batch) if st.il[b] > 0 and st.tl[b] > 0
                     and st.ext[b, 2 * st.tl[b] - 1] == blank]
    for b in last_is_blank:
        ab[st.il[b] - 1, b, 2 * st.tl[b]] = -np.inf
    # log-sum-exp of alpha beta over the states of each class
    m = ab.max(axis=2, keepdims=True) if n_states else np.zeros((steps, batch, 1), dtype)
    m = np.where(m == -np.inf, 0, m).astype(dtype)
    onehot = (st.ext[:, :, None] == np.arange(labels)[None, None, :]).astype(dtype)
    summed = np.einsum("tbs,bsc->tbc", np.exp(ab - m), onehot)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lcab = np.log(summed) + m
        res = (np.exp(log_probs) - np.exp(lcab + nll[None, :, None] - log_probs))
        res = res * grad.reshape(1, batch, 1)
    res = np.where(active, res, 0).astype(dtype)
    if zero_infinity:
        res = np.where((nll == np.inf)[None, :, None], 0, res).astype(dtype)
    return res
