"""retrograd.hub: torch.hub's cache of downloaded checkpoints and its loading of models from a
directory with a `hubconf.py`.

The cache is torch's own directory (`$TORCH_HOME/hub`, by default `~/.cache/torch/hub`), so a
checkpoint downloaded by either library serves both; checkpoints load with retrograd.load,
which reads torch.save's format without running code from the file. Entry points come from a
local directory (`load(path, name, source="local")`); fetching a GitHub repository's code
(`source="github"`, `list`, `help`) is not built (README, known gaps).
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 128 * 1024
# a checkpoint's file name may end in the first digits of its SHA-256: name-<digits>.ext
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
NO_GITHUB = ("retrograd.hub loads entry points from a local directory only (source='local'): "
             "download or clone the repository and pass its path")

_hub_dir: str | None = None


def _torch_home() -> str:
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, default))


def get_dir() -> str:
    """Where downloaded checkpoints are cached: set_dir's directory, else $TORCH_HOME/hub."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download `url` to `dst` through a temporary file beside it (so an interrupted download
    never leaves a partial `dst`), checking the SHA-256 digest starts with `hash_prefix`."""
    dst = os.path.expanduser(dst)
    tmp = f"{dst}.{uuid.uuid4().hex}.partial"
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    try:
        with urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as u, \
                open(tmp, "wb") as f:
            while chunk := u.read(READ_DATA_CHUNK):
                f.write(chunk)
                if sha256 is not None:
                    sha256.update(chunk)
        if sha256 is not None and hash_prefix is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                   f'"{digest}")')
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location: Any = None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None, weights_only: bool = False
                             ) -> dict[str, Any]:
    """The checkpoint at `url`, downloaded once into `model_dir` (default: get_dir()/checkpoints)
    and loaded with retrograd.load (torch.save's format included; nothing in it runs)."""
    from retrograd.serialization import load

    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    return load(cached, map_location=map_location)


@contextlib.contextmanager
def _on_sys_path(path: str) -> Iterator[None]:
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _hubconf(repo_or_dir: str, source: str) -> Any:
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        raise NotImplementedError(NO_GITHUB)
    path = os.path.join(repo_or_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location("hubconf", path)
    if spec is None or spec.loader is None or not os.path.isfile(path):
        raise FileNotFoundError(f"No {MODULE_HUBCONF} in {repo_or_dir}")
    module = importlib.util.module_from_spec(spec)
    with _on_sys_path(repo_or_dir):
        spec.loader.exec_module(module)
    missing = [pkg for pkg in getattr(module, VAR_DEPENDENCY, None) or []
               if importlib.util.find_spec(pkg) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entry(module: Any, model: str) -> Any:
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def list(github: str, force_reload: bool = False, skip_validation: bool = False,  # noqa: A001
         trust_repo: Any = "check", verbose: bool = True) -> builtins.list[str]:
    """The entry points of a GitHub repository's hubconf.py: not built (load a local copy)."""
    raise NotImplementedError(NO_GITHUB)


def help(github: str, model: str, force_reload: bool = False,  # noqa: A001
         skip_validation: bool = False, trust_repo: Any = "check") -> str:
    """An entry point's docstring from a GitHub repository: not built (load a local copy)."""
    raise NotImplementedError(NO_GITHUB)


def load(repo_or_dir: str, model: str, *args: Any, source: str = "github",
         trust_repo: Any = "check", force_reload: bool = False, verbose: bool = True,
         skip_validation: bool = False, **kwargs: Any) -> Any:
    """An entry point of `repo_or_dir`'s hubconf.py called with args and kwargs (source
    "local"; a GitHub repository must be downloaded first)."""
    return _entry(_hubconf(repo_or_dir, source.lower()), model)(*args, **kwargs)

