"""functional_call and stack_module_state: a module run with other tensors in place of its
parameters and buffers, and the state of several same-shaped modules stacked for vmap."""

from __future__ import annotations

from typing import Any

from retrograd._tensor import Tensor


def _owner(module: Any, name: str) -> tuple:
    *path, leaf = name.split(".")
    mod = module
    for p in path:
        mod = getattr(mod, p)
    return mod, leaf


def _swap(module: Any, name: str, value: Any) -> Any:
    """Put value where module's `name` is; returns what was there (or a marker)."""
    mod, leaf = _owner(module, name)
    if leaf in mod._parameters:
        old = mod._parameters[leaf]
        mod._parameters[leaf] = value
        return ("param", old)
    if leaf in mod._buffers:
        old = mod._buffers[leaf]
        mod._buffers[leaf] = value
        return ("buffer", old)
    had = hasattr(mod, leaf)
    old = getattr(mod, leaf, None)
    object.__setattr__(mod, leaf, value)
    return ("attr", old) if had else ("missing", None)


def _restore(module: Any, name: str, saved: tuple) -> None:
    mod, leaf = _owner(module, name)
    kind, old = saved
    if kind == "param":
        mod._parameters[leaf] = old
    elif kind == "buffer":
        mod._buffers[leaf] = old
    elif kind == "attr":
        object.__setattr__(mod, leaf, old)
    else:
        object.__delattr__(mod, leaf)


def _merge(dicts: Any) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    if isinstance(dicts, (tuple, list)):
        seen: dict = {}
        repeated = []
        for d in dicts:
            for k, v in d.items():
                if k in seen:
                    repeated.append(k)
                seen[k] = v
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior "
                             "of functional call is ambiguous")
        return seen
    raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                     f"dicts, but got {type(dicts)}")


def _tied_names(module: Any) -> dict:
    """Each name of a parameter or buffer -> all names that share its tensor."""
    groups: dict = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + list(
            module.named_buffers(remove_duplicate=False)):
        groups.setdefault(id(t), []).append(name)
    return {n: names for names in groups.values() for n in names}


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """torch.func.functional_call: module(*args, **kwargs) with the given tensors standing in
    for its parameters and buffers (by their state_dict names) for the call."""
    values = _merge(parameter_and_buffer_dicts)
    if tie_weights:
        tied = _tied_names(module)
        extra: dict = {}
        for name, v in values.items():
            for other in tied.get(name, ()):
                if other == name:
                    continue
                if other in values and values[other] is not v:
                    raise ValueError(f"functional_call got multiple values for keys "
                                     f"{sorted([name, other])}, which are tied. Consider using "
                                     "tie_weights=False")
                extra.setdefault(other, v)
        for k, v in extra.items():
            values.setdefault(k, v)
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)} | {
            n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(expected - set(values))
        unexpected = sorted(set(values) - expected)
        msgs = []
        if unexpected:
            msgs.append("Unexpected key(s): {}.".format(", ".join(f"'{k}'" for k in unexpected)))
        if missing:
            msgs.append("Missing key(s): {}.".format(", ".join(f"'{k}'" for k in missing)))
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                type(module).__name__, "\n\t".join(msgs)))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    kwargs = kwargs or {}
    saved = []
    try:
        for name, v in values.items():
            saved.append((name, _swap(module, name, v)))
        return module(*args, **kwargs)
    finally:
        for name, s in reversed(saved):
            _restore(module, name, s)


def _stacked_leaf(tensors: list, name: str) -> Tensor:
    from retrograd._ops.shape import stack

    rg = [t.requires_grad for t in tensors]
    if any(rg) and not all(rg):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = stack([t.detach() for t in tensors], 0)
    return result.requires_grad_(True) if rg[0] else result


def stack_module_state(models: Any) -> tuple:
    """torch.func.stack_module_state: ({name: stacked parameters}, {name: stacked buffers})."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    kind = type(models[0])
    if not all(type(m) is kind for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {name: _stacked_leaf([dict(m.named_parameters())[name] for m in models], name)
              for name, _ in models[0].named_parameters()}
    buffers = {name: _stacked_leaf([dict(m.named_buffers())[name] for m in models], name)
               for name, _ in models[0].named_buffers()}
    return params, buffers
