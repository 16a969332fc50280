"""trace and trace_module, run eagerly.

torch records the ops of one run on example inputs and replays the recording afterwards.
retrograd runs the function once on the example inputs (and once on each check input), so
that what torch refuses at trace time (inputs or outputs the tracer cannot carry, a call that
fails) is refused here too, and gives the function or module back: later calls run the
Python code, so branches on values or shapes take the path of each call's inputs rather than
the recorded one. torch's check_trace also runs the function again to compare recordings
(drawing random numbers again); with no recording to compare, that run is not made here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from retrograd import _warning_site as _ws
from retrograd._tensor import Tensor
from retrograd.autograd.grad_mode import no_grad
from retrograd.jit._deprecation import warn_export_path, warn_optimize
from retrograd.jit._script import CompilationUnit, ScriptModule
from retrograd.nn.modules.module import Module

__all__ = ["TracerWarning", "TracingCheckError", "is_tracing", "trace", "trace_module"]

_python_cu = CompilationUnit()
_tracing_depth = 0

_NOT_TRACEABLE_OUTPUT = ("Only tensors, lists, tuples of tensors, or dictionary of tensors can "
                         "be output from traced functions")
_DICT_OUTPUT = (
    "Encountering a dict at the output of the tracer might cause the trace to be incorrect, "
    "this is only valid if the container structure does not change based on the module's "
    "inputs. Consider using a constant container instead (e.g. for `list`, use a `tuple` "
    "instead. for `dict`, use a `NamedTuple` instead). If you absolutely need this and know "
    "the side effects, pass strict=False to trace() to allow this behavior.")


class TracerWarning(Warning):
    pass


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error: str | None, tensor_compare_error: str | None,
                 extra_msg: str | None = None) -> None:
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        for part in (graph_diff_error, tensor_compare_error):
            if part is not None:
                self.message += part + "\n"
        super().__init__(self.message)


def is_tracing() -> bool:
    """True while trace or trace_module runs the example inputs (as torch while it records);
    False when the returned function or module is called later, since it runs eagerly."""
    return _tracing_depth > 0


@contextmanager
def _tracing() -> Iterator[None]:
    global _tracing_depth
    _tracing_depth += 1
    try:
        yield
    finally:
        _tracing_depth -= 1


def _type_str(value: Any) -> str:
    """The TorchScript type torch names when refusing a traced input."""
    if isinstance(value, Tensor):
        return "Tensor"
    if value is None:
        return "NoneType"
    if isinstance(value, tuple):
        return "Tuple[" + ", ".join(_type_str(v) for v in value) + "]"
    if isinstance(value, list):
        return f"List[{_type_str(value[0]) if value else 'Tensor'}]"
    if isinstance(value, dict):
        if not value:
            return "Dict[str, Tensor]"
        k, v = next(iter(value.items()))
        return f"Dict[{_type_str(k)}, {_type_str(v)}]"
    return type(value).__name__


def _all_tensors(value: Any) -> bool:
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return all(_all_tensors(v) for v in value)
    if isinstance(value, dict):
        return all(_all_tensors(v) for v in value.values())
    return False


def _check_inputs(args: tuple) -> None:
    if not _all_tensors(args):
        raise RuntimeError(
            f"Type '{_type_str(args)}' cannot be traced. Only Tensors and (possibly nested) "
            "Lists, Dicts, and Tuples of Tensors can be traced")


def _has_dict(value: Any) -> bool:
    if isinstance(value, dict):
        return True
    if isinstance(value, (tuple, list)):
        return any(_has_dict(v) for v in value)
    return False


def _check_output(out: Any, strict: bool) -> None:
    if out is None:
        raise RuntimeError("The traced function didn't return any values! Side-effects are not "
                           "captured in traces, so it would be a no-op.")
    if not _all_tensors(out):
        raise RuntimeError(_NOT_TRACEABLE_OUTPUT)
    if strict and _has_dict(out):
        raise RuntimeError(_DICT_OUTPUT)


def _as_args(example_inputs: Any) -> tuple:
    # a lone tensor (or dict) is one argument; any other iterable is the argument list
    if isinstance(example_inputs, (Tensor, dict)):
        return (example_inputs,)
    if not isinstance(example_inputs, tuple):
        return tuple(example_inputs)
    return example_inputs


def _run_example(func: Callable, args: tuple, kwargs: dict | None, strict: bool) -> None:
    if kwargs is None:
        _check_inputs(args)
    with _tracing():
        out = func(**kwargs) if kwargs is not None else func(*args)
    _check_output(out, strict)


def trace(func: Any, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
          _force_outplace: bool = False, _module_class: Any = None,
          _compilation_unit: CompilationUnit = _python_cu,
          example_kwarg_inputs: dict | None = None, _store_inputs: bool = True) -> Any:
    """torch.jit.trace, run eagerly: calls `func` once on the example inputs and returns
    `func` itself (a module is traced through trace_module)."""
    warn_export_path("trace")
    warn_optimize(optimize)
    if isinstance(func, ScriptModule):
        _ws.warn("The input to trace is already a ScriptModule, tracing it is a no-op. "
                 "Returning the object as is.", stacklevel=2)
        return func
    module = func if isinstance(func, Module) else None
    if module is None and isinstance(getattr(func, "__self__", None), Module) \
            and func.__name__ == "forward":
        module = func.__self__
    if module is not None:
        if example_inputs is None:
            if not isinstance(example_kwarg_inputs, dict):
                raise RuntimeError("example_kwarg_inputs should be a dict")
            example_inputs = example_kwarg_inputs
        if check_inputs is not None:  # trace_module takes them per method, as torch wraps them
            check_inputs = [{"forward": c} for c in check_inputs]
        return trace_module(module, {"forward": example_inputs}, None, check_trace,
                            check_inputs, check_tolerance, strict, _force_outplace,
                            _module_class,
                            example_inputs_is_kwarg=isinstance(example_kwarg_inputs, dict),
                            _store_inputs=_store_inputs)
    if example_kwarg_inputs is None:
        args = _as_args(example_inputs)
    if isinstance(getattr(func, "__self__", None), Module):
        raise AttributeError("trace doesn't support compiling individual module's functions.\n"
                             "Please use trace_module")
    if isinstance(example_kwarg_inputs, dict):
        _run_example(func, (), example_kwarg_inputs, strict)
    else:
        _run_example(func, args, None, strict)
    if check_trace and check_inputs:
        # torch traces again on each check input (with grad off): what fails there fails at
        # trace time
        with no_grad():
            for check in check_inputs:
                _run_example(func, _as_args(check), None, strict)
    return func


def _argument_names(fn: Callable) -> list[str]:
    return [p.name for p in inspect.signature(fn).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


def trace_module(mod: Any, inputs: Any, optimize: Any = None, check_trace: bool = True,
                 check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
                 _force_outplace: bool = False, _module_class: Any = None,
                 _compilation_unit: CompilationUnit = _python_cu,
                 example_inputs_is_kwarg: bool = False, _store_inputs: bool = True) -> Any:
    """torch.jit.trace_module, run eagerly: calls each named method once on its example
    inputs (forward through the module's __call__, with its hooks) and returns `mod`."""
    warn_export_path("trace_method")
    warn_optimize(optimize)
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for method_name, example in inputs.items():
        method = getattr(mod, method_name)
        func = mod if method_name == "forward" else method
        if isinstance(example, dict) and example_inputs_is_kwarg:
            names = _argument_names(method)
            for key in example:
                if key not in names:
                    valid = "[" + ",".join(names) + "]"
                    raise NameError(f"""'{key}' is not in forward() method's arguments,
                         valid arguments name are {valid}""")
            _run_example(func, (), example, strict)
        else:
            _run_example(func, _as_args(example), None, strict)
    if check_trace and check_inputs:
        with no_grad():
            for check in check_inputs:
                for method_name, example in check.items():
                    func = mod if method_name == "forward" else getattr(mod, method_name)
                    _run_example(func, _as_args(example), None, strict)
    return mod
