"""retrograd.compile: guards, recompiles and the compile pipeline (NOTE [Compiler pipeline]).

NOTE [Compiler pipeline]
A compiled function keeps one compiled variant per guard key and runs the first whose key
matches the call. A new variant is first looked up in the pre-capture index (cache.py, NOTE
[Pre-capture index]): a call of a function compiled before (same code, same values read, same
guards and hook structure), in this process or an earlier one, loads its variant without any
of the stages below. Otherwise compiling a variant goes through these stages, each printable
as Python
(`retrograd._logging.set_logs(graph_code=True)` or RETROGRAD_LOGS=graph_code):
 1. capture (capture.py, joint.py): the function runs once on copies of its inputs under a
    dispatch mode that records every op, then retrograd's own autograd.grad runs over its
    outputs with tangent placeholders, so the derivative formulas become graph nodes too; reading
    a captured value into Python (bool, item, tolist, numpy) ends capture (Unsupported): Tensor
    asks the thread's own modes (NOTE [Per-thread dispatch modes]), so other threads run on.
 2. functionalize (capture.py, as it records): an in-place op becomes its functional op; on a
    view, an as_strided_scatter computes the new base and the base's other views re-read it. The
    joint graph is a pure DAG.
 3. partition (partition.py): the forward graph computes the outputs (and the new values of
    inputs it writes); the rest goes to the backward graph; what crosses is what eager saves.
 3b. dynamic sizes (symbolic.py, with `dynamic=True`): stages 1-3 run twice, at two probe
    sizes, and the integers that differ become expressions in the symbols (NOTE [Dynamic
    shapes]).
 4. saved-tensor hooks (hooks.py): with a GraphModule pack/unpack pair active, the pack graph is
    captured on each saved value and the unpack graph on the packed values, inlined into the
    forward (after the value's last use) and the backward (before its first use).
 5. codegen (codegen.py): each graph becomes a Python function calling NumPy, dropping values
    after their last use and writing pointwise results into dead buffers (out=). The source
    (and its bytecode) is cached in memory and on disk (cache.py), keyed by the graphs' text,
    so another function or hook pair that captures the same graphs skips code generation.
 6. run (runtime.py): the forward runs as a custom Function whose node, CompiledFunctionBackward,
    runs the generated backward (given its saved values in a list it empties, so each is freed
    at its last use); ordinary autograd does the rest.
A variant is checked once against the captured values before use (config.verify, on by
default: it costs about a sixth of a compile, and the index makes a compile rare); whatever
cannot be captured or checked runs eagerly, logged, never with a wrong result.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from retrograd import _warning_site as _ws
from retrograd._autograd.state import state
from retrograd._compiler import config
from retrograd._compiler.capture import Unsupported
from retrograd._compiler.hooks import HookError
from retrograd._compiler.stance import check as check_stance
from retrograd._compiler.stance import current as current_stance
from retrograd._dtype import get_default_dtype
from retrograd._ops import dispatch
from retrograd._tensor import Tensor

log = logging.getLogger("retrograd.compiler")
code_log = logging.getLogger("retrograd.graph_code")

counters: dict = {"compiles": 0, "cache_hit": 0, "cache_miss": 0, "cache_bypass": 0}


class _Eager:
    """A variant that runs eagerly (`reason` says why)."""

    def __init__(self, reason: str) -> None:
        self.eager_reason = reason


def hooks_key() -> Any:
    """The guard on saved-tensor hooks: an inlineable (GraphModule) pair by identity; plain
    callables, which run eagerly anyway, never cause a recompile."""
    stack = state.saved_hooks
    if not stack:
        return None
    from retrograd._compiler.hooks import inlineable

    if not inlineable(stack[-1]):
        return None
    pack, unpack = stack[-1]
    return ("inline", id(pack), id(unpack), config.saved_tensors_hooks_filtering_mode,
            config.saved_tensors_hooks_placement)


def _tensor_guard(t: Tensor) -> tuple:
    a = t._data
    # the dtype object itself: it tells bfloat16 and float8 apart, and dtype.name is slow
    return (a.shape, a.dtype, t._requires_grad, a.flags.c_contiguous)


def _leaf_guard(v: Any) -> Any:
    if v.__class__ is Tensor:
        return ("T",) + _tensor_guard(v)
    if isinstance(v, Tensor):  # a subclass instance compiles apart (its __torch_function__)
        return (v.__class__,) + _tensor_guard(v)
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v).__name__, v)


_FLAT_SPECS: dict = {}


def _flat_spec(n: int) -> Any:
    """flatten((args, {}))'s spec for n plain arguments."""
    spec = _FLAT_SPECS.get(n)
    if spec is None:
        from retrograd._compiler.joint import flatten

        spec = _FLAT_SPECS[n] = flatten(((None,) * n, {}))[1]
    return spec


_PARTS = ("grad mode", "parameters", "arguments", "argument structure",
          "saved tensors hooks", "inference mode", "module training flags", "default dtype")


def _explain(old: tuple, new: tuple) -> str:
    for name, a, b in zip(_PARTS, old, new):
        if a != b:
            if name in ("parameters", "arguments") and len(a) == len(b):
                for i, (x, y) in enumerate(zip(a, b)):
                    if x != y:
                        return f"{name}[{i}] changed: {x} -> {y}"
            return f"{name} changed: {a} -> {b}"
    return "guards changed"


def _user_mode_active() -> bool:
    """A mode other than retrograd's own wrapper-subclass dispatcher (which stays installed
    while any wrapper tensor lives, and only acts on wrappers) is active on this thread."""
    mode = dispatch.current_mode()
    return mode is not None and not getattr(mode, "_internal", False)


def _function_mode_active() -> bool:
    from retrograd._ops import torch_function

    return bool(torch_function.mode_stack())


def _refuse_torch_function_inputs(args: tuple, kwargs: dict) -> None:
    """An instance of a Tensor subclass with its own __torch_function__ among the inputs: its
    calls are the subclass's to decide and its results of its class, which a compiled graph of
    ops would not keep (NOTE [Torch function]), so the function runs eagerly for it."""
    from retrograd._compiler.joint import flatten
    from retrograd._ops import torch_function

    for v in flatten((args, kwargs))[0]:
        if isinstance(v, Tensor) and v.__class__ is not Tensor and \
                torch_function.takes_part(v.__class__):
            raise Unsupported(f"an input is a {v.__class__.__name__}, a Tensor subclass with "
                              "__torch_function__ (its calls run as the subclass decides)")


class CompiledCallable:
    """What retrograd.compile returns for a function (modules use it as _compiled_call_impl)."""

    def __init__(self, fn: Callable, module: Any = None, fullgraph: bool = False,
                 dynamic: bool | None = False, backend: Any = "numpy") -> None:
        self.fn = fn
        self.module = module
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.backend = backend
        self.variants: dict = {}
        self.dynamic_variants: dict = {}  # symbolic guard key -> variant or None (failed)
        self.dynamic_failures: dict = {}  # symbolic guard key -> the error its capture raised
        # dynamic=None: the argument dimensions seen changing, (tensor ordinal, dimension)
        self.auto_dims: frozenset = frozenset()
        self.last_key: tuple | None = None
        self.reason: str | None = None  # why the variant being made is needed
        self.dynamic_error: Exception | None = None  # why the last dynamic capture failed
        self.compiled = 0
        self.called = False  # called before (the "eager_then_compile" stance)
        self.warned = False
        self.__wrapped__ = fn
        self.__name__ = type(module).__name__ if module is not None else getattr(
            fn, "__name__", type(fn).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)

    def _param_slots(self) -> list:
        if self.module is None:
            return []
        slots = []
        for m in self.module.modules():
            for table in (m._parameters, m._buffers):
                for k, t in table.items():
                    if t is not None:
                        slots.append((table, k, t))
        return slots

    def _training_flags(self) -> tuple:
        if self.module is None:
            return ()
        return tuple(m.training for m in self.module.modules())

    def guard_key(self, args: tuple, kwargs: dict, slots: list) -> tuple:
        """(argument leaves, the key the call's variant is found by)."""
        plain = not kwargs
        if plain:
            for a in args:
                if type(a) is not Tensor:
                    plain = False
                    break
        if plain:  # the common call: tensors, no nesting
            leaves = list(args)
            spec = _flat_spec(len(args))
            guards = tuple([("T",) + _tensor_guard(a) for a in args])
        else:
            from retrograd._compiler.joint import flatten

            leaves, spec = flatten((args, kwargs))
            guards = tuple([_leaf_guard(v) for v in leaves])
        return leaves, (state.grad_enabled,
                        tuple([(id(t),) + _tensor_guard(t) for _, _, t in slots]),
                        guards, spec, hooks_key(),
                        state.inference, self._training_flags(), get_default_dtype())

    def _eager(self, args: tuple, kwargs: dict) -> Any:
        return self.fn(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if (dispatch.mode_stack and _user_mode_active()) or \
                state.saved_hooks_disabled_msg is not None or \
                dispatch.torch_function_hook[0] is not None and _function_mode_active():
            # a dispatch mode (autocast, a tracer) or a TorchFunctionMode is active on this
            # thread: it sees the calls as they run
            return self._eager(args, kwargs)
        current = current_stance()
        stance = current.stance
        if stance != "default":
            check_stance(current)
            if stance == "force_eager" or (stance.endswith("eager_then_compile")
                                           and not self.called):
                self.called = True
                return self._eager(args, kwargs)
        self.called = True
        from retrograd._compiler.runtime import run_entry

        slots = self._param_slots()
        leaves, key = self.guard_key(args, kwargs, slots)
        variant = self.variants.get(key)
        if variant is None:
            if stance in ("eager_on_recompile", "fail_on_recompile"):
                variant = self._without_compiling(stance, key, args, kwargs, slots)
                if variant is None:
                    return self._eager(args, kwargs)
            else:
                variant = self._new_variant(key, args, kwargs, slots)
        if variant.eager_reason is not None:
            return self._eager(args, kwargs)
        for t, g in zip(variant.free, variant.free_guards):
            if _tensor_guard(t) != g:  # a tensor read from outside changed shape or dtype
                del self.variants[key]
                for k, v in list(self.dynamic_variants.items()):
                    if v is variant:
                        del self.dynamic_variants[k]
                return self(*args, **kwargs)
        primals = [t for _, _, t in slots] + [v for v in leaves if isinstance(v, Tensor)]
        return run_entry(variant, primals + variant.free)

    def _without_compiling(self, stance: str, key: tuple, args: tuple, kwargs: dict,
                           slots: list) -> Any:
        """Under a stance that forbids compiling (NOTE in _compiler/stance.py): a variant with
        dynamic sizes that serves the call, else None to run it eagerly, or the error of
        "fail_on_recompile"."""
        from retrograd._compiler import symbolic

        variant = self._dynamic_variant(key, args, kwargs, slots,
                                        marks=symbolic.call_marks(args, kwargs), build=False)
        if variant is not None:
            self.variants[key] = variant
            return variant
        if stance == "eager_on_recompile":
            return None
        target = self.module.forward if self.module is not None else self.fn
        code = getattr(target, "__code__", None)
        where = (f"filename: '{code.co_filename}', function name: '{code.co_name}', "
                 f"line number: {code.co_firstlineno}" if code is not None
                 else f"function name: '{self.__name__}'")
        message = f"Detected recompile when torch.compile stance is 'fail_on_recompile'. {where}"
        if self.last_key is not None:
            message += ("\n    triggered by the following guard failure(s):\n    - "
                        + _explain(self.last_key, key))
        raise RuntimeError(message)

    def _new_variant(self, key: tuple, args: tuple, kwargs: dict, slots: list) -> Any:
        last, self.last_key = self.last_key, key
        self.reason = None if last is None else _explain(last, key)
        from retrograd._compiler import symbolic

        marks = symbolic.call_marks(args, kwargs)
        only = None
        if self.dynamic is not True:
            from retrograd._dynamo import config as dynamo_config

            if self.dynamic is None and last is not None and \
                    dynamo_config.automatic_dynamic_shapes:
                # torch's automatic dynamic shapes: a dimension whose size changed is a symbol
                # from now on
                changed = symbolic.changed_dims(last, key)
                if changed - self.auto_dims:
                    self.auto_dims = self.auto_dims | changed
                    log.info("%s: sizes changed; dimensions %s of its tensor arguments are "
                             "dynamic from now on", self.__name__, sorted(self.auto_dims))
            only = (self.auto_dims | marks.dynamic) - marks.static
        if self.dynamic or only:
            dynamic = self._dynamic_variant(key, args, kwargs, slots, only, marks)
            if dynamic is not None:
                self.variants[key] = dynamic
                return dynamic
            if marks.strict - marks.static and self.dynamic_error is not None:
                from retrograd.fx.experimental.symbolic_shapes import ConstraintViolationError

                raise ConstraintViolationError(
                    f"Constraints violated! You marked dimensions "
                    f"{sorted(marks.strict - marks.static)} (tensor argument, dimension) of "
                    f"{self.__name__}'s arguments as dynamic but the function fixes their "
                    f"size: {self.dynamic_error!r}. If you're using mark_dynamic, either remove "
                    f"it or use maybe_mark_dynamic.") from None
        if self.reason is not None:
            log.info("recompiling %s: %s", self.__name__, self.reason)
        if self.compiled >= config.recompile_limit:
            if not self.warned:
                _ws.warn(f"retrograd.compile: {self.__name__} was recompiled "
                         f"{config.recompile_limit} times (config.recompile_limit); "
                         "running it eagerly from now on", stacklevel=3)
                self.warned = True
            variant: Any = _Eager("recompile limit reached")
            self.variants[key] = variant
            return variant
        self._count_compile()
        ikey, variant = self._indexed(key)
        if variant is not None:  # compiled before: no capture (NOTE [Pre-capture index])
            counters["cache_hit"] += 1
            self.variants[key] = variant
            return variant
        try:
            from retrograd._compiler.build import build

            _refuse_torch_function_inputs(args, kwargs)
            variant = build(self.fn, args, kwargs, slots, self.__name__, ikey)
        except Unsupported as e:
            if self.fullgraph:
                raise RuntimeError(
                    f"retrograd.compile(fullgraph=True) cannot capture {self.__name__}: "
                    f"{e.reason}" + (f" at {e.where}" if e.where else "")) from None
            log.info("running %s eagerly for these inputs: %s", self.__name__, e)
            variant = _Eager(str(e))
        except HookError:
            raise
        except Exception as e:  # noqa: BLE001 - eager raises the function's own error again
            log.warning("running %s eagerly: compiling it failed with %r", self.__name__, e)
            variant = _Eager(repr(e))
        self.variants[key] = variant
        return variant


    def _dynamic_variant(self, key: tuple, args: tuple, kwargs: dict, slots: list,
                         only: frozenset | None = None, marks: Any = None,
                         build: bool = True) -> Any:
        """The variant with symbolic sizes that serves this call (NOTE [Dynamic shapes]): one
        built before whose symbolic key the call fits, or a new one; checked against eager
        once per new shape. None when the call's shape needs its own variant. A new variant
        makes every argument dimension a symbol that no parameter's size equals, else (when
        that cannot be captured) the leading dimensions alone; `only` (dynamic=None): the
        dimensions seen changing. `build=False`: only one built before."""
        from retrograd._compiler import symbolic

        marks = marks or symbolic.NO_MARKS
        self.dynamic_error = None
        variant = None
        for dkey, v in self.dynamic_variants.items():
            if v is not None and symbolic.matches(dkey, key, marks):
                variant = v
                break
        else:
            if not build:
                return None
            outside = frozenset(symbolic.outside_sizes(self.fn)) if self.module is None \
                else frozenset()
            for leading_only in ((False, True) if only is None else (False,)):
                found = symbolic.dynamic_key(key, leading_only, outside, only, marks)
                if self.compiled >= config.recompile_limit:
                    break
                if found is None:
                    continue
                if found[0] in self.dynamic_variants:  # tried before, and failed
                    self.dynamic_error = self.dynamic_failures.get(found[0]) or \
                        self.dynamic_error
                    continue
                dkey, sources, sizes = found
                variant = self.dynamic_variants[dkey] = self._build_dynamic(
                    dkey, key, args, kwargs, slots, sources, sizes)
                if variant is not None:
                    break
        if variant is None:
            return None
        if config.verify:
            from retrograd._compiler.verify import check_perturbed

            try:
                check_perturbed(variant, self.fn, args, kwargs, slots, None,
                                compare_grads=not variant.inline_hooks, strict=True)
            except Exception as e:  # noqa: BLE001 - this shape gets a variant of its own
                log.info("the dynamic variant of %s does not serve sizes %s: %s; compiling "
                         "them on their own", self.__name__,
                         [g[1] for g in key[2] if g[0] == "T"], e)
                return None
        return variant

    def _count_compile(self) -> None:
        """One more variant made: against config.recompile_limit, and in counters."""
        self.compiled += 1
        counters["compiles"] += 1

    def _indexed(self, key: tuple) -> tuple:
        """(the pre-capture index key of a call with guard key `key`, the variant indexed under
        it or None) (NOTE [Pre-capture index]); a module's calls are not indexed."""
        if self.module is not None:
            return None, None
        from retrograd._compiler import cache
        from retrograd._compiler.hooks import current_inlineable

        try:
            ikey = cache.index_key(self.fn, key, current_inlineable())
            return ikey, None if ikey is None else cache.lookup(ikey, self.__name__)
        except Exception as e:  # noqa: BLE001 - the index is an optimization: capture
            log.info("pre-capture index of %s not used: %r", self.__name__, e)
            return None, None

    def _build_dynamic(self, dkey: tuple, key: tuple, args: tuple, kwargs: dict, slots: list,
                       sources: list, sizes: list) -> Any:
        from retrograd._compiler import symbolic
        from retrograd._compiler.build import build

        ikey, variant = self._indexed(dkey)
        if variant is not None:
            self._count_compile()
            counters["cache_hit"] += 1
            return variant
        if self.reason is not None:
            log.info("recompiling %s: %s", self.__name__, self.reason)
            self.reason = None  # (logged once, whether this variant or a static one follows)
        fixed = symbolic.fixed_sizes(key)
        primes = symbolic.choose_probes(sizes, fixed)
        other = symbolic.confirming_probes(primes)
        pargs, pkwargs = symbolic.probe_call(args, kwargs, sources, primes)
        oargs, okwargs = symbolic.probe_call(args, kwargs, sources, other)
        try:
            variant = build(self.fn, pargs, pkwargs, slots, self.__name__, ikey,
                            dynamic=(primes, sources, (oargs, okwargs, other)))
        except HookError:
            raise
        except Exception as e:  # noqa: BLE001 - compiled for the call's own sizes instead
            log.info("no dynamic variant of %s: %s; compiling for each shape", self.__name__,
                     e)
            if not isinstance(e, Unsupported):
                # the function failed at the probe sizes: it fixes a size (mark_dynamic's
                # error names it); Unsupported is a form this compiler does not read
                self.dynamic_error = self.dynamic_failures[dkey] = e
            return None
        # counted once built (a failed attempt makes no variant: the call compiles as static)
        self._count_compile()
        log.info("compiled %s with dynamic sizes %s (captured at %s)", self.__name__,
                 [f"s{k}" for k in range(len(sizes))], list(primes))
        return variant


def compile_callable(model: Callable, fullgraph: bool, dynamic: bool | None,
                     backend: Any) -> Any:
    """`dynamic`: True, every argument size a symbol; None, sizes seen changing become symbols
    (torch's automatic dynamic shapes); False, every size guarded (NOTE [Dynamic shapes])."""
    from retrograd.nn.modules.module import Module

    if isinstance(model, Module):
        model._compiled_call_impl = CompiledCallable(model._eager_call, model, fullgraph,
                                                     dynamic, backend)
        return model
    return CompiledCallable(model, None, fullgraph, dynamic, backend)


def reset() -> None:
    """Empty the in-memory caches (generated code and the pre-capture index) and zero the
    counters."""
    from retrograd._compiler import cache

    cache.MEMORY.clear()
    cache.INDEX.clear()
    for k in counters:
        counters[k] = 0
