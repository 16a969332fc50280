"""retrograd.utils.flop_counter: FlopCounterMode counts the floating-point operations of the
matrix products, convolutions and attention that run inside it, forward and backward, per
module (ModuleTracker), with torch's formulas and table.

The counting is a dispatch mode, so it sees the aten ops retrograd runs. Those are torch's for
mm, addmm, bmm, baddbmm and convolution; retrograd also runs a few of its own where torch
decomposes: `_matmul_batched` (a broadcasting batched product, torch's bmm after its
reshapes), `_conv_corr_t` / `_conv_corr_w` (the input and weight gradients of a convolution,
the two halves of torch's convolution_backward, and `_conv_corr` for a transposed one) and
`_einsum` (torch's bmm of a two-operand contraction); each is counted as torch counts what it
decomposes to, so totals agree. Two differences, both README-listed: the CPU attention kernel
is counted (torch counts its CUDA kernels but not this one), and an einsum's backward counts
the products retrograd's formula runs (an outer product's backward contracts; a full
contraction's backward is element-wise), where torch counts its bmm's backward.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from functools import wraps
from typing import Any

from retrograd import _warning_site as _ws
from retrograd.ops import aten
from retrograd.utils._python_dispatch import TorchDispatchMode
from retrograd.utils._pytree import tree_map
from retrograd.utils.module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula"]

flop_registry: dict[Any, Callable] = {}
suffixes = ["", "K", "M", "B", "T"]


def get_shape(i: Any) -> Any:
    from retrograd._tensor import Tensor

    return i.shape if isinstance(i, Tensor) else i


def shape_wrapper(f: Callable) -> Callable:
    """A formula of shapes made to take the op's arguments (tensors replaced by their shapes)."""
    @wraps(f)
    def nf(*args: Any, out_val: Any = None, **kwargs: Any) -> Any:
        args, kwargs, out_shape = tree_map(get_shape, (args, kwargs, out_val))
        return f(*args, out_shape=out_shape, **kwargs)

    return nf


def register_flop_formula(targets: Any, get_raw: bool = False) -> Callable:
    """Register `formula(*args, out_shape, **kwargs) -> int` for op packets (aten.mm, ...);
    with get_raw the formula gets the tensors themselves, else their shapes."""
    def register_fun(flop_formula: Callable) -> Callable:
        if not get_raw:
            flop_formula = shape_wrapper(flop_formula)
        for target in targets if isinstance(targets, (list, tuple)) else [targets]:
            if type(target).__name__ != "OpOverloadPacket":
                raise ValueError(f"register_flop_formula(targets): expected each target to be "
                                 f"OpOverloadPacket (i.e. torch.ops.mylib.foo), JitFunction, or "
                                 f"HigherOrderOperator, got {target} which is of type "
                                 f"{type(target)}")
            if target in flop_registry:
                raise RuntimeError(f"duplicate registrations for {target}")
            flop_registry[target] = flop_formula
        return flop_formula

    return register_fun


@register_flop_formula(aten.mm)
def mm_flop(a_shape: Any, b_shape: Any, *args: Any, out_shape: Any = None, **kwargs: Any) -> int:
    m, k = a_shape
    k2, n = b_shape
    if k != k2:
        raise AssertionError(f"matmul: inner dimensions must match (k == k2), got {k} and {k2}")
    return m * n * 2 * k


@register_flop_formula(aten.addmm)
def addmm_flop(self_shape: Any, a_shape: Any, b_shape: Any, *args: Any, out_shape: Any = None,
               **kwargs: Any) -> int:
    return mm_flop(a_shape, b_shape)


@register_flop_formula(aten.bmm)
def bmm_flop(a_shape: Any, b_shape: Any, *args: Any, out_shape: Any = None, **kwargs: Any
             ) -> int:
    b, m, k = a_shape
    b2, k2, n = b_shape
    if b != b2:
        raise AssertionError(f"bmm: batch dimensions must match (b == b2), got {b} and {b2}")
    if k != k2:
        raise AssertionError(f"bmm: inner dimensions must match (k == k2), got {k} and {k2}")
    return b * m * n * 2 * k


@register_flop_formula(aten.baddbmm)
def baddbmm_flop(self_shape: Any, a_shape: Any, b_shape: Any, *args: Any,
                 out_shape: Any = None, **kwargs: Any) -> int:
    return bmm_flop(a_shape, b_shape)


@register_flop_formula(aten._matmul_batched)
def matmul_batched_flop(a_shape: Any, b_shape: Any, *args: Any, out_shape: Any = None,
                        **kwargs: Any) -> int:
    """A broadcasting batched product: torch's bmm over the broadcast batch."""
    m, k = a_shape[-2:]
    n = b_shape[-1]
    return math.prod(out_shape[:-2]) * m * n * 2 * k


def conv_flop_count(x_shape: Any, w_shape: Any, out_shape: Any, transposed: bool = False) -> int:
    """Multiplications and additions of a convolution (bias left out): for each point of the
    output (of the input, transposed) a filter's worth, times batch and channel pairs."""
    batch_size = x_shape[0]
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return math.prod(conv_shape) * math.prod(filter_size) * batch_size * c_out * c_in * 2


@register_flop_formula(aten.convolution)
def conv_flop(x_shape: Any, w_shape: Any, _bias: Any, _stride: Any, _padding: Any,
              _dilation: Any, transposed: bool, *args: Any, out_shape: Any = None,
              **kwargs: Any) -> int:
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _channels_first(shape: Any) -> list:
    return [shape[1], shape[0]] + list(shape[2:])


@register_flop_formula(aten.convolution_backward)
def conv_backward_flop(grad_out_shape: Any, x_shape: Any, w_shape: Any, _bias: Any,
                       _stride: Any, _padding: Any, _dilation: Any, transposed: bool,
                       _output_padding: Any, _groups: Any, output_mask: Any, *args: Any,
                       out_shape: Any = None, **kwargs: Any) -> int:
    """The input gradient is a transposed convolution of the output gradient with the weight;
    the weight gradient a convolution of the input with the output gradient."""
    count = 0
    if output_mask[0]:
        count += conv_flop_count(grad_out_shape, w_shape, get_shape(out_shape[0]),
                                 not transposed)
    if output_mask[1]:
        grad_weight = _channels_first(get_shape(out_shape[1]))
        if transposed:
            count += conv_flop_count(_channels_first(grad_out_shape), _channels_first(x_shape),
                                     grad_weight)
        else:
            count += conv_flop_count(_channels_first(x_shape), _channels_first(grad_out_shape),
                                     grad_weight)
    return count


@register_flop_formula(aten._conv_corr_t)
def conv_corr_t_flop(grad_out_shape: Any, w_shape: Any, *args: Any, out_shape: Any = None,
                     **kwargs: Any) -> int:
    """retrograd's input gradient of a convolution (convolution_backward's first output)."""
    return conv_flop_count(grad_out_shape, w_shape, out_shape, transposed=True)


@register_flop_formula(aten._conv_corr)
def conv_corr_flop(grad_out_shape: Any, w_shape: Any, *args: Any, out_shape: Any = None,
                   **kwargs: Any) -> int:
    """retrograd's input gradient of a transposed convolution: a plain correlation."""
    return conv_flop_count(grad_out_shape, w_shape, out_shape, transposed=False)


@register_flop_formula(aten._conv_corr_w)
def conv_corr_w_flop(x_shape: Any, grad_out_shape: Any, *args: Any, out_shape: Any = None,
                     **kwargs: Any) -> int:
    """retrograd's weight gradient of a convolution (convolution_backward's second output)."""
    return conv_flop_count(_channels_first(x_shape), _channels_first(grad_out_shape),
                           _channels_first(out_shape))


@register_flop_formula(aten._einsum, get_raw=True)
def einsum_flop(equation: str, operands: Any, *args: Any, out_val: Any = None,
                **kwargs: Any) -> int:
    """A two-operand einsum that sums over an index: torch's bmm of the contraction, two flops
    for every combination of the indices' values (other einsums run no product here)."""
    if len(operands) != 2 or "..." in equation:
        return 0
    inputs, _, output = equation.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if not output and "->" not in equation:
        output = "".join(sorted(c for c in set(inputs) - {","} if inputs.count(c) == 1))
    sizes: dict[str, int] = {}
    for term, t in zip(terms, operands):
        sizes.update(zip(term, t.shape))
    summed = set(terms[0]) & set(terms[1]) - set(output)
    return 2 * math.prod(sizes.values()) if summed else 0


def sdpa_flop_count(query_shape: Any, key_shape: Any, value_shape: Any) -> int:
    """The two batched products of attention (scores, then the weighted sum); key and value
    may have fewer heads than the query (grouped-query attention)."""
    b, h_q, s_q, d_q = query_shape
    _, _, s_k, _ = key_shape
    d_v = value_shape[-1]
    return (bmm_flop((b * h_q, s_q, d_q), (b * h_q, d_q, s_k))
            + bmm_flop((b * h_q, s_q, s_k), (b * h_q, s_k, d_v)))


@register_flop_formula(aten._scaled_dot_product_flash_attention_for_cpu)
def sdpa_flop(query_shape: Any, key_shape: Any, value_shape: Any, *args: Any,
              out_shape: Any = None, **kwargs: Any) -> int:
    """The CPU attention kernel's forward (torch leaves this kernel uncounted; its backward
    runs as batched products here, counted as they run)."""
    return sdpa_flop_count(query_shape, key_shape, value_shape)


def get_suffix_str(number: int) -> str:
    index = max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))
    return suffixes[index]


def convert_num_with_suffix(number: int, suffix: str) -> str:
    index = suffixes.index(suffix)
    return f"{number / 1000 ** index:.3f}" + suffixes[index]


def convert_to_percent_str(num: int, denom: int) -> str:
    return "0%" if denom == 0 else f"{num / denom:.2%}"


def _table(rows: list, header: list, align: tuple) -> str:
    """rows under header in plain columns (tabulate's "simple" format, which torch uses: two
    spaces between columns, a header at least two wider than its name, a rule of dashes)."""
    widths = [max([len(h) + 2] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]

    def line(cells: list) -> str:
        return "  ".join(c.ljust(w) if a == "left" else c.rjust(w)
                         for c, w, a in zip(cells, widths, align)).rstrip()

    return "\n".join([line(header), "  ".join("-" * w for w in widths)]
                     + [line(r) for r in rows])


class FlopCounterMode:
    """Counts flops inside its block: get_total_flops(), get_flop_counts() (module name -> op
    -> flops, "Global" for all), get_table(depth); display=True prints the table on exit."""

    def __init__(self, mods: Any = None, depth: int = 2, display: bool = True,
                 custom_mapping: dict | None = None) -> None:
        self.flop_counts: dict[str, dict[Any, int]] = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mode: _FlopCounterMode | None = None
        if mods is not None:
            _ws.warn("mods argument is not needed anymore, you can stop passing it",
                     stacklevel=2)
        self.flop_registry = {
            **flop_registry,
            **{k: v if getattr(v, "_get_raw", False) else shape_wrapper(v)
               for k, v in (custom_mapping or {}).items()}}
        self.mod_tracker = ModuleTracker()

    def get_total_flops(self) -> int:
        return sum(self.flop_counts.get("Global", {}).values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        depth = self.depth if depth is None else depth
        depth = 999999 if depth is None else depth
        global_flops = self.get_total_flops()
        global_suffix = get_suffix_str(global_flops)
        subsumed = False

        def process_mod(mod_name: str, mod_depth: int) -> list:
            nonlocal subsumed
            total = sum(self.flop_counts[mod_name].values())
            subsumed |= total >= global_flops
            pad = " " * mod_depth
            rows = [[pad + mod_name, convert_num_with_suffix(total, global_suffix),
                     convert_to_percent_str(total, global_flops)]]
            for k, v in self.flop_counts[mod_name].items():
                rows.append([pad + " - " + str(k), convert_num_with_suffix(v, global_suffix),
                             convert_to_percent_str(v, global_flops)])
            return rows

        values: list = []
        for mod in sorted(self.flop_counts.keys()):
            if mod == "Global":
                continue
            mod_depth = mod.count(".") + 1
            if mod_depth <= depth:
                values.extend(process_mod(mod, mod_depth - 1))
        if "Global" in self.flop_counts and not subsumed:
            for value in values:
                value[0] = " " + value[0]
            values = process_mod("Global", 0) + values
        if not values:
            values = [["Global", "0", "0%"]]
        return _table(values, ["Module", "FLOP", "% Total"], ("left", "right", "right"))

    def __enter__(self) -> FlopCounterMode:
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self.mode = _FlopCounterMode(self)
        self.mode.__enter__()
        return self

    def __exit__(self, *args: Any) -> Any:
        if self.mode is None:
            raise AssertionError("Internal error: FlopCounter.__exit__ called but mode is None")
        self.mode.__exit__(*args)
        self.mode = None  # break cycles
        self.mod_tracker.__exit__()
        if self.display:
            print(self.get_table(self.depth))
        return None

    def _count_flops(self, func_packet: Any, out: Any, args: tuple, kwargs: dict) -> Any:
        formula = self.flop_registry.get(func_packet)
        if formula is not None:
            count = formula(*args, **kwargs, out_val=out)
            for parent in set(self.mod_tracker.parents):
                self.flop_counts[parent][func_packet] += count
        return out


class _FlopCounterMode(TorchDispatchMode):
    def __init__(self, counter: FlopCounterMode) -> None:
        super().__init__()
        self.counter = counter

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        return self.counter._count_flops(func.overloadpacket, out, args, kwargs)
