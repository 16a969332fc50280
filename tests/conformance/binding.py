"""Bind the name `torch` for a conformance run (NOTE [Conformance runner]).

`install("torch")`: real torch, with `torch.testing._internal` served by our stand-in (compat/).
`install("retrograd")`: `torch` and every `torch.<sub>` are retrograd's modules, seen through
proxies that turn a missing name into a `Missing` placeholder instead of an ImportError, so one
absent API fails only the tests that use it (their reason then names it), not the whole file.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

COMPAT = "tests.conformance.compat"
INTERNAL = "torch.testing._internal"

# True while test files are imported: decorators and module-level guards built from missing
# names must not stop the import, so calls then return another placeholder.
importing = True


class MissingAPI(NotImplementedError):
    """A test used a torch name retrograd does not have."""


class _MissingBase:
    _missing_name = "?"

    def __init__(self, *args, **kwargs):
        raise MissingAPI(f"missing: {self._missing_name}")


class Missing:
    """Stands for `torch.<name>` that retrograd lacks. Falsy; any use at test time raises."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Missing(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        if importing:
            return Missing(f"{self._name}()")
        raise MissingAPI(f"missing: {self._name}")

    def __bool__(self) -> bool:
        return False

    def _refuse(self, *args):
        if importing:
            return Missing(f"{self._name}(...)")
        raise MissingAPI(f"missing: {self._name}")

    __iter__ = __lt__ = __le__ = __gt__ = __ge__ = __add__ = __radd__ = __sub__ = __mul__ = \
        __neg__ = __index__ = __int__ = __float__ = __len__ = __getitem__ = _refuse

    def __enter__(self):
        raise MissingAPI(f"missing: {self._name}")

    def __exit__(self, *exc):
        return False

    def __mro_entries__(self, bases):
        return (type(f"Missing_{self._name.rsplit('.', 1)[-1]}", (_MissingBase,),
                     {"_missing_name": self._name}),)

    def __repr__(self) -> str:
        return f"<missing {self._name}>"


class ModuleProxy(types.ModuleType):
    """A retrograd module seen as `torch.<sub>`: attributes forward to it; missing names are
    submodules when retrograd has them, placeholders otherwise."""

    def __init__(self, torch_name: str, real: types.ModuleType | None) -> None:
        super().__init__(torch_name)
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_torch_name", torch_name)
        if real is not None:  # `torch.__name__` says which library answers
            object.__setattr__(self, "__name__", real.__name__)
            object.__setattr__(self, "__file__", getattr(real, "__file__", None))
        object.__setattr__(self, "__path__", [])

    def __getattr__(self, attr: str):
        real = object.__getattribute__(self, "_real")
        torch_name = object.__getattribute__(self, "_torch_name")
        if real is not None:
            try:
                return getattr(real, attr)
            except AttributeError:
                pass
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        if real is not None:  # a retrograd submodule not imported yet
            try:
                found = importlib.util.find_spec(f"{real.__name__}.{attr}") is not None
            except (ImportError, AttributeError, ValueError):
                found = False
            if found:
                return importlib.import_module(f"{torch_name}.{attr}")
        return Missing(f"{torch_name}.{attr}")

    def __setattr__(self, attr: str, value) -> None:
        real = object.__getattribute__(self, "_real")
        if isinstance(value, ModuleProxy) and real is not None and \
                not isinstance(vars(real).get(attr), (types.ModuleType, type(None))):
            # importing a submodule whose name the package rebinds (torch.autograd.gradcheck
            # is a function there) must not replace the package's attribute, as in torch
            return
        if real is not None and attr not in ("__spec__", "__loader__", "__package__"):
            setattr(real, attr, value)
        else:
            object.__setattr__(self, attr, value)

    def __delattr__(self, attr: str) -> None:
        real = object.__getattribute__(self, "_real")
        delattr(real if real is not None else self, attr)

    def __dir__(self):
        real = object.__getattribute__(self, "_real")
        return dir(real) if real is not None else []


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, backend: str) -> None:
        self.backend = backend

    def find_spec(self, fullname, path, target=None):
        if fullname == INTERNAL or fullname.startswith(INTERNAL + "."):
            return importlib.util.spec_from_loader(fullname, self)
        if self.backend == "retrograd" and (fullname == "torch" or fullname.startswith("torch.")):
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        name = spec.name
        if name == INTERNAL or name.startswith(INTERNAL + "."):
            target = COMPAT + name[len(INTERNAL):]
            return importlib.import_module(target)
        real_name = "retrograd" + name[len("torch"):]
        try:
            real = importlib.import_module(real_name)
        except ImportError as e:
            if e.name is not None and not real_name.startswith(e.name):
                raise
            real = None
        return ModuleProxy(name, real)

    def exec_module(self, module):
        pass


def install(backend: str) -> None:
    """Put the finder first on sys.meta_path (once per process)."""
    if backend not in ("torch", "retrograd"):
        raise ValueError(f"unknown backend {backend!r}")
    if backend == "torch":
        # torch's own modules import a few of its testing internals (checkpoint imports
        # logging_tensor): import them first so torch itself keeps the real ones
        import torch.utils.checkpoint  # noqa: F401
    sys.meta_path.insert(0, _Finder(backend))
