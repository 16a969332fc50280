"""retrograd.utils.flop_counter and module_tracker against torch's: the same programs give the
same flop totals per module (the same per-op counts where both run the same aten ops), the
same table, and the module hierarchy seen forward and backward."""

from __future__ import annotations

import importlib.util
import re

import pytest

import retrograd
from retrograd.utils.flop_counter import FlopCounterMode, register_flop_formula
from retrograd.utils.module_tracker import ModuleTracker

torch = pytest.importorskip("torch")
from torch.utils import flop_counter as torch_flops  # noqa: E402


def _count(lib, program):
    counter_cls = FlopCounterMode if lib is retrograd else torch_flops.FlopCounterMode
    with counter_cls(display=False) as counter:
        program(lib)
    per_op = {mod: {str(op): n for op, n in ops.items()}
              for mod, ops in counter.get_flop_counts().items()}
    totals = {mod: sum(ops.values()) for mod, ops in per_op.items()}
    return counter, per_op, totals


def mlp(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(16, 32), lib.nn.ReLU(), lib.nn.Linear(32, 4))
    model(lib.ones(8, 16, requires_grad=True)).sum().backward()


def linear_3d(lib):
    lib.manual_seed(0)
    lib.nn.Linear(6, 3)(lib.ones(2, 5, 6)).sum().backward()


def attention(lib):
    lib.manual_seed(0)
    m = lib.nn.MultiheadAttention(8, 2, batch_first=True)
    x = lib.ones(2, 5, 8, requires_grad=True)
    m(x, x, x)[0].sum().backward()


def conv_net(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3, padding=1), lib.nn.Conv2d(4, 4, 3, groups=2))
    m(lib.ones(2, 3, 6, 6, requires_grad=True)).sum().backward()


def conv_transpose(lib):
    lib.manual_seed(0)
    m = lib.nn.ConvTranspose2d(3, 4, 3, stride=2)
    m(lib.ones(2, 3, 5, 5, requires_grad=True)).sum().backward()


def batched_products(lib):
    a = lib.ones(2, 3, 4, requires_grad=True)
    b = lib.ones(2, 4, 5, requires_grad=True)
    c = lib.ones(2, 2, 3, 4, requires_grad=True)
    ((a @ b).sum() + (c @ c.transpose(-1, -2)).sum()
     + lib.bmm(a, b).sum() + lib.baddbmm(lib.ones(2, 3, 5), a, b).sum()).backward()


@pytest.mark.parametrize("program", [mlp, linear_3d, attention, conv_net, conv_transpose,
                                     batched_products])
def test_totals_per_module_match_torch(program):
    _, ours_ops, ours = _count(retrograd, program)
    _, theirs_ops, theirs = _count(torch, program)
    assert ours == theirs
    if program in (mlp, linear_3d, attention):  # the same aten ops run: the same per-op counts
        assert ours_ops == theirs_ops


@pytest.mark.parametrize("equation, shapes", [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij,jk", [(3, 4), (4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)]), ("ij,ij->", [(3, 4), (3, 4)]),
    ("ij,ij->i", [(3, 4), (3, 4)]), ("i,j->ij", [(4,), (4,)]),
])
def test_einsum_forward_matches_torch(equation, shapes):
    def program(lib):
        lib.einsum(equation, *[lib.ones(*s) for s in shapes])

    assert _count(retrograd, program)[2] == _count(torch, program)[2]


def _cells(table: str) -> list:
    """The table's cells, row by row (the rule under the header left out: its first column's
    width follows the indentation)."""
    return [re.split(r"\s{2,}", line.strip()) for line in table.splitlines()
            if set(line) - {"-", " "}]


def test_the_table_is_torchs():
    """The same rows and cells; torch asks tabulate to keep the first column's indentation,
    which the installed tabulate drops, while retrograd's own table keeps it."""
    pytest.importorskip("tabulate")  # torch's get_table needs it; retrograd's does not
    for depth in (1, 2, None):
        ours = _count(retrograd, mlp)[0].get_table(depth)
        theirs = _count(torch, mlp)[0].get_table(depth)
        assert _cells(ours) == _cells(theirs)
    assert _count(retrograd, mlp)[0].get_table(2).splitlines()[2:6] == [
        "Sequential      30.720K    100.00%",
        " - aten.addmm   10.240K     33.33%",
        " - aten.mm      20.480K     66.67%",
        " Sequential.0   24.576K     80.00%"]


def test_display_prints_the_table(capsys):
    with FlopCounterMode(depth=1) as counter:
        mlp(retrograd)
    assert capsys.readouterr().out.strip() == counter.get_table(1).strip()
    with FlopCounterMode(display=False) as empty:
        pass
    assert empty.get_total_flops() == 0
    with torch_flops.FlopCounterMode(display=False) as torch_empty:
        pass
    torch_empty.get_total_flops()
    assert empty.get_table().splitlines()[-1].split() == ["Global", "0", "0%"]
    if importlib.util.find_spec("tabulate"):
        assert _cells(empty.get_table()) == _cells(torch_empty.get_table())


def test_cpu_attention_is_counted_with_torchs_attention_formulas():
    """A deliberate difference: torch leaves its CPU attention kernel uncounted (0 flops)."""
    def program(lib):
        q = lib.ones(2, 3, 8, 4, requires_grad=True)
        k = lib.ones(2, 3, 6, 4, requires_grad=True)
        lib.nn.functional.scaled_dot_product_attention(q, k, k).sum().backward()

    assert _count(torch, program)[2].get("Global", 0) == 0
    shapes = [(2, 3, 8, 4), (2, 3, 6, 4), (2, 3, 6, 4)]
    expected = (torch_flops.sdpa_flop_count(*shapes)
                + torch_flops.sdpa_backward_flop_count((2, 3, 8, 4), *shapes))
    assert _count(retrograd, program)[2]["Global"] == expected


def test_custom_mapping_and_registration_errors():
    def double_mm(a_shape, b_shape, *args, out_shape=None, **kwargs):
        return 2 * a_shape[0] * a_shape[1] * b_shape[1] * 2

    with FlopCounterMode(display=False,
                         custom_mapping={retrograd.ops.aten.mm: double_mm}) as counter:
        retrograd.mm(retrograd.ones(2, 3), retrograd.ones(3, 4))
    assert counter.get_total_flops() == 96  # twice the built-in 48
    with pytest.raises(RuntimeError, match="duplicate registrations for aten.mm"):
        register_flop_formula(retrograd.ops.aten.mm)(double_mm)
    with pytest.raises(ValueError, match="expected each target to be OpOverloadPacket"):
        register_flop_formula(retrograd.ops.aten.mm.default)(double_mm)


def test_module_tracker_parents_forward_and_backward():
    def program(lib, tracker_cls):
        lib.manual_seed(0)
        seen = []

        class Probe(lib.nn.Module):
            def forward(self, x):
                seen.append(("fw", sorted(tracker.parents)))
                return x * 2

        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = lib.nn.Sequential(lib.nn.Linear(3, 3), Probe())

            def forward(self, x):
                return self.inner(x)

        x = lib.ones(2, 3, requires_grad=True)
        with tracker_cls() as tracker:
            out = Net()(x)
            out.register_hook(lambda g: seen.append(("bw", sorted(tracker.parents),
                                                     tracker.is_bw)))
            out.sum().backward()
            seen.append(("after", sorted(tracker.parents), tracker.is_bw))
        return seen

    from torch.utils.module_tracker import ModuleTracker as TorchTracker

    assert program(retrograd, ModuleTracker) == program(torch, TorchTracker)
