"""TestCase, parametrization and the small helpers PyTorch's test files import from
`torch.testing._internal.common_utils`, written for whichever library `torch` is bound to."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import random
import re
import sys
import textwrap
import unittest
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import torch

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform == "darwin"
IS_LINUX = sys.platform.startswith("linux")
IS_FBCODE = False
IS_SANDCASTLE = False
IS_PPC = False
IS_S390X = False
IS_ARM64 = False
IS_JETSON = False
IS_REMOTE_GPU = False
TEST_WITH_ROCM = False
TEST_WITH_ASAN = False
TEST_WITH_TSAN = False
TEST_WITH_UBSAN = False
TEST_WITH_SLOW = False
TEST_WITH_TORCHDYNAMO = False
TEST_WITH_TORCHINDUCTOR = False
TEST_WITH_CROSSREF = False
TEST_WITH_SLOW_GRADCHECK = False
TEST_CUDA = False
TEST_MPS = False
TEST_XPU = False
TEST_NUMPY = True
TEST_SCIPY = False
SEED = 1234
# where the test file lives: expect files are looked up beside it
TEST_DIR = os.environ.get("RETROGRAD_PYTORCH_TESTS", "")


def set_rng_seed(seed: int = SEED) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)


_ALIASES = {"cdouble": "complex128", "cfloat": "complex64", "chalf": "complex32"}


def dtype_name(dtype) -> str:
    """float32 for torch.float32: the suffix of instantiated test names (a dtype the library
    lacks is named as torch names it)."""
    name = str(dtype).split(".")[-1].rstrip(">").rstrip("()")
    return _ALIASES.get(name, name)


# --- parametrization -------------------------------------------------------------------------


class subtest:
    """One explicitly named (or decorated) value set of @parametrize."""

    def __init__(self, arg_values, name=None, decorators=None):
        self.arg_values = arg_values
        self.name = name
        self.decorators = decorators or []


class parametrize:
    """@parametrize("x, y", [(1, 2), subtest((3, 4), name="big")], name_fn=None)"""

    def __init__(self, arg_str: str, arg_values, name_fn=None):
        self.arg_names = [s.strip() for s in arg_str.split(",") if s.strip()]
        self.arg_values = arg_values
        self.name_fn = name_fn

    def _value_name(self, idx: int, name: str, value) -> str:
        if isinstance(value, torch.dtype):
            return dtype_name(value)
        if isinstance(value, torch.device):
            return str(value)
        if isinstance(value, torch.layout):  # retrograd's is a str: named as torch's objects are
            return f"{name}{idx}"
        if isinstance(value, (int, float, str)):
            return f"{name}_{str(value).replace('.', '_')}"
        return f"{name}{idx}"

    def variants(self):
        """(suffix, kwargs, decorators) for each value set."""
        for idx, values in enumerate(self.arg_values):
            name, decorators = None, []
            if isinstance(values, subtest):
                name, decorators, values = values.name, values.decorators, values.arg_values
            values = list(values) if len(self.arg_names) > 1 else [values]
            if name is None:
                if self.name_fn is not None:
                    name = self.name_fn(*values)
                else:
                    name = "_".join(self._value_name(idx, a, v)
                                    for a, v in zip(self.arg_names, values))
            yield name, dict(zip(self.arg_names, values)), decorators

    def __call__(self, fn):
        previous = getattr(fn, "parametrize_fn", None)
        layers = [self] + (previous or [])

        @functools.wraps(fn)
        def generic(self_, *args, **kwargs):
            return fn(self_, *args, **kwargs)

        generic.parametrize_fn = layers
        generic.__wrapped_test__ = getattr(fn, "__wrapped_test__", fn)
        return generic


def _expand_parametrized(attr: str, test):
    """(name, function) for every combination of a test's @parametrize layers."""
    layers = test.parametrize_fn
    base = test.__wrapped_test__
    combos = [("", {}, [])]
    for layer in layers:
        combos = [(f"{suffix}_{s}" if suffix else s, {**kw, **k}, decs + d)
                  for suffix, kw, decs in combos for s, k, d in layer.variants()]
    for suffix, kwargs, decorators in combos:
        def run(self, *args, _kwargs=kwargs, **extra):
            return base(self, *args, **_kwargs, **extra)

        functools.update_wrapper(run, base)
        del run.__wrapped__  # keep the signature the device layer sees: (self, *args)
        for attr_name in ("dtypes",):
            if hasattr(test, attr_name):
                setattr(run, attr_name, getattr(test, attr_name))
        for decorator in decorators:
            run = decorator(run)
        yield (f"{attr}_{suffix}" if suffix else attr), run


def instantiate_parametrized_tests(generic_cls):
    for attr in list(vars(generic_cls)):
        test = getattr(generic_cls, attr)
        if not hasattr(test, "parametrize_fn"):
            continue
        delattr(generic_cls, attr)
        for name, fn in _expand_parametrized(attr, test):
            setattr(generic_cls, name, fn)
    return generic_cls


# --- skips and marks -------------------------------------------------------------------------


def _skip_if(condition: bool, reason: str):
    return unittest.skip(reason) if condition else (lambda fn: fn)


def skipIfTorchDynamo(msg="test doesn't currently work with dynamo"):
    if callable(msg) and not isinstance(msg, str):
        return msg
    return lambda fn: fn


def xfailIfTorchDynamo(fn):
    return fn


def xfailIfS390X(fn):
    return fn


def skipIfMPS(fn):
    return fn


def skipIfNoLapack(fn):
    return fn


def skipIfWindows(fn=None, msg=""):
    return fn if fn is not None else (lambda f: f)


def skipIfRocm(fn=None, msg=""):
    return fn if fn is not None else (lambda f: f)


def skipIfXpu(fn=None, msg=""):
    return fn if fn is not None else (lambda f: f)


def skipIfNoSciPy(fn):
    return unittest.skip("SciPy not used by the conformance run")(fn)


def slowTest(fn):
    """PyTorch skips slow tests unless asked; so does this runner (on both libraries)."""
    return unittest.skip("slow test")(fn)


def scoped_load_inline(fn):
    """C++ extensions: nothing to load into a Python library."""
    return unittest.skip("loads a C++ extension")(fn)


@contextlib.contextmanager
def disable_gc():
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextlib.contextmanager
def set_warn_always_context(new_val: bool):
    old = torch.is_warn_always_enabled()
    torch.set_warn_always(new_val)
    try:
        yield
    finally:
        torch.set_warn_always(old)


def run_tests(argv=None):
    unittest.main(argv=argv)


def gradcheck(fn, inputs, **kwargs):
    """PyTorch's test default: batched-grad check and fast mode on."""
    kwargs = {"check_batched_grad": True, "fast_mode": True, **kwargs}
    return torch.autograd.gradcheck(fn, inputs, **kwargs)


def gradgradcheck(fn, inputs, grad_outputs=None, **kwargs):
    kwargs = {"check_batched_grad": True, "fast_mode": True, **kwargs}
    return torch.autograd.gradgradcheck(fn, inputs, grad_outputs, **kwargs)


# --- comparison ------------------------------------------------------------------------------

# (rtol, atol) by dtype name: torch.testing's defaults
_TOLERANCES = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
    "float8_e4m3fn": (1.25e-1, 1e-5), "float8_e5m2": (2.5e-1, 1e-5),
}


def _is_tensor(x) -> bool:
    return isinstance(x, torch.Tensor)


def _to_numpy(x) -> np.ndarray:
    if _is_tensor(x):
        while hasattr(x, "elem") and _is_tensor(x.elem):  # wrapper subclasses hold their data
            x = x.elem
        x = x.detach()
        if x.dtype in (torch.bfloat16,) or "float8" in str(x.dtype):
            x = x.to(torch.float64)
        return np.asarray(x.cpu().numpy() if hasattr(x, "cpu") else x.numpy())
    return np.asarray(x)


def _dtype_key(x) -> str:
    if _is_tensor(x):
        return dtype_name(x.dtype)
    if isinstance(x, np.ndarray):
        return str(x.dtype)
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int64"
    if isinstance(x, complex):
        return "complex128"
    return "float64"


class TestCase(unittest.TestCase):
    precision = 1e-5
    rel_tol = 0
    _default_dtype_check_enabled = False

    def setUp(self):
        set_rng_seed()
        self._grad_mode_before = torch.is_grad_enabled()

    def tearDown(self):
        torch.set_grad_enabled(self._grad_mode_before)

    # --- assertEqual, as torch.testing compares -------------------------------------------

    def _compare(self, x, y, *, atol, rtol, equal_nan, exact_dtype, path: str) -> str | None:
        """None when equal, else a message."""
        if x is None or y is None:
            return None if x is None and y is None else f"{path}: {x!r} != {y!r}"
        if _is_tensor(x) or _is_tensor(y) or isinstance(x, np.ndarray) \
                or isinstance(y, np.ndarray):
            return self._compare_tensors(x, y, atol=atol, rtol=rtol, equal_nan=equal_nan,
                                         exact_dtype=exact_dtype, path=path)
        if isinstance(x, str) or isinstance(y, str):
            return None if x == y else f"{path}: {x!r} != {y!r}"
        if isinstance(x, (bool, int, float, complex, np.number)) and \
                isinstance(y, (bool, int, float, complex, np.number)):
            return self._compare_tensors(np.asarray(x), np.asarray(y), atol=atol, rtol=rtol,
                                         equal_nan=equal_nan, exact_dtype=False, path=path)
        if isinstance(x, Mapping) and isinstance(y, Mapping):
            if set(x) != set(y):
                return f"{path}: keys differ: {sorted(map(str, x))} != {sorted(map(str, y))}"
            for k in x:
                msg = self._compare(x[k], y[k], atol=atol, rtol=rtol, equal_nan=equal_nan,
                                    exact_dtype=exact_dtype, path=f"{path}[{k!r}]")
                if msg:
                    return msg
            return None
        if isinstance(x, (Sequence, set, frozenset)) and isinstance(y, (Sequence, set, frozenset)) \
                and not isinstance(x, (set, frozenset)):
            x_list, y_list = list(x), list(y)
            if len(x_list) != len(y_list):
                return f"{path}: lengths differ: {len(x_list)} != {len(y_list)}"
            for i, (a, b) in enumerate(zip(x_list, y_list)):
                msg = self._compare(a, b, atol=atol, rtol=rtol, equal_nan=equal_nan,
                                    exact_dtype=exact_dtype, path=f"{path}[{i}]")
                if msg:
                    return msg
            return None
        return None if x == y else f"{path}: {x!r} != {y!r}"

    def _compare_tensors(self, x, y, *, atol, rtol, equal_nan, exact_dtype, path):
        if exact_dtype and _is_tensor(x) and _is_tensor(y) and x.dtype != y.dtype:
            return f"{path}: dtypes differ: {x.dtype} != {y.dtype}"
        if _is_tensor(x) and _is_tensor(y) and x.layout != y.layout:
            return f"{path}: layouts differ"
        a, b = _to_numpy(x), _to_numpy(y)
        # a number compared with a one-element tensor compares the element (torch's relaxed
        # number pair); otherwise shapes must match exactly
        if a.shape != b.shape:
            if not (a.size == 1 and b.size == 1 and (np.ndim(a) == 0 or np.ndim(b) == 0)
                    and not (_is_tensor(x) and _is_tensor(y))):
                return f"{path}: shapes differ: {a.shape} != {b.shape}"
            a, b = a.reshape(()), b.reshape(())
        if rtol is None or atol is None:
            keys = [_dtype_key(v) for v in (x, y)]
            tols = [_TOLERANCES.get(k, (0.0, 0.0)) for k in keys]
            rtol = max(t[0] for t in tols) if rtol is None else rtol
            atol = max(t[1] for t in tols) if atol is None else atol
        if a.dtype.kind == "b" or b.dtype.kind == "b":
            a, b = a.astype(np.int64), b.astype(np.int64)
        if a.dtype.kind in "iu" and b.dtype.kind in "iu":
            equal = np.array_equal(a, b)
        else:
            a, b = a.astype(np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64), \
                b.astype(np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64)
            with np.errstate(invalid="ignore"):
                equal = bool(np.all(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))
        if equal:
            return None
        return f"{path}: Tensor-likes are not close!\n{a}\n{b}"

    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, equal_nan=True,
                    exact_dtype=True, exact_device=False, exact_layout=False,
                    exact_stride=False, exact_is_coalesced=False, prec=None):
        if prec is not None and atol is None:
            atol, rtol = prec, 0
        if (atol is None) != (rtol is None):
            atol = 0.0 if atol is None else atol
            rtol = 0.0 if rtol is None else rtol
        if isinstance(x, type) or isinstance(y, type):
            if x is not y:
                self.fail(msg or f"{x!r} is not {y!r}")
            return
        failure = self._compare(x, y, atol=atol, rtol=rtol, equal_nan=equal_nan,
                                exact_dtype=exact_dtype, path="value")
        if failure:
            message = failure if msg is None else f"{failure}\n{msg() if callable(msg) else msg}"
            raise self.failureException(message)

    def assertNotEqual(self, x, y, msg=None, *, atol=None, rtol=None, **kwargs):
        try:
            self.assertEqual(x, y, msg, atol=atol, rtol=rtol, **kwargs)
        except self.failureException:
            return
        raise self.failureException(msg or f"{x!r} == {y!r}")

    # --- expectations ------------------------------------------------------------------------

    def assertExpectedInline(self, actual, expect, skip=0, ignore_comments=False,
                             ignore_empty_lines=False):
        actual = actual if isinstance(actual, str) else str(actual)
        self.assertMultiLineEqual(textwrap.dedent(expect).strip("\n"), actual.strip("\n"))

    def assertExpected(self, s, subname=None):
        name = f"{type(self).__name__}.{self._testMethodName}"
        if subname:
            name += "-" + subname
        path = os.path.join(TEST_DIR, "expect", name + ".expect")
        with open(path) as f:
            expected = f.read()
        self.assertMultiLineEqual(expected.strip("\n"), s.strip("\n"))

    def assertNotWarn(self, callable, msg=""):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            with set_warn_always_context(True):
                callable()
            self.assertTrue(len(ws) == 0, msg)

    @contextlib.contextmanager
    def assertWarnsOnceRegex(self, category, regex=""):
        pattern = re.compile(regex)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            with set_warn_always_context(True):
                yield
            if len(ws) == 0:
                self.fail("no warning caught")
            self.assertTrue(any(type(w.message) is category for w in ws))
            self.assertTrue(any(re.match(pattern, str(w.message)) for w in ws),
                            f"{pattern}, {[w.message for w in ws]}")

    @staticmethod
    def runWithPytorchAPIUsageStderr(code: str) -> str:
        """Run `code` in a fresh interpreter (with `torch` bound as in this run); its stderr."""
        import subprocess

        backend = os.environ.get("RETROGRAD_CONFORMANCE_BACKEND", "torch")
        prefix = f"from tests.conformance import binding; binding.install({backend!r})\n"
        env = dict(os.environ, PYTORCH_API_USAGE_STDERR="1")
        done = subprocess.run([sys.executable, "-c", prefix + code], env=env,
                              capture_output=True, text=True, timeout=60)
        return done.stderr

    def assertLeaksNoCudaTensors(self, name=None):
        return contextlib.nullcontext()

    def compare_with_numpy(self, torch_fn, np_fn, tensor_like, **kwargs):
        t = torch.as_tensor(tensor_like)
        self.assertEqual(torch_fn(t), torch.as_tensor(np_fn(t.numpy())), **kwargs)


def make_tensor(*args, **kwargs):
    return torch.testing.make_tensor(*args, **kwargs)


def freeze_rng_state():
    state = torch.get_rng_state()

    @contextlib.contextmanager
    def frozen():
        try:
            yield
        finally:
            torch.set_rng_state(state)

    return frozen()


def noncontiguous_like(t):
    return t.repeat_interleave(2, dim=-1)[..., ::2] if t.ndim else t.clone()


def is_iterable(obj) -> bool:
    try:
        iter(obj)
        return True
    except TypeError:
        return False


__all__ = [n for n in dir() if not n.startswith("_") and n not in ("math",)]
