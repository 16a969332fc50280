"""Each core object is made the same way on every path (NOTE [Field tables]).

A fresh Tensor, Node, SavedVariable, ViewInfo or VersionCounter is built here through each path
that makes one (Python constructor, op fast entry, generic runner, view fast path, inline save,
array backward, unpack), and every slot is compared: set or unset, its type, and its value where
the value does not depend on the run. Each object's set slots must also be what its field table
says, so a slot added to a class and its table but forgotten by a path fails here.
"""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import retrograd
from retrograd._autograd.accumulate_grad import ACCUMULATE_GRAD_FIELDS, grad_accumulator
from retrograd._autograd.node import NODE_FIELDS, GraphRoot, Node
from retrograd._autograd.saved import (
    KEEP_ARRAY,
    KEEP_TENSOR,
    SAVED_ARRAY_FIELDS,
    SAVED_HOOKED_FIELDS,
    SAVED_NONE_FIELDS,
    SAVED_TENSOR_FIELDS,
    SavedVariable,
    saved_tensor,
)
from retrograd._autograd.views import VIEW_INFO_FIELDS, ViewInfo
from retrograd._fields import UNSET, FieldTable, Fresh, slots_of
from retrograd._ops import registry
from retrograd._ops.registry import AFTER_OUTPUTS, FORMULA_NODE_FIELDS, OPS, FormulaNode
from retrograd._tensor import (
    TENSOR_FIELDS,
    VERSION_COUNTER_FIELDS,
    Tensor,
    VersionCounter,
    _init,
    _wrap,
)
from retrograd.autograd.graph import saved_tensors_hooks

_MISSING = "<unset>"
# slots whose value differs from run to run (a counter)
_RUN_DEPENDENT = {"_seq"}


def _describe(value, slot: str = ""):
    """A comparable picture of a slot's value: None, bools and small ints as they are, version
    counters and saved values slot by slot, anything else by its type."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and slot not in _RUN_DEPENDENT:
        return value
    if isinstance(value, (VersionCounter, SavedVariable)):
        return _state(value)
    if isinstance(value, tuple):
        return tuple(_describe(v) for v in value)
    return type(value).__name__


def _state(obj) -> dict:
    out = {}
    for name in slots_of(type(obj)):
        try:
            value = object.__getattribute__(obj, name)
        except AttributeError:
            out[name] = _MISSING
        else:
            out[name] = _describe(value, name)
    return out


def _set_slots(obj) -> set:
    return {name for name, v in _state(obj).items() if v != _MISSING}


def _table_set_slots(table: FieldTable) -> set:
    return {name for name, value in table.fields.items() if value is not UNSET}


def _same(*objs) -> dict:
    """Every object has the same slots set, to values of the same kind; returns that state."""
    first = _state(objs[0])
    for other in objs[1:]:
        assert _state(other) == first
    return first


def _leaf(*shape):
    return retrograd.rand(*shape, dtype=retrograd.float64, requires_grad=True)


# --- the tables themselves ----------------------------------------------------------------------

TABLES = [TENSOR_FIELDS, VERSION_COUNTER_FIELDS, NODE_FIELDS, ACCUMULATE_GRAD_FIELDS,
          FORMULA_NODE_FIELDS, SAVED_TENSOR_FIELDS, SAVED_ARRAY_FIELDS, SAVED_HOOKED_FIELDS,
          SAVED_NONE_FIELDS, VIEW_INFO_FIELDS]


@pytest.mark.parametrize("table", TABLES, ids=lambda t: t.cls.__name__ + "/" + t.alias)
def test_table_lists_every_slot_with_a_reason(table):
    assert set(table.fields) == set(slots_of(table.cls))
    assert all(table.why[name].strip() for name in table.fields)


def test_table_refuses_a_forgotten_or_unknown_slot():
    class Two:
        __slots__ = ("a", "b")

    with pytest.raises(TypeError, match="each of its slots once"):
        FieldTable(Two, "_Two", (("a", "0", "one"),))
    with pytest.raises(TypeError, match="each of its slots once"):
        FieldTable(Two, "_Two", (("a", "0", "x"), ("b", "0", "y"), ("c", "0", "z")))
    with pytest.raises(TypeError, match="not parameters"):
        FieldTable(Two, "_Two", (("a", "{p}", "x"), ("b", "0", "y")))


def test_generated_constructors_are_visible_and_inline():
    for fn in (_wrap, _init, Node.__init__, SavedVariable.__init__, SavedVariable.unpack,
               ViewInfo.__init__, VersionCounter.__init__):
        source = inspect.getsource(fn)
        # stores, no loop at run time
        assert not re.search(r"^\s*(for|while) ", source, re.MULTILINE)
    assert "_data = data" in inspect.getsource(_wrap)


def test_lines_chain_literals_and_keep_order():
    class Three:
        __slots__ = ("a", "b", "c", "d")

    fresh = Fresh(VERSION_COUNTER_FIELDS, "cond", "v")
    table = FieldTable(Three, "_Three", (("a", "{x}", "w"), ("b", "None", "w"),
                                         ("c", "None", "w"), ("d", fresh, "w")), ("x",))
    assert table.lines("o", {"x": "1 + 1"}, indent="") == [
        "o.a = 1 + 1", "o.b = o.c = None", "if cond:", "    o.d = None", "else:",
        "    v = o.d = _new(_VC)", "    v.version = 0"]
    assert table.lines("o", {"x": "y"}, override={"b": "2"}, later=("d",), indent="") == [
        "o.a = y", "o.b = 2", "o.c = None"]
    assert table.lines("o", only=("c",), indent="") == ["o.c = None"]
    with pytest.raises(TypeError, match="give them"):
        table.lines("o")


# --- Tensor and VersionCounter ------------------------------------------------------------------


def _fresh_tensors() -> list:
    """A tensor with no history, made on every path that makes one."""
    arr = np.arange(3.0)
    plain = retrograd.tensor([0.0, 1.0, 2.0], dtype=retrograd.float64)
    out = [_wrap(arr)]
    t = Tensor.__new__(Tensor)
    _init(t, arr)
    out.append(t)
    out.append(Tensor(3))  # the legacy constructor
    out.append(plain)  # a creation op
    out.append(plain.exp())  # fast entry
    out.append(plain * plain)  # fast entry, two tensors
    out.append(registry.run(OPS["exp"], (plain,)))  # generic runner
    out.append(plain.detach())
    # array backward: an input's gradient as the array formula's result wraps it
    x = _leaf(3)
    y = x * x
    node = y.grad_fn
    grads = node._plan.backward_array(node, [retrograd.ones(3, dtype=retrograd.float64)],
                                      False, None)
    out.append(grads[0])
    return out


def test_fresh_tensor_same_on_every_path():
    tensors = _fresh_tensors()
    state = _same(*tensors)
    assert _set_slots(tensors[0]) == _table_set_slots(TENSOR_FIELDS)
    assert state["_version_counter"] == _state(VersionCounter())
    assert _set_slots(VersionCounter()) == _table_set_slots(VERSION_COUNTER_FIELDS)
    # each fresh tensor has a counter of its own (detach shares its source's, as it should)
    counters = {id(t._version_counter) for t in tensors if t is not tensors[7]}
    assert len(counters) == len(tensors) - 1
    assert tensors[7]._version_counter is tensors[3]._version_counter


def test_inference_tensor_same_on_every_path():
    plain = retrograd.tensor([0.0, 1.0], dtype=retrograd.float64)
    with retrograd.inference_mode():
        made = [_wrap(np.zeros(2)), plain.exp(), registry.run(OPS["exp"], (plain,)),
                retrograd.zeros(2)]
    state = _same(*made)
    assert state["_version_counter"] is None


def test_tensor_with_history_same_on_every_path():
    x, w = _leaf(3), _leaf(3)
    fast = x * w
    generic = registry.run(OPS["mul.Tensor"], (x, w))
    state = _same(fast, generic)
    assert state["_grad_fn"] == "MulBackward0" and state["_requires_grad"] is True
    # an output saved as its array comes back (unpack's inline rebuild) as a tensor with the
    # same slots as the output itself
    y = x.exp()
    z = x.exp()
    node = y.grad_fn
    (sv,) = node._saved
    _same(y, sv.unpack(node), sv._unpack_checked(node), z)


# --- views --------------------------------------------------------------------------------------


def _views(base):
    fast = base.select(0, 1)
    generic = registry.run(OPS["select.int"], (base, 0, 1))
    return fast, generic


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("grad_mode", [False, True])
def test_view_same_on_fast_path_and_generic_runner(requires_grad, grad_mode):
    base = retrograd.rand(3, 2, dtype=retrograd.float64, requires_grad=requires_grad)
    with retrograd.set_grad_enabled(grad_mode):
        fast, generic = _views(base)
        nested_fast, nested_generic = _views(base[1:])
    for a, b in ((fast, generic), (nested_fast, nested_generic)):
        _same(a, b)
        assert _state(a._view) == _state(b._view)
        assert _set_slots(a._view) == _table_set_slots(VIEW_INFO_FIELDS)
        assert a._view.base is b._view.base and a._version_counter is base._version_counter
        assert len(a._view.replay) == len(b._view.replay)
        if a.grad_fn is not None:
            _same(a.grad_fn, b.grad_fn)
    info = ViewInfo(base, 0, (), 0)
    assert _set_slots(info) == _table_set_slots(VIEW_INFO_FIELDS)


def test_view_of_inference_tensor_same_on_both_paths():
    with retrograd.inference_mode():
        base = retrograd.rand(3, 2)
        fast, generic = _views(base)
    state = _same(fast, generic)
    assert state["_view"] is None and state["_version_counter"] is None


# --- Node ---------------------------------------------------------------------------------------


def test_op_node_same_on_fast_entry_and_generic_runner():
    x, w = _leaf(3), _leaf(3)
    fast = (x * w).grad_fn
    generic = registry.run(OPS["mul.Tensor"], (x, w)).grad_fn
    state = _same(fast, generic)
    assert _set_slots(fast) == _table_set_slots(FORMULA_NODE_FIELDS)
    assert state["_mask"] is None and state["_anomaly"] is None
    assert fast._seq < generic._seq  # each made a new sequence number
    # one of the two inputs requires grad: the other edge is empty on both paths
    c = retrograd.rand(3, dtype=retrograd.float64)
    _same((x * c).grad_fn, registry.run(OPS["mul.Tensor"], (x, c)).grad_fn)
    # an op with a Tensor[] argument (generic runner only) has a _mask
    cat = retrograd.cat([x, w]).grad_fn
    assert _set_slots(cat) == _table_set_slots(FORMULA_NODE_FIELDS) and cat._mask == (2,)


def test_op_node_of_tuple_output_same_on_both_paths():
    x = _leaf(3, 4)
    fast = x.max(1)[0].grad_fn
    generic = registry.run(OPS["max.dim"], (x, 1, False))[0].grad_fn
    _same(fast, generic)


def test_plain_nodes_follow_the_node_table():
    edges = ((None, 0),)
    for node in (Node(), Node(edges, ((3,), np.float64)), GraphRoot(edges, [None])):
        assert _set_slots(node) >= _table_set_slots(NODE_FIELDS)
        assert {n for n in _set_slots(node) if n in NODE_FIELDS.fields} == \
            _table_set_slots(NODE_FIELDS)
    # nodes made by their own constructors on top of Node's: a custom Function's, CopySlices
    class Double(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    base = _leaf(3) * 1
    base[1:].mul_(2)
    for node in (Double.apply(_leaf(2)).grad_fn, base.grad_fn):
        assert {n for n in _set_slots(node) if n in NODE_FIELDS.fields} == \
            _table_set_slots(NODE_FIELDS)
    assert type(base.grad_fn).__name__ == "CopySlices"
    acc = grad_accumulator(_leaf(2))
    assert _set_slots(acc) == _table_set_slots(ACCUMULATE_GRAD_FIELDS)
    assert acc.next_functions == () and acc._output_meta == (((2,), np.dtype("float64")),)


def test_op_node_saves_after_its_outputs_carry_it():
    # _plan and _saved come last on both paths: the saved output is kept as its array only
    # because it already carries the node
    assert FORMULA_NODE_FIELDS.cls is FormulaNode
    assert list(FORMULA_NODE_FIELDS.fields)[-len(AFTER_OUTPUTS):] == list(AFTER_OUTPUTS)
    x = _leaf(3)
    for y in (x.exp(), registry.run(OPS["exp"], (x,))):
        (sv,) = y.grad_fn._saved
        assert not sv._original and sv._data is y._data


# --- SavedVariable ------------------------------------------------------------------------------


def test_saved_input_same_inline_and_constructed():
    x, w = _leaf(3), _leaf(3)
    y = x * 2  # a non-leaf input
    inline = (y * w).grad_fn._saved  # saves `other` (w, a leaf) then `self` (y)
    constructed = (SavedVariable(w, False), SavedVariable(y, False))
    for a, b in zip(inline, constructed):
        assert _state(a) == _state(b)
        assert _set_slots(a) == _table_set_slots(SAVED_TENSOR_FIELDS)
    assert inline[0]._is_leaf and not inline[1]._is_leaf
    # what CopySlices hands over as a view: the same shape of object
    assert _state(saved_tensor(y, y._version_counter.version, False)) == _state(inline[1])
    # the same tensor saved as an output (of the node that made it) keeps only its array
    assert _set_slots(SavedVariable(y, True)) == _table_set_slots(SAVED_ARRAY_FIELDS)


def test_saved_output_same_inline_and_constructed():
    x = _leaf(3)
    y = x.exp()
    (inline,) = y.grad_fn._saved
    constructed = SavedVariable(y, True)
    assert _state(inline) == _state(constructed)
    assert _set_slots(inline) == _table_set_slots(SAVED_ARRAY_FIELDS)
    assert inline._data is y._data and inline._vc is y._version_counter
    # a leaf saved as an output is kept as itself
    assert _set_slots(SavedVariable(x, True)) == _table_set_slots(SAVED_TENSOR_FIELDS)


def test_saved_none_and_hooked():
    assert _set_slots(SavedVariable(None, False)) == _table_set_slots(SAVED_NONE_FIELDS)
    x = _leaf(3)
    with saved_tensors_hooks(lambda t: t * 1, lambda p: p):
        inline_path = x.exp().grad_fn._saved[0]  # the save function's generic form
        constructed = SavedVariable(x.exp(), True)
        input_path = (x * x).grad_fn._saved[0]
        constructed_input = SavedVariable(x, False)
    assert _state(inline_path) == _state(constructed)
    assert _state(input_path) == _state(constructed_input)
    # the table's fields, then _save_metadata's and _pack's
    assert _set_slots(constructed) == _table_set_slots(SAVED_HOOKED_FIELDS) | {
        "_vc", "_requires_grad", "_shape", "_data"}


# --- unpack rules -------------------------------------------------------------------------------


def test_unpack_rules_are_stated_once():
    import retrograd._autograd.saved as saved
    from retrograd._ops.codegen import GENERATED

    keep_tensor = KEEP_TENSOR.format(s="self", t="t")
    assert keep_tensor in inspect.getsource(saved.SavedVariable.unpack)
    x, w = _leaf(3), _leaf(3)
    node = (x.exp() * w).grad_fn
    backward = inspect.getsource(node._plan.backward)
    assert KEEP_TENSOR.format(s="s0", t="t") in backward
    exp_node = node.next_functions[0][0]
    array_backward = inspect.getsource(exp_node._plan.backward_array)
    assert KEEP_ARRAY.format(s="s0") in array_backward
    assert any("unpack" in name for name in GENERATED)


def test_unpack_paths_agree_and_refuse_alike():
    x = _leaf(3)
    y = x.exp()
    node = y.grad_fn
    (sv,) = node._saved
    a, b = sv.unpack(node), sv._unpack_checked(node)
    assert np.array_equal(a._data, b._data) and a.grad_fn is node is b.grad_fn
    # what the generated backward computes with, tensor and array formulas alike
    g = retrograd.ones(3, dtype=retrograd.float64)
    (tensor_grad,) = node._plan.backward(node, [g], False, None)
    (array_grad,) = node._plan.backward_array(node, [g], False, None)
    assert np.array_equal(tensor_grad._data, array_grad._data)
    # the saved input itself (mul saves it) is handed back as is
    z = x * y
    s_other, s_self = z.grad_fn._saved
    assert s_self.unpack(z.grad_fn) is x and s_other.unpack(z.grad_fn) is y
    # modified in place: every path refuses with the same message
    with retrograd.no_grad():
        y.add_(1)
    messages = []
    for unpack in (lambda: sv.unpack(node), lambda: sv._unpack_checked(node),
                   lambda: node._plan.backward(node, [g], False, None),
                   lambda: node._plan.backward_array(node, [g], False, None)):
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as err:
            unpack()
        messages.append(str(err.value).split(" (retrograd:")[0])
    assert len(set(messages)) == 1
