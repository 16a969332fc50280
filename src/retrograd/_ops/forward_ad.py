"""Forward-mode AD: dual levels, tangents, and how each op pushes tangents forward.

NOTE [Forward-mode derivatives]
Every op is declared once (NOTE [Formulas]); its forward derivative (JVP) is derived from that
declaration, and OpDef.jvp_rule records, at declaration, which derivation applies:
  "explicit"     the declaration gave jvp=: a function of the op's arguments, `result`/`result<i>`
                 and `<tensor arg>_t` (the tangents, None where an input has none).
                 Only lerp.Tensor has one: torch adds its three terms otherwise.
  "linear"       the op is linear in its floating-point tensor arguments taken together (views,
                 reshapes, sums, cat/stack, indexing, add/sub, lerp with a number as weight,
                 ...): the tangent is the op itself applied to the tangents (zeros where an
                 input has none; add and sub leave such an input's term out, as torch's zero
                 tensors do, so a tangent's signed zeros and an integer operand never
                 reach the result: ABSENT_TERM). Sound because a linear
                 map is its own derivative; a view op applied to the base's tangent also gives the
                 view's tangent as that same view of the base's tangent, as torch keeps it.
  "bilinear"     linear in each floating-point tensor argument separately (mul, matmul, mm, bmm,
                 ...): the tangent is the sum over inputs of the op with one argument replaced by
                 its tangent (the product rule).
  "elementwise"  each output element depends only on the same element of each input
                 (broadcasting aside), so each input's Jacobian is diagonal and equals its own
                 transpose: the backward formula, which is linear in `grad`, applied to the
                 input's tangent in place of `grad` is that input's contribution.
  "transpose"    any other op with backward formulas. A formula computes u -> J^T u and is
                 linear in u, and formulas are written in retrograd ops (they differentiate
                 again), so J v = d/du <J^T u, v>: one formula call on a zero `u` that requires
                 grad, then one autograd.grad back to `u`. Exact, only slower.
  "none"         no formulas: outputs that are not differentiable (comparisons, integer ops)
                 get no tangent; a float output raises torch's NotImplementedError ("Trying to
                 use forward AD with aten::bernoulli that does not support it.").
  "unimplemented" ops torch has backward formulas for but no forward derivative (NO_FORWARD):
                 any tangent reaching them raises torch's NotImplementedError ("... because it
                 has not been implemented yet."), though a rule could be derived; the dual
                 fast path takes no such op.
In-place ops compute their tangent from their out-of-place twin's rule (or their own formulas)
with the value `self` had before the write, then write it into self's tangent in place, so views
of self see it; an in-place op on a view without a tangent gives its base a zero tangent first
and the view the same view of it. The generated op tests check every op's JVP against finite
differences and against its VJP (<u, J v> = <J^T u, v>).

While a level is active a dispatch mode (NOTE [Fast path]: every entry point already tests the
mode stack) carries the tangents; with no level there is nothing on any op's path. When that
mode is the only one, dispatch first offers the op to the dual fast path (NOTE [Dual fast
path]), which applies the linear, bilinear and elementwise rules above to NumPy arrays and
leaves everything else to this mode.
"""

from __future__ import annotations

import math
import weakref

from retrograd import _tensor_str
from retrograd._ops import dispatch
from retrograd._tensor import Tensor

# ops linear in their float tensor arguments taken together (besides view ops)
LINEAR = frozenset({
    "add.Tensor", "add.Scalar", "sub.Tensor", "sub.Scalar", "neg", "sum", "sum.dim_IntList",
    "mean", "mean.dim", "cat", "stack", "hstack", "vstack", "dstack", "clone", "contiguous",
    "reshape", "flatten.using_ints", "index_select", "index", "gather", "take", "repeat",
    "tile", "flip", "roll", "rot90", "tril", "triu", "trace", "diag", "diag_embed",
    "_to_copy", "masked_select", "cumsum", "narrow_copy", "select_backward",
    "slice_backward", "expand_copy", "_unsafe_view", "lerp.Scalar",
    "affine_grid_generator",
})
# ops linear in each float tensor argument separately
BILINEAR = frozenset({"mul.Tensor", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "_einsum",
                      "_einsum_mul"})
# element-wise ops whose backward formulas are linear in `grad` and read no neighbours
ELEMENTWISE = frozenset({
    "div.Tensor", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
    "atanh", "sigmoid", "abs", "reciprocal", "erf", "erfc", "erfinv", "pow.Tensor_Scalar",
    "pow.Tensor_Tensor", "pow.Scalar", "relu", "mul.Scalar", "div.Scalar", "square",
    "sign", "floor", "ceil", "round", "trunc", "frac", "atan2", "maximum", "minimum",
    "clamp", "clamp_min", "clamp_max", "addcmul",
    "addcdiv", "logit", "xlogy.Tensor", "hypot", "sinc", "deg2rad", "rad2deg", "silu", "gelu",
    "elu", "leaky_relu", "softplus", "hardtanh", "hardsigmoid", "hardswish", "mish",
    "rsub.Tensor", "rsub.Scalar", "digamma", "lgamma", "log_sigmoid", "logaddexp", "logaddexp2",
    "fmod.Tensor", "fmod.Scalar", "remainder.Tensor", "remainder.Scalar", "copysign.Tensor",
    "polygamma", "mvlgamma",
    "xlogy.Scalar_Self", "xlogy.Scalar_Other", "copysign.Scalar", "nan_to_num", "fmax", "fmin",
    "ldexp.Tensor", "i0", "special_i0e", "special_i1", "special_i1e", "special_erfcx",
    "special_ndtri", "special_log_ndtr", "special_entr", "special_xlog1py",
    "special_xlog1py.self_scalar", "special_xlog1py.other_scalar",
    "hardshrink", "softshrink", "celu", "_prelu_kernel", "rrelu_with_noise",
})


# ops torch refuses tangents for: it derives no forward formula where one input (igamma's
# `input`, zeta's `self`) has no derivative, so a tangent on either input is an error there
NO_FORWARD = frozenset({"igamma", "igammac", "igamma_", "igammac_",
                        "special_zeta", "special_zeta.self_scalar", "special_zeta.other_scalar",
                        "asinh_", "acosh_", "atanh_", "_ctc_loss", "_ctc_loss.Tensor",
                        "_ctc_loss_backward", "segment_reduce",
                        "_segment_reduce_backward"})


# views whose geometry is read from where their inputs sit in memory (slice_inverse lays src's
# geometry over self's storage): a tangent is a separate array, so the op applied to tangents
# would read the wrong geometry; their tangent comes from the formulas (transpose rule)
GEOMETRY_VIEWS = frozenset({"slice_inverse"})


def rule_for(name: str, is_view: bool, has_formulas: bool, jvp) -> str:
    """The derivation an op's tangent uses (NOTE [Forward-mode derivatives])."""
    if name in NO_FORWARD:
        return "unimplemented"
    if jvp is not None:
        return "explicit"
    if name in GEOMETRY_VIEWS:
        return "transpose"
    if is_view or name in LINEAR:
        return "linear"
    if name in BILINEAR:
        return "bilinear"
    if not has_formulas:
        return "none"
    return "elementwise" if name in ELEMENTWISE else "transpose"


# --- levels and tangents ----------------------------------------------------------------------


class _TangentRef(weakref.ref):
    """A weak reference to a tensor with a tangent entry, which knows the entry's key."""

    __slots__ = ("key",)
    key: int


class _Level:
    __slots__ = ("index", "tangents", "forget")

    def __init__(self, index: int) -> None:
        self.index = index
        self.tangents: dict = {}  # id(tensor) -> (_TangentRef to it, tangent or None)
        store = self.tangents

        def forget(ref: _TangentRef, store: dict = store) -> None:  # the tensor died
            store.pop(ref.key, None)

        self.forget = forget


levels: list = []  # the active levels (torch allows one)
_enabled = [True]  # torch's _set_fwd_grad_enabled


def current_level() -> int:
    return levels[-1].index if levels else -1


def enter_level() -> int:
    if levels:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    levels.append(_Level(len(levels)))
    dispatch.mode_stack.append(_MODE)
    return levels[-1].index


def exit_level(level: int) -> None:
    if not levels or level != levels[-1].index:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    levels.pop().tangents.clear()
    if _MODE in dispatch.mode_stack:
        dispatch.mode_stack.remove(_MODE)


def propagating() -> bool:
    """Whether tangents are carried right now (not within a custom Function's forward)."""
    return _enabled[0] and _MODE in dispatch.mode_stack


def level_of(index: int):
    for lv in levels:
        if lv.index == index:
            return lv
    return None


def set_tangent(t: Tensor, tangent, lv=None) -> None:
    lv = lv or levels[-1]
    ref = _TangentRef(t, lv.forget)
    key = ref.key = id(t)
    lv.tangents[key] = (ref, tangent)


def drop_tangents(t: Tensor) -> None:
    """detach_(): t keeps no tangent at any level, as torch's in-place detach drops forward
    gradients too."""
    for lv in levels:
        lv.tangents.pop(id(t), None)


def tangent_of(t, lv=None):
    """t's tangent at the level (the current one by default), or None. A view made before its
    base had a tangent gets the same view of the base's tangent, made when first asked for."""
    if lv is None:
        if not levels:
            return None
        lv = levels[-1]
    if not isinstance(t, Tensor):
        return None
    entry = lv.tangents.get(id(t))
    if entry is not None and entry[0]() is t:
        return entry[1]
    info = t._view
    if info is None or not info.replay:
        return None
    base_t = tangent_of(info.base, lv)
    if base_t is None:
        return None
    view_t = _replay(info.replay, base_t)
    set_tangent(t, view_t, lv)
    return view_t


def _replay(chain, t):
    from retrograd._ops.registry import run

    with suspended():
        for op, rest in chain:
            t = run(op, (t,) + tuple(rest))
    return t


class suspended:
    """Run tangent arithmetic without this mode seeing it (tangents carry no tangents)."""

    def __enter__(self):
        self.had = _MODE in dispatch.mode_stack
        if self.had:
            # off the stack, so ops with no other mode active skip dispatch altogether; its
            # place counted from the top: the wrapper dispatcher may arrive or leave at the
            # bottom meanwhile (a wrapper made or freed)
            pos = dispatch.mode_stack.index(_MODE)
            self.above = len(dispatch.mode_stack) - 1 - pos
            dispatch.mode_stack.pop(pos)

    def __exit__(self, *exc):
        if self.had:
            dispatch.mode_stack.insert(len(dispatch.mode_stack) - self.above, _MODE)


# --- the mode ---------------------------------------------------------------------------------


def _float(t) -> bool:
    return isinstance(t, Tensor) and t._data.dtype.kind in "fcV"


class _ForwardADMode:
    """Carries tangents through every op while a dual level is active."""

    def __torch_dispatch__(self, func, types, args, kwargs):
        from retrograd._ops.registry import run

        op = func._op
        if not _enabled[0] or not levels:
            return run(op, args)
        tans = {}
        for i in op.tensor_idx:
            a = args[i]
            if i in op.list_idx:
                ts = [tangent_of(x) for x in a] if a is not None else []
                if any(x is not None for x in ts):
                    tans[i] = ts
            else:
                t = tangent_of(a)
                if t is not None:
                    tans[i] = t
        if not tans:
            return run(op, args)
        if op.inplace_idx:
            out = _inplace(op, args, tans)
            node = out._grad_fn if isinstance(out, Tensor) else None
            if type(node) is not op.node_cls and isinstance(out, Tensor) and out._view:
                node = getattr(out._view.base._grad_fn, "fn", None)  # CopySlices wraps it
            if type(node) is op.node_cls and getattr(node, "_plan", None) is not None:
                # backward reads self's new value with its new tangent (forward over reverse)
                from retrograd._ops.subclass import _keep_wrappers_saved

                _keep_wrappers_saved(op, (out,), keep=_has_tangent, node=node)
            return out
        out = run(op, args)
        outs = tuple(out) if op.multi else (out,)
        with suspended():
            new = output_tangents(op, args, tans, outs)
        kept = False
        for o, t in zip(outs, new):
            if t is not None and isinstance(o, Tensor):
                set_tangent(o, _like(o, t))
                kept = kept or o._grad_fn is not None
        if kept:  # backward reads saved outputs with their tangents (forward over reverse)
            from retrograd._ops.subclass import _keep_wrappers_saved

            _keep_wrappers_saved(op, outs, keep=_has_tangent)
        return out


def _has_tangent(t) -> bool:
    return isinstance(t, Tensor) and tangent_of(t) is not None


_MODE = _ForwardADMode()
dispatch.forward_ad_mode[0] = _MODE  # it goes before every other mode (NOTE [Forward AD
# above modes])


def _like(o: Tensor, t: Tensor) -> Tensor:
    """A tangent with its primal's shape (a broadcast contribution is expanded and copied) and
    dtype (a contribution from a lower-precision input is promoted, as torch's is)."""
    if t.dtype != o.dtype:
        t = t.to(o.dtype)
    if tuple(t.shape) != tuple(o.shape):
        t = t.expand(o.shape).clone()
    return t


def not_supported(op) -> NotImplementedError:
    return NotImplementedError(
        f"Trying to use forward AD with aten::{op.schema.name} that does not support it.")


def not_implemented_yet(op) -> NotImplementedError:
    return NotImplementedError(f"Trying to use forward AD with {op.schema.name} that does not "
                               "support it because it has not been implemented yet.")


def output_tangents(op, args: tuple, tans: dict, outs: tuple) -> list:
    """The tangent of each output (None for one that gets none), by op.jvp_rule."""
    rule = op.jvp_rule
    diff = [_float(o) and (op.differentiable_outputs is None or op.differentiable_outputs[k])
            for k, o in enumerate(outs)]
    if not any(diff):
        return [None] * len(outs)
    if rule == "none":  # float results and no formula: refuse rather than drop the tangent
        raise not_supported(op)
    if rule == "unimplemented":
        raise not_implemented_yet(op)
    if rule == "explicit":
        res = _explicit(op, args, tans, outs)
    elif rule == "linear":
        res = _linear(op, args, tans)
    elif rule == "bilinear":
        res = _bilinear(op, args, tans)
    elif rule == "elementwise":
        res = _elementwise(op, args, tans, outs)
    else:
        res = _transpose(op, args, tans, outs, diff)
    if not isinstance(res, (tuple, list)):
        res = (res,)
    return [r if d else None for r, d in zip(res, diff)]


def _run(op, args):
    from retrograd._ops.registry import run

    out = run(op, tuple(args))
    return tuple(out) if op.multi else out


def _zeros(t: Tensor) -> Tensor:
    import numpy as np

    from retrograd._tensor import _is_wrapper, _wrap

    if _is_wrapper(t):  # its array is only geometry: the class makes its zeros (batched ones)
        from retrograd._ops.subclass import zeros_like_wrapper

        return zeros_like_wrapper(t)
    if _other_modes():  # a factory op, which a tracer below this mode records
        from retrograd._ops.creation import zeros_like

        with suspended():
            return zeros_like(t)
    return _wrap(np.zeros_like(t._data))


def _other_modes() -> bool:
    """Whether a mode besides this one is active (a tracer records what this mode computes)."""
    return any(m is not _MODE for m in dispatch.mode_stack)


# add and sub: an argument without a tangent is no term at all, as torch's zero tensors are
# (its tangent is a copy of the other's, signed zeros kept). The zero standing in for it is
# signed so that it adds nothing: x + -0.0 and x - 0.0 are x for every x, -0.0 and 0.0 alike.
ABSENT_TERM = {"add.Tensor": (-0.0, -0.0), "sub.Tensor": (-0.0, 0.0)}


def _absent_term(a, fill: float, like: Tensor):
    """What stands in add/sub for `a`, an argument without a tangent, beside `like`, the other
    argument's tangent."""
    import numpy as np

    from retrograd._tensor import _is_wrapper, _wrap

    if not _float(a):  # a number, or an integer or bool tensor: a constant
        if not isinstance(a, Tensor):
            return fill
        return _wrap(np.full(a._data.shape, fill, like._data.dtype))
    if math.copysign(1.0, fill) > 0:
        return _zeros(a)
    if _is_wrapper(a):  # its class makes its zeros (batched ones): negated, they are -0.0
        return _zeros(a).neg()
    return _wrap(np.full_like(a._data, fill))


def _linear(op, args, tans):
    call = list(args)
    absent = ABSENT_TERM.get(op.name)
    for i in op.tensor_idx:
        a = args[i]
        if i in op.list_idx:
            ts = tans.get(i)
            call[i] = [ts[k] if ts and ts[k] is not None else
                       _zeros(x) if isinstance(x, Tensor) else x for k, x in enumerate(a)]
        elif i in tans:
            call[i] = tans[i]
        elif absent is not None:
            call[i] = _absent_term(a, absent[i], next(iter(tans.values())))
        elif _float(a):
            call[i] = _zeros(a)
        elif isinstance(a, (int, float)) and not isinstance(a, bool):
            call[i] = 0  # a constant term of an affine op has no tangent
    return _run(op, call)


def _bilinear(op, args, tans):
    total = None
    for i, t in tans.items():
        if i in op.list_idx:  # one product per list member with a tangent
            for k, tk in enumerate(t):
                if tk is None:
                    continue
                call = list(args)
                call[i] = list(args[i][:k]) + [tk] + list(args[i][k + 1:])
                part = _run(op, call)
                total = part if total is None else total + part
            continue
        call = list(args)
        call[i] = t
        part = _run(op, call)
        total = part if total is None else total + part
    return total


def _values(op, args, outs) -> dict:
    vals = {}
    for i, name in enumerate(op.arg_names):
        a = args[i]
        vals[name] = a
        if isinstance(a, Tensor):
            vals[name + "_shape"] = a._data.shape
            vals[name + "_dtype"] = a.dtype
            vals[name + "_strides"] = a.stride()
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], Tensor):
            vals[name + "_shape"] = tuple(x._data.shape if isinstance(x, Tensor) else ()
                                          for x in a)
    for k, o in enumerate(outs):
        vals[f"result{k}"] = o
        r = op.schema.returns[k].name if k < len(op.schema.returns) else None
        if r:
            vals[r] = o
    vals["result"] = outs[0]
    vals["output_mask"] = tuple(True for _ in op.tensor_idx)
    return vals


def _call(f, vals):
    return f.fn(*[vals.get(p) for p in f.params])


def _elementwise(op, args, tans, outs):
    vals = _values(op, args, outs)
    total = None
    for f in op.formulas:
        for pos, inp in enumerate(f.inputs):
            i = op.tensor_idx[inp]
            if i not in tans:
                continue
            vals["grad"] = tans[i]
            vals["grads"] = (tans[i],)
            part = _call(f, vals)
            if f.joint:
                part = part[pos]
            if part is not None:
                total = part if total is None else total + part
    return total


def _transpose(op, args, tans, outs, diff):

    from retrograd.autograd import grad as autograd_grad
    from retrograd.autograd.grad_mode import enable_grad

    need_graph = any(t.requires_grad for t in _flat(tans.values())) or any(
        isinstance(a, Tensor) and a.requires_grad for a in args)
    vals = _values(op, args, outs)
    # a wrapper tangent (a batch of tangents under vmap) on a plain primal: the cotangent must
    # carry that batch too, or d/du would sum the batch's products
    from retrograd._tensor import _is_wrapper

    batched = next((t for t in _flat(tans.values()) if _is_wrapper(t)), None)
    us = []
    for o, d in zip(outs, diff):
        if d:
            u = _zeros(o)
            if batched is not None and not _is_wrapper(o):
                u = u + _zeros(batched).sum().to(u.dtype)
            u.requires_grad_(True)
            us.append(u)
        else:
            us.append(None)
    vals["grad"] = us[0]
    vals["grads"] = tuple(us)
    with enable_grad():
        total = None
        for f in op.formulas:
            wanted = [(pos, inp) for pos, inp in enumerate(f.inputs)
                      if op.tensor_idx[inp] in tans]
            if not wanted:
                continue
            res = _call(f, vals)
            for pos, inp in wanted:
                i = op.tensor_idx[inp]
                g = res[pos] if f.joint else res
                if g is None:
                    continue
                if i in op.list_idx:
                    for gk, tk in zip(g, tans[i]):
                        if gk is not None and tk is not None:
                            part = (_sum_to(gk, tk) * tk).sum()
                            total = part if total is None else total + part
                    continue
                t = tans[i]
                part = (_sum_to(g, t) * t).sum()
                total = part if total is None else total + part
        live = [u for u in us if u is not None]
        if total is None or not total.requires_grad:
            return [None if u is None else _zeros(u) for u in us]
        got = autograd_grad(total, live, allow_unused=True, create_graph=need_graph)
    it = iter(got)
    res = []
    for u in us:
        if u is None:
            res.append(None)
            continue
        g = next(it)
        res.append(_zeros(u) if g is None else g)
    return res


def _sum_to(g: Tensor, like: Tensor) -> Tensor:
    shape = tuple(like.shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.dim() - len(shape)
    if lead:
        g = g.sum(tuple(range(lead)))
    dims = tuple(d for d, n in enumerate(shape) if n == 1 and g.shape[d] != 1)
    return g.sum(dims, keepdim=True) if dims else g


def _flat(values):
    for v in values:
        if isinstance(v, list):
            yield from (x for x in v if x is not None)
        else:
            yield v


def _explicit(op, args, tans, outs):
    vals = _values(op, args, outs)
    for i in op.tensor_idx:
        vals[op.arg_names[i] + "_t"] = tans.get(i)
    import inspect

    params = inspect.signature(op.jvp).parameters
    return op.jvp(*[vals.get(p) for p in params])


# --- in-place ops ------------------------------------------------------------------------------


def _out_of_place(op):
    from retrograd._ops.registry import OPS

    name, _, overload = op.name.partition(".")
    if not name.endswith("_"):
        return None
    twin = OPS.get(name[:-1] + ("." + overload if overload else ""))
    if twin is None or twin.arg_names != op.arg_names:  # polygamma_(self, n) vs polygamma(n, self)
        return None
    return twin


def _inplace(op, args: tuple, tans: dict):
    import numpy as np

    from retrograd._ops.registry import run
    from retrograd._tensor import _is_wrapper, _wrap

    idx = op.inplace_idx[0]
    self_t = args[idx]
    if _is_wrapper(self_t) or _other_modes():
        # by ops: a batched value's array holds no values (its class copies it), and a tracer
        # below this mode must see where the copy came from
        with suspended():
            snap = self_t.detach().clone()
    else:
        snap = _wrap(np.array(self_t._data, copy=True))
    run(op, args)
    if op.jvp_rule == "unimplemented":  # self is written first, as in torch
        raise not_implemented_yet(op)
    if not _float(self_t):
        return self_t
    call = args[:idx] + (snap,) + args[idx + 1:]
    twin = _out_of_place(op)
    if twin is not None and twin.name in ABSENT_TERM and idx not in tans:
        # add_ and sub_ write into self's tangent, which starts from zeros, as torch's does
        # (0.0 + -0.0 is 0.0)
        tans = {**tans, idx: _zeros(snap)}
    with suspended():
        if (twin or op).jvp_rule == "none":
            new = None  # a non-differentiable write (eq_, ...): self's tangent becomes zero
        elif twin is not None:
            new = output_tangents(twin, call, tans, (self_t,))[0]
        else:
            rule = op.jvp_rule
            if rule in ("linear", "bilinear"):
                rule = "transpose"
            saved, op.jvp_rule = op.jvp_rule, rule
            try:
                new = output_tangents(op, call, tans, (self_t,))[0]
            finally:
                op.jvp_rule = saved
        if new is None:
            new = _zeros(self_t)
        old = tangent_of(self_t)
        if old is not None:
            try:
                old.copy_(new)
                return self_t
            except RuntimeError as e:
                # the new tangent is batched at a vmap level the old one is not (jacfwd under
                # vmap, the primal batched outside): it cannot be written in place, so it
                # replaces the old one, as torch replaces a tangent whose metadata differs
                if not str(e).startswith(_BATCHED_INTO_UNBATCHED):
                    raise
            set_tangent(self_t, _like(self_t, new))
            return self_t
        info = self_t._view
        if info is not None and info.replay and _same_layout(self_t, info.base):
            # a view that is all of its base, element for element: one tangent for both (the
            # base's, no view of it), as torch shares it
            bt = _zeros_batched_like(info.base, new)
            bt.copy_(new)
            set_tangent(info.base, bt)
            set_tangent(self_t, bt)
        elif info is not None and info.replay:
            base = info.base
            bt = _zeros_batched_like(base, new)
            set_tangent(base, bt)
            vt = _replay(info.replay, bt)
            vt.copy_(new)
            set_tangent(self_t, vt)
        else:
            fresh = _zeros_batched_like(self_t, new)
            fresh.copy_(new)
            set_tangent(self_t, fresh)
    return self_t


# how vmap refuses to write a batched value into one not batched at its level (checked before
# anything is written)
_BATCHED_INTO_UNBATCHED = "vmap: inplace arithmetic(self, *extra_args) is not possible"


def _same_layout(view: Tensor, base: Tensor) -> bool:
    a, b = view._data, base._data
    return (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype
            and view.storage_offset() == base.storage_offset())


def _zeros_batched_like(t: Tensor, new: Tensor) -> Tensor:
    """A first tangent for t, about to receive `new`: zeros, batched as `new` is when new is a
    wrapper (a batch of tangents under vmap) and t is not."""
    from retrograd._tensor import _is_wrapper

    zeros = _zeros(t)
    if _is_wrapper(new) and not _is_wrapper(t):
        zeros = zeros + _zeros(new).sum().to(zeros.dtype)
    return zeros


def check_out(op, args: tuple, out: Tensor) -> None:
    """out= variants carry no tangents: torch refuses them when one is involved."""
    if not propagating():
        return
    if tangent_of(out) is not None or any(tangent_of(args[i]) is not None
                                          for i in op.tensor_idx if i not in op.list_idx):
        raise RuntimeError(f"Trying to use forward AD with {op.schema.name}_out that does not "
                           "support it because it is an out= function")


def _printed_tangent(t: Tensor):
    return tangent_of(t) if levels and propagating() else None


_tensor_str.TANGENT_OF = _printed_tangent
