"""Device-type test instantiation, CPU only: `TestFooCPU` with `test_bar_cpu[_<dtype>]`."""

from __future__ import annotations

import functools
import inspect
import unittest

from tests.conformance.compat.common_utils import dtype_name

_DEVICE = "cpu"


def _set(fn, name: str, value):
    setattr(fn, name, value)
    return fn


def dtypes(*args, **kwargs):
    """Declares the dtypes the test runs with (one test per dtype)."""
    device_type = kwargs.get("device_type", "all")

    def decorator(fn):
        table = dict(getattr(fn, "dtypes", {}))
        table[device_type] = args
        return _set(fn, "dtypes", table)

    return decorator


def dtypesIfCPU(*args):
    return dtypes(*args, device_type="cpu")


def dtypesIfCUDA(*args):
    return dtypes(*args, device_type="cuda")


def dtypesIfMPS(*args):
    return dtypes(*args, device_type="mps")


def onlyCPU(fn):
    return fn


def _skip_on_cpu(reason: str):
    def decorator(fn):
        @functools.wraps(fn)
        def skipped(self, *args, **kwargs):
            raise unittest.SkipTest(reason)

        return skipped

    return decorator


onlyCUDA = _skip_on_cpu("Only runs on cuda")
onlyMPS = _skip_on_cpu("Only runs on mps")


def onlyOn(device_type):
    if device_type == _DEVICE:
        return lambda fn: fn
    return _skip_on_cpu(f"Only runs on {device_type}")


def deviceCountAtLeast(num_required_devices: int):
    """The test receives the list of devices; CPU has one."""

    def decorator(fn):
        @functools.wraps(fn)
        def run(self, devices, *args, **kwargs):
            if num_required_devices > 1:
                raise unittest.SkipTest(f"fewer than {num_required_devices} devices detected")
            return fn(self, [devices], *args, **kwargs)

        return run

    return decorator


def skipMeta(fn):
    return fn


def skipCUDAIfNoCudnn(fn):
    return fn


def largeTensorTest(size, device=None):
    return lambda fn: fn


def instantiate_device_type_tests(generic_test_class, scope, except_for=None, only_for=None,
                                  include_lazy=False, allow_mps=False, allow_xpu=False):
    """Replace the generic class in `scope` by its CPU instantiation."""
    if except_for is not None and "cpu" in except_for:
        return
    if only_for is not None and "cpu" not in only_for:
        return
    name = generic_test_class.__name__
    scope.pop(name, None)
    members = {}
    for attr in list(vars(generic_test_class)):
        if not attr.startswith("test"):
            continue
        test = getattr(generic_test_class, attr)
        for test_name, fn in _device_variants(attr, test):
            members[test_name] = fn
    bases = tuple(b for b in generic_test_class.__bases__)
    ns = {k: v for k, v in vars(generic_test_class).items() if not k.startswith("test")}
    ns.pop("__dict__", None)
    ns.pop("__weakref__", None)
    ns.update(members)
    ns["device_type"] = _DEVICE
    cls = type(name + "CPU", bases, ns)
    cls.__module__ = generic_test_class.__module__
    scope[cls.__name__] = cls


def _device_variants(attr: str, test):
    """(name, function) for each instantiation of one generic test (one per dtype)."""
    table = getattr(test, "dtypes", None)
    if hasattr(test, "parametrize_fn"):
        # parametrized device tests: expand the parameters, then the device
        from tests.conformance.compat.common_utils import _expand_parametrized

        for sub_name, sub_fn in _expand_parametrized(attr, test):
            yield from _device_variants(sub_name, sub_fn)
        return
    if table is None:
        yield f"{attr}_{_DEVICE}", _bind_device(test, None)
        return
    chosen = table.get(_DEVICE, table.get("all", ()))
    for dt in chosen:
        if isinstance(dt, (list, tuple)):
            suffix = "_".join(dtype_name(d) for d in dt)
        else:
            suffix = dtype_name(dt)
        yield f"{attr}_{_DEVICE}_{suffix}", _bind_device(test, dt)


def _bind_device(test, dtype):
    takes_dtype = dtype is not None
    try:
        params = inspect.signature(test).parameters
        takes_device = len(params) > 1 or any(p.kind == p.VAR_POSITIONAL
                                              for p in params.values())
    except (TypeError, ValueError):
        takes_device = True

    @functools.wraps(test)
    def run(self):
        if takes_dtype:
            return test(self, _DEVICE, dtype)
        if takes_device:
            return test(self, _DEVICE)
        return test(self)

    run.__signature__ = inspect.Signature([inspect.Parameter("self",
                                                             inspect.Parameter.POSITIONAL_ONLY)])
    return run
