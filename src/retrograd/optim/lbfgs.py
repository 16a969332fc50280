"""L-BFGS: quasi-Newton steps from a limited history of gradient and parameter changes, with
an optional strong-Wolfe line search.

Unlike the elementwise optimizers (NOTE [Optimizer arithmetic]) L-BFGS works on the
flattened parameters with dot products, scalar tests and a line search, so it is written in
retrograd tensor ops (the step runs under no_grad); its state holds the same objects as
torch's: 0-dim tensors for the curvature pairs' scalars, lists of flat tensors for the history.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from retrograd._tensor import Tensor
from retrograd.optim.optimizer import Optimizer, _eval_closure, _to_scalar

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2,
    clamped to `bounds` (default: the interval between x1 and x2); the middle of the bounds
    if the cubic has no minimum."""
    if bounds is None:
        bounds = (x1, x2) if x1 <= x2 else (x2, x1)
    low, high = bounds
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        minimizer = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        minimizer = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(minimizer, low), high)


class _Bracket:
    """The line search's interval: step sizes with their losses, gradients and slopes."""

    def __init__(self, t, f, g, gtd) -> None:
        self.t, self.f, self.g, self.gtd = t, f, g, gtd

    def set(self, i: int, t, f, g, gtd) -> None:
        self.t[i], self.f[i], self.g[i], self.gtd[i] = t, f, g, gtd

    def ends(self) -> tuple[int, int]:
        """(low, high): the index of the end with the lower loss first."""
        return (0, 1) if self.f[0] <= self.f[-1] else (1, 0)


def _strong_wolfe(obj_func: Callable, x: list[Tensor], t, d: Tensor, f: float, g: Tensor,
                  gtd, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25):
    """A line search along d for a step t meeting the strong Wolfe conditions; returns
    (loss, flat gradient, t, evaluations)."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket = None
    # phase 1: grow the step until an interval is known to hold a point meeting the conditions
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()],
                               [gtd_prev, gtd_new])
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = _Bracket([t], [f_new], [g_new], [gtd_new])
            done = True
            break
        if gtd_new >= 0:  # past a minimum along d
            bracket = _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()],
                               [gtd_prev, gtd_new])
            break
        t_next = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                    bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = _Bracket([0, t], [f, f_new], [g, g_new], [None, None])
    # phase 2: shrink the interval (zoom) until a point meets the conditions
    insufficient_progress = False
    low, high = bracket.ends()
    while not done and ls_iter < max_ls:
        ts = bracket.t
        if abs(ts[1] - ts[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(ts[0], bracket.f[0], bracket.gtd[0],
                               ts[1], bracket.f[1], bracket.gtd[1])
        # keep t away from the interval's ends, where the search makes little progress
        top, bottom = max(ts), min(ts)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:
            if insufficient_progress or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket.f[low]:
            bracket.set(high, t, f_new, g_new.clone(), gtd_new)
            low, high = (0, 1) if bracket.f[0] <= bracket.f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (ts[high] - ts[low]) >= 0:
                bracket.set(high, ts[low], bracket.f[low], bracket.g[low], bracket.gtd[low])
            bracket.set(low, t, f_new, g_new.clone(), gtd_new)
    return bracket.f[low], bracket.g[low], bracket.t[low], evals


class LBFGS(Optimizer):
    """torch.optim.LBFGS: one param group; step(closure) runs up to max_iter iterations (and
    max_eval closure calls), each a two-loop recursion over the last history_size curvature
    pairs followed by a fixed step lr (the first one scaled down by the gradient's L1 norm)
    or a strong-Wolfe line search."""

    def __init__(self, params: Any, lr: float | Tensor = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache: int | None = None

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        from retrograd import cat

        return cat([p.new_zeros(p.numel()) if p._grad is None else p._grad.reshape(-1)
                    for p in self._params], 0)

    def _add_grad(self, step_size, update: Tensor) -> None:
        """Moves the parameters by step_size * update (update is flat)."""
        offset = 0
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset:offset + numel].view_as(p), alpha=step_size)
            offset += numel

    def _clone_param(self) -> list[Tensor]:
        return [p.clone() for p in self._params]

    def _set_param(self, params_data: list[Tensor]) -> None:
        for p, data in zip(self._params, params_data):
            p.copy_(data)

    def _directional_evaluate(self, closure: Callable, x: list[Tensor], t, d: Tensor):
        """The loss and flat gradient at x + t * d; the parameters are put back to x."""
        self._add_grad(t, d)
        loss = float(_eval_closure(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable):  # type: ignore[override]
        """Runs up to max_iter L-BFGS iterations; `closure` (required) clears the gradients,
        computes the loss, calls backward and returns the loss. Returns the first loss."""
        group = self.param_groups[0]
        lr = _to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]  # all of L-BFGS's state lives on the first param
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = _eval_closure(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss  # already at a stationary point

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                d, H_diag = self._direction(state, flat_grad, prev_flat_grad, d, t, old_dirs,
                                            old_stps, ro, H_diag, history_size)
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # the first step ever is shortened so that it moves at most lr in L1 norm
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break  # not a descent direction

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    # the last iteration's loss is not needed: save the closure call
                    loss = float(_eval_closure(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:
                break  # the parameters stopped moving
            if abs(loss - prev_loss) < tolerance_change:
                break  # the loss stopped changing

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    @staticmethod
    def _direction(state: dict[str, Any], flat_grad: Tensor, prev_flat_grad: Tensor,
                   d: Tensor, t, old_dirs: list, old_stps: list, ro: list, H_diag,
                   history_size: int):
        """Records the last step's curvature pair (if it has positive curvature) and returns
        the new search direction -H grad by the two-loop recursion, with H_diag."""
        y = flat_grad.sub(prev_flat_grad)
        s = d.mul(t)
        ys = y.dot(s)
        if ys > 1e-10:
            if len(old_dirs) == history_size:
                old_dirs.pop(0)
                old_stps.pop(0)
                ro.pop(0)
            old_dirs.append(y)
            old_stps.append(s)
            ro.append(1.0 / ys)
            H_diag = ys / y.dot(y)
        if "al" not in state:
            state["al"] = [None] * history_size
        al = state["al"]
        q = flat_grad.neg()
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-al[i])
        r = q.mul(H_diag)
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=al[i] - be_i)
        return r, H_diag
