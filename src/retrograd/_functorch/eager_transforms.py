"""grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd and hessian on retrograd's autograd.

NOTE [Transforms on one tape]
retrograd has one autograd tape, so the reverse-mode transforms do what torch.func does with
levels by choosing what to differentiate: grad makes fresh inputs (a new leaf, or an alias of
an input that an outer computation differentiates) and calls autograd.grad with respect to
exactly those, so d/dy of an inner grad never mixes with d/dx of an outer one. The result
keeps its graph (create_graph) only when something outside can differentiate it: an enclosing
grad/vjp/jvp transform, or inputs that require grad. jvp uses forward-mode AD (dual levels)
when no other transform is differentiating; inside one (jvp of jvp, grad of jvp, jacfwd of
jacrev...) it uses the transpose of a vjp, J v = d/du <J^T u, v> with u a zero cotangent, which
composes with everything reverse mode composes with. Batched values (vmap) flow through all of
them as ordinary tensors (NOTE [Batched tensors]).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import retrograd.autograd.forward_ad as fwAD
from retrograd._functorch import levels
from retrograd._functorch.batched import BatchedTensor, broadcast, is_batched
from retrograd._functorch.vmap import spec_repr
from retrograd._ops import forward_ad
from retrograd._tensor import Tensor
from retrograd.autograd.grad_mode import enable_grad
from retrograd.utils._pytree import LeafSpec, TreeSpec, tree_flatten, tree_map, tree_unflatten


def _autograd() -> Any:
    import retrograd.autograd as autograd

    return autograd


# --- arguments -------------------------------------------------------------------------------


def check_argnums(argnums: Any, n_args: int) -> tuple:
    """argnums as a tuple of non-negative positions (torch's errors)."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        items = (argnums,)
    elif isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        items = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for a in items:
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
        out.append(a % n_args)
    return tuple(out)


def _select(args: tuple, argnums: Any, nums: tuple) -> Any:
    return args[nums[0]] if isinstance(argnums, int) else tuple(args[i] for i in nums)


def _replace(args: tuple, argnums: Any, nums: tuple, new: Any) -> tuple:
    out = list(args)
    if isinstance(argnums, int):
        out[nums[0]] = new
    else:
        for i, v in zip(nums, new):
            out[i] = v
    return tuple(out)


def _check_tensors(flat: list) -> None:
    for t in flat:
        if not isinstance(t, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")


def _fresh(t: Tensor) -> Tensor:
    """A tensor to differentiate with respect to: its own leaf, or (when t is differentiated by
    something outside) an alias whose gradient still flows to t."""
    lv = levels.innermost_vmap()
    if lv is not None and not is_batched(t, lv.level):
        # made inside a vmap, the input is one per example: its gradient is per example too
        if t.requires_grad or (forward_ad.levels and forward_ad.tangent_of(t) is not None):
            t = broadcast(t, lv.level, lv.batch_size)  # differentiable in both modes
            if t.requires_grad:
                return t
        else:
            t = BatchedTensor(t.unsqueeze(0).expand((lv.batch_size,) + tuple(t.shape)),
                              lv.level)
    if t.requires_grad:
        return t.view_as(t)
    tangent = forward_ad.tangent_of(t) if forward_ad.levels else None
    leaf = t.detach().requires_grad_(True)
    if tangent is None:
        return leaf
    # a dual input of an enclosing jvp: the new leaf carries the same tangent
    return fwAD.make_dual(leaf, tangent)


def _outside_needs_graph(flat_inputs: list) -> bool:
    return levels.inside_autodiff() or any(t.requires_grad for t in flat_inputs)


def _zeros_like(t: Tensor) -> Tensor:
    """Zeros shaped like t, batched at t's vmap levels when t is batched (the creation op
    itself sees only the per-example geometry and would give one unbatched zero)."""
    from retrograd._ops.creation import zeros_like

    if type(t) is BatchedTensor:
        return BatchedTensor(_zeros_like(t._value), t._level)
    return zeros_like(t)


def _grads(outputs: list, inputs: list, grad_outputs: list | None, create_graph: bool,
           retain_graph: bool | None = None) -> list:
    """autograd.grad with zeros for inputs the outputs do not reach."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs or [None] * len(outputs))
             if o.requires_grad]
    if not pairs:
        return [_zeros_like(t) for t in inputs]
    res = _autograd().grad([o for o, _ in pairs], inputs,
                           None if grad_outputs is None else [g for _, g in pairs],
                           retain_graph=retain_graph, create_graph=create_graph,
                           allow_unused=True)
    return [_zeros_like(t) if g is None else g for g, t in zip(res, inputs)]


def _detach_tree(tree: Any) -> Any:
    return tree_map(lambda t: t.detach() if isinstance(t, Tensor) else t, tree)


# --- the preamble grad and vjp share ----------------------------------------------------------


def _trace(func: Callable, diff: Any, call: Callable, has_aux: bool, aux_error: str) -> tuple:
    """Run func once for reverse-mode differentiation of the tensors in the tree `diff`: check
    them, replace them by fresh tensors (NOTE [Transforms on one tape]) and call
    `call(fresh_tree)` under enable_grad with a transform level pushed, so transforms nested in
    func keep their graphs. Returns (fresh, spec, out, aux, keep_graph); keep_graph says
    whether something outside differentiates the results."""
    flat, spec = tree_flatten(diff)
    _check_tensors(flat)
    keep_graph = _outside_needs_graph(flat)
    aux = None
    levels.push("grad")
    try:
        with enable_grad():
            fresh = [_fresh(t) for t in flat]
            out = call(tree_unflatten(fresh, spec))
    finally:
        levels.pop()
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(aux_error)
        out, aux = out
    return fresh, spec, out, aux, keep_graph


# --- grad ------------------------------------------------------------------------------------


def grad_and_value(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad_and_value: (gradient of func w.r.t. args[argnums], func's value)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = check_argnums(argnums, len(args))
        fresh, spec, out, aux, keep_graph = _trace(
            func, _select(args, argnums, nums),
            lambda new: func(*_replace(args, argnums, nums, new), **kwargs), has_aux,
            "grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
            "if has_aux is True")
        if not isinstance(out, Tensor):
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                               f"Tensor, got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                               f"scalar Tensor, got tensor with {out.dim()} dims. Maybe "
                               "you wanted to use the vjp or jacrev APIs instead?")
        with enable_grad():
            gs = _grads([out], fresh, None, keep_graph)
        g = tree_unflatten(gs, spec)
        if not keep_graph:
            out = out.detach()
            if has_aux:
                aux = _detach_tree(aux)
        return (g, (out, aux)) if has_aux else (g, out)

    return wrapper


def grad(func: Callable, argnums: Any = 0, has_aux: bool = False) -> Callable:
    """torch.func.grad: the gradient of a scalar function w.r.t. args[argnums]."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


# --- vjp -------------------------------------------------------------------------------------


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """torch.func.vjp: (func(*primals), vjp_fn[, aux]); vjp_fn(cotangents) gives one gradient
    per primal."""
    fresh, spec, out, aux, keep_graph = _trace(
        func, primals, lambda new: func(*new), has_aux,
        "vjp(f, *primals): output of function f should be a tuple: (output, aux) if has_aux "
        "is True")
    flat_out, out_spec = tree_flatten(out)
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError("vjp(f, *primals): expected f(*primals) to return only tensors, "
                               f"got unsupported type {type(o)}")

    def vjp_fn(cotangents: Any, retain_graph: bool = True, create_graph: bool | None = None
               ) -> tuple:
        flat_ct, ct_spec = tree_flatten(cotangents)
        if repr(ct_spec) != repr(out_spec):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function. cotangents: "
                               f"{spec_repr(ct_spec)}, primal output: {spec_repr(out_spec)}")
        if create_graph is None:
            create_graph = keep_graph or levels.inside_autodiff() or any(
                isinstance(c, Tensor) and c.requires_grad for c in flat_ct)
        with enable_grad():
            gs = _grads(flat_out, fresh, flat_ct, create_graph, retain_graph)
        return tree_unflatten(gs, spec)

    value = out if keep_graph else _detach_tree(out)
    if has_aux:
        return value, vjp_fn, (aux if keep_graph else _detach_tree(aux))
    return value, vjp_fn


# --- jvp -------------------------------------------------------------------------------------


def _check_jvp_args(primals: Any, tangents: Any) -> tuple:
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    if not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected tangents to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    if (type(primals) is tuple and type(tangents) is tuple and len(primals) == len(tangents)
            and all(isinstance(t, Tensor) for t in primals + tangents)):
        # the common call, jvp(f, (x, ...), (v, ...)): the flat lists are the tuples themselves
        flat_p, p_spec = list(primals), TreeSpec(tuple, None, [LeafSpec] * len(primals))
        flat_t, t_spec = list(tangents), p_spec
    else:
        flat_p, p_spec = tree_flatten(primals)
        flat_t, t_spec = tree_flatten(tangents)
    if p_spec is not t_spec and repr(p_spec) != repr(t_spec):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the "
                           "same python structure. For example, if primals is a tuple of 3 "
                           "tensors, tangents also must be. Got primals with structure "
                           f"{spec_repr(p_spec)} and tangents with structure "
                           f"{spec_repr(t_spec)}")
    for what, flat in (("primals", flat_p), ("tangents", flat_t)):
        for t in flat:
            if not isinstance(t, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected {what} to only contain "
                                   f"Tensors, got {type(t)}")
    for p, t in zip(flat_p, flat_t):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than "
                               "that of the original Tensor, this is not supported. Tensor is of "
                               f"size {list(p.shape)} while the given forward gradient is of "
                               f"size {list(t.shape)}.")
    return flat_p, p_spec, flat_t


def _split_aux(out: Any, has_aux: bool) -> tuple:
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError("jvp(f, primals, tangents): output of function f should be a "
                               "tuple: (output, aux) if has_aux is True")
        return out
    return out, None


def _check_outputs(flat_out: list) -> None:
    for o in flat_out:
        if not isinstance(o, Tensor):
            raise RuntimeError("jvp(f, primals, tangents): expected f(*primals) to return only "
                               f"tensors, got unsupported type {type(o)}")


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple:
    """torch.func.jvp: (func(*primals), J @ tangents[, aux])."""
    flat_p, spec, flat_t = _check_jvp_args(primals, tangents)
    if forward_ad.levels or _outside_needs_graph(flat_p + flat_t):
        return _jvp_by_double_vjp(func, flat_p, spec, flat_t, has_aux)
    return _jvp_forward_mode(func, flat_p, spec, flat_t, has_aux)


def _jvp_forward_mode(func: Callable, flat_p: list, spec: Any, flat_t: list,
                      has_aux: bool) -> tuple:
    levels.push("jvp")
    try:
        with fwAD.dual_level():
            duals = [fwAD.make_dual(p, t) for p, t in zip(flat_p, flat_t)]
            out, aux = _split_aux(func(*tree_unflatten(duals, spec)), has_aux)
            flat_out, out_spec = tree_flatten(out)
            _check_outputs(flat_out)
            prim, tang = [], []
            for o in flat_out:
                # nothing outside differentiates (else the double-vjp path runs): graphs that
                # nested transforms kept for this jvp's sake end here
                if o.__class__ is Tensor and forward_ad.propagating():
                    # unpack_dual's primal, detached, is o detached: taken once the level
                    # is gone, so the detach carries no tangent to drop
                    t = forward_ad.tangent_of(o)
                    prim.append(o)
                else:
                    p, t = fwAD.unpack_dual(o)
                    prim.append(p.detach())
                tang.append(t)
            if has_aux:
                aux = tree_map(lambda a: fwAD.unpack_dual(a).primal
                               if isinstance(a, Tensor) else a, aux)
    finally:
        levels.pop()
    prim = [p.detach() if p is o else p for p, o in zip(prim, flat_out)]
    tang = [_zeros_like(p) if t is None else t.detach() for p, t in zip(prim, tang)]
    res = (tree_unflatten(prim, out_spec), tree_unflatten(tang, out_spec))
    return res + (aux,) if has_aux else res


def _jvp_by_double_vjp(func: Callable, flat_p: list, spec: Any, flat_t: list,
                       has_aux: bool) -> tuple:
    """J v as d/du <J^T u, v> (NOTE [Transforms on one tape])."""
    keep_graph = _outside_needs_graph(flat_p + flat_t)
    levels.push("jvp")
    try:
        with enable_grad():
            fresh = [_fresh(p) for p in flat_p]
            out, aux = _split_aux(func(*tree_unflatten(fresh, spec)), has_aux)
            flat_out, out_spec = tree_flatten(out)
            _check_outputs(flat_out)
            us = [_zeros_like(o).requires_grad_(True) for o in flat_out]
            vjps = _grads(flat_out, fresh, us, create_graph=True)
            pairs = [(g, t) for g, t in zip(vjps, flat_t) if g.requires_grad]
            if pairs:
                tang = _grads([g for g, _ in pairs], us, [t for _, t in pairs], keep_graph)
            else:
                tang = [_zeros_like(o) for o in flat_out]
    finally:
        levels.pop()
    prim = flat_out if keep_graph else [o.detach() for o in flat_out]
    res = (tree_unflatten(prim, out_spec), tree_unflatten(tang, out_spec))
    if has_aux:
        return res + (aux if keep_graph else _detach_tree(aux),)
    return res


def linearize(func: Callable, *primals: Any) -> tuple:
    """torch.func.linearize: (func(*primals), jvp_fn) with jvp_fn(*tangents) = J @ tangents.

    func runs once, here: its graph and the graph of u -> J^T u (a vector-Jacobian product
    with a zero cotangent u that requires grad, linear in u) stay recorded, and each call of
    jvp_fn differentiates that product back to u with the tangents as its gradient:
    J v = d/du <J^T u, v> (NOTE [Transforms on one tape]). So jvp_fn evaluates only the linear
    part, never func again, as torch's traced-once graph does."""
    flat_p, p_spec = tree_flatten(primals)
    _check_tensors(flat_p)
    levels.push("jvp")
    try:
        with enable_grad():
            fresh = [_fresh(p) for p in flat_p]
            out = func(*tree_unflatten(fresh, p_spec))
            flat_out, out_spec = tree_flatten(out)
            _check_outputs(flat_out)
            us = [_zeros_like(o).requires_grad_(True) for o in flat_out]
            vjps = _grads(flat_out, fresh, us, create_graph=True)
    finally:
        levels.pop()
    linear = [(k, g) for k, g in enumerate(vjps) if g.requires_grad]
    shapes = [p.shape for p in flat_p]
    dtypes = [p.dtype for p in flat_p]

    def jvp_fn(*tangents: Any) -> Any:
        flat_t, t_spec = tree_flatten(tangents)
        if repr(t_spec) != repr(p_spec):
            raise RuntimeError(f"Expected the tangents {spec_repr(t_spec)} to have the same "
                               f"argspec as the primals {spec_repr(p_spec)}")
        for idx, t in enumerate(flat_t):
            if not isinstance(t, Tensor):
                raise RuntimeError(f"Expected the tangents {spec_repr(t_spec)} to have the "
                                   f"same argspec as the primals {spec_repr(p_spec)}")
            for what, got, want in (("shape", t.shape, shapes[idx]),
                                    ("dtype", t.dtype, dtypes[idx])):
                if got != want:
                    raise RuntimeError(f"tangent:{idx} with {what} {got} in flattened pytree "
                                       f"doesn't match the {what} {want} of the corresponding "
                                       "primal.")
        keep = levels.inside_autodiff() or any(t.requires_grad for t in flat_t)
        pairs = [(g, flat_t[k]) for k, g in linear]
        if not pairs:
            tang = [_zeros_like(o) for o in flat_out]
        else:
            with enable_grad():
                tang = _grads([g for g, _ in pairs], us, [t for _, t in pairs], keep,
                              retain_graph=True)
        if not keep:
            tang = [t.detach() for t in tang]
        return tree_unflatten(tang, out_spec)

    value = out if _outside_needs_graph(flat_p) else _detach_tree(out)
    return value, jvp_fn


# --- jacobians -------------------------------------------------------------------------------


def _basis(shapes: list, like: list) -> list:
    """The rows of an identity matrix of size sum(numel), one block per shape, each row shaped
    like its block: blocks[i] has shape (N, *shapes[i])."""
    from retrograd._ops.creation import eye

    sizes = [_numel(s) for s in shapes]
    total = sum(sizes)
    ident = eye(total, dtype=like[0].dtype) if like else eye(total)
    out, start = [], 0
    for s, n, t in zip(shapes, sizes, like):
        block = ident.narrow(1, start, n) if n else ident.narrow(1, 0, 0)
        out.append(block.reshape((total,) + tuple(s)).to(t.dtype))
        start += n
    return out


def _numel(shape: Any) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def jacrev(func: Callable, argnums: Any = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable:
    """torch.func.jacrev: the Jacobian by vmap over vjp with the identity basis."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from retrograd._functorch.vmap import vmap

        nums = check_argnums(argnums, len(args))
        diff = _select(args, argnums, nums)
        diff_tuple = diff if isinstance(argnums, tuple) else (diff,)

        def f(*d: Any) -> Any:
            return func(*_replace(args, argnums, nums, d if isinstance(argnums, tuple)
                                  else d[0]), **kwargs)

        res = vjp(f, *diff_tuple, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(out)
        flat_p, p_spec = tree_flatten(diff_tuple)
        if not flat_out:
            raise RuntimeError("jacrev(f, ...)(*args): f must return at least one Tensor")
        basis = _basis([o.shape for o in flat_out], flat_out)
        total = basis[0].shape[0]
        if total == 0:
            rows = [_zeros_like(p).reshape((0,) + tuple(p.shape)) for p in flat_p]
        else:
            rows = vmap(vjp_fn, chunk_size=chunk_size)(tree_unflatten(basis, out_spec))
            rows = tree_flatten(rows)[0]
        per_out = []
        start = 0
        for o in flat_out:
            n = _numel(o.shape)
            blocks = [r.narrow(0, start, n).reshape(tuple(o.shape) + tuple(p.shape))
                      for r, p in zip(rows, flat_p)]
            start += n
            blocks_tree = tree_unflatten(blocks, p_spec)
            per_out.append(blocks_tree if isinstance(argnums, tuple) else blocks_tree[0])
        jac = tree_unflatten(per_out, out_spec)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def jacfwd(func: Callable, argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """torch.func.jacfwd: the Jacobian by vmap over jvp with the identity basis."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from retrograd._functorch.vmap import vmap

        if forward_ad.levels:
            # inside another jvp forward mode is taken: the same Jacobian by reverse mode
            return jacrev(func, argnums, has_aux=has_aux)(*args, **kwargs)
        nums = check_argnums(argnums, len(args))
        diff = _select(args, argnums, nums)
        diff_tuple = diff if isinstance(argnums, tuple) else (diff,)
        flat_p, p_spec = tree_flatten(diff_tuple)
        _check_tensors(flat_p)

        def f(*d: Any) -> Any:
            return func(*_replace(args, argnums, nums, d if isinstance(argnums, tuple)
                                  else d[0]), **kwargs)

        basis = _basis([p.shape for p in flat_p], flat_p)

        def push(*tangents: Any) -> Any:
            res = jvp(f, diff_tuple, tree_unflatten(list(tangents), p_spec), has_aux=has_aux)
            return res[1] if not has_aux else (res[1], res[2])

        total = basis[0].shape[0]
        out_dims: Any = 0 if not has_aux else (0, None)
        if total:
            pushed: Any = vmap(push, out_dims=out_dims, randomness=randomness)(*basis)
        else:
            # no input element: every block is empty; one call gives the outputs' shapes
            res = f(*diff_tuple)
            out, aux = res if has_aux else (res, None)
            cols = tree_map(lambda o: o.new_zeros((0,) + tuple(o.shape)), out)
            pushed = (cols, aux) if has_aux else cols
        if has_aux:
            pushed, aux = pushed
        flat_cols, out_spec = tree_flatten(pushed)
        per_out = []
        for col in flat_cols:
            out_shape = tuple(col.shape[1:])
            blocks, start = [], 0
            for p in flat_p:
                n = _numel(p.shape)
                block = col.narrow(0, start, n)
                block = block.movedim(0, -1) if block.dim() > 1 else block
                blocks.append(block.reshape(out_shape + tuple(p.shape)))
                start += n
            blocks_tree = tree_unflatten(blocks, p_spec)
            per_out.append(blocks_tree if isinstance(argnums, tuple) else blocks_tree[0])
        jac = tree_unflatten(per_out, out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def hessian(func: Callable, argnums: Any = 0) -> Callable:
    """torch.func.hessian: jacfwd(jacrev(func))."""
    return jacfwd(jacrev(func, argnums), argnums)
