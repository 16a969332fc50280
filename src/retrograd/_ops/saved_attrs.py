"""grad_fn._saved_<name> and grad_fn._raw_saved_<name> of op nodes, as torch exposes them.

A node keeps what its formulas read, under the formulas' names; torch's bindings show those
values under torch's names and Python types, and so does this:
  - a tensor is unpacked (_saved_) or shown as its SavedTensor (_raw_saved_); a list of
    optional tensors (index's `indices`) is a tuple of those, None-holding ones included;
  - a Python scalar given for a Tensor argument is the wrapped 0-d tensor torch saves;
    ints, floats (an int given for a float argument: a float), bools, strings and None stay
    what they are; lists and shapes are tuples;
  - torch's derived names: <t>_sym_sizes (a shape), <t>_sym_sizes_opt (the shape of an
    optional tensor, (0,) when it was None; its only user, convolution's bias, is never 0-d),
    <t>_sym_argsize_<k> and <t>_sym_argsize_minus_<k> (one size), and the upsample ops'
    per-dimension scales (scales, or scales_h/scales_w, or scales_d/scales_h/scales_w), which
    replace the scale_factors list retrograd keeps.
"""

from __future__ import annotations

import re

from retrograd._autograd.saved import SavedVariable

_ARGSIZE = re.compile(r"(\w+?)_sym_argsize_(minus_)?(\d+)$")
_SCALE_NAMES = {1: ("scales",), 2: ("scales_h", "scales_w"),
                3: ("scales_d", "scales_h", "scales_w")}
_MISSING = object()


def saved_attribute(node, name: str):
    """The value of `_saved_<key>` / `_raw_saved_<key>` on an op node; AttributeError if the
    node has no such value."""
    raw = name.startswith("_raw_saved_")
    key = name[len("_raw_saved_"):] if raw else name[len("_saved_"):]
    op = node._op
    value = _MISSING
    if key in node._plan.names and not (key == "scale_factors" and _is_upsample(op)):
        value = _shown(node, key, _stored(node, key), raw)
    elif key.endswith("_sym_sizes"):
        value = _shape(node, key[:-len("_sym_sizes")])
    elif key.endswith("_sym_sizes_opt"):
        value = _shape(node, key[:-len("_sym_sizes_opt")])
        if value == ():
            value = (0,)  # torch shows an absent optional tensor's sizes as (0,)
    elif (m := _ARGSIZE.match(key)) is not None:
        shape = _shape(node, m.group(1))
        if shape is not _MISSING:
            k = int(m.group(3))
            value = shape[-k] if m.group(2) else shape[k]
    elif _is_upsample(op) and key.startswith("scales"):
        value = _scale(node, key)
    if value is not _MISSING:
        return value
    if any(key in f.params for f in op.formulas) and not (
            key == "scale_factors" and _is_upsample(op)):
        return None  # saved only when an input that needs it requires grad
    raise AttributeError(f"'{type(node).__name__}' object has no attribute '{name}'")


def _stored(node, key: str):
    return node._saved[node._plan.names.index(key)]


def _shown(node, key: str, value, raw: bool):
    if type(value) is SavedVariable:
        return value if raw else value.unpack(node)
    if type(value) is tuple and value and type(value[0]) is SavedVariable:
        return value if raw else tuple(v.unpack(node) for v in value)
    op = node._op
    if key in op.arg_names:
        kind = op.schema.args[op.arg_names.index(key)].type
        if kind.startswith("Tensor") and isinstance(value, (bool, int, float)):
            from retrograd._ops.creation import tensor

            return tensor(value)  # torch saves a Python scalar as a wrapped tensor
        if kind in ("float", "float?") and type(value) is int:
            return float(value)  # torch keeps a double
    if isinstance(value, list):
        return tuple(value)
    return value


def _shape(node, arg: str):
    """The shape of tensor argument `arg`, from its saved shape or the saved tensor itself."""
    names = node._plan.names
    if arg + "_shape" in names:
        return tuple(_stored(node, arg + "_shape"))
    if arg in names:
        value = _stored(node, arg)
        if type(value) is SavedVariable:
            tensor = value.unpack(node)
            if tensor is not None:
                return tuple(tensor.shape)
    return _MISSING


def _is_upsample(op) -> bool:
    return "scale_factors" in op.arg_names and op.name.startswith("upsample_")


def _scale(node, key: str):
    """torch's per-dimension scale (None when the output size was given)."""
    if "scale_factors" not in node._plan.names or "output_size" not in node._plan.names:
        return _MISSING
    n = len(_stored(node, "output_size"))
    names = _SCALE_NAMES.get(n, ())
    if key not in names:
        return _MISSING
    factors = _stored(node, "scale_factors")
    return None if factors is None else float(factors[names.index(key)])
