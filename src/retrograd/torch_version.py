"""TorchVersion: a version string that also compares with tuples and version objects.

`retrograd.__version__ >= (0, 1)` and `>= "0.1"` compare as versions, not as text. Version
strings are parsed here (release numbers, a/b/rc pre-releases, .post, .dev, +local), so no
packaging library is needed; a string that is no version compares as plain text, as torch's
does when its parser refuses one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["TorchVersion"]

_VERSION = re.compile(
    r"^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*)"
    r"(?:[-_.]?(a|alpha|b|beta|c|rc|pre|preview)[-_.]?(\d*))?"
    r"(?:(?:-(\d+))|(?:[-_.]?(?:post|rev|r)[-_.]?(\d*)))?"
    r"(?:[-_.]?dev[-_.]?(\d*))?"
    r"(?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$", re.IGNORECASE)
_PRE = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc",
        "preview": "rc"}
_INF = float("inf")


class _InvalidVersion(ValueError):
    pass


def _key(text: str) -> tuple:
    """A sort key ordering versions as PEP 440 does."""
    m = _VERSION.match(text)
    if m is None:
        raise _InvalidVersion(text)
    epoch, release, pre_l, pre_n, post_a, post_b, dev, local = m.groups()
    nums = [int(x) for x in release.split(".")]
    while len(nums) > 1 and nums[-1] == 0:  # 1.0.0 == 1.0 == 1
        nums.pop()
    post = post_a if post_a is not None else post_b
    has_post = post is not None
    if pre_l is None and not has_post and dev is not None:
        pre: tuple = (-_INF,)  # 1.0.dev0 sorts before 1.0a0
    elif pre_l is None:
        pre = (_INF,)
    else:
        pre = ({"a": 0, "b": 1, "rc": 2}[_PRE[pre_l.lower()]], int(pre_n or 0))
    post_k = (int(post or 0),) if has_post else (-_INF,)
    dev_k = (int(dev or 0),) if dev is not None else (_INF,)
    local_k = tuple((1, int(p), "") if p.isdigit() else (0, 0, p.lower())
                    for p in re.split(r"[-_.]", local)) if local else ()
    return (int(epoch or 0), tuple(nums), pre, post_k, dev_k, local_k)


def _other_key(other: Any) -> tuple:
    if isinstance(other, str):
        return _key(other)
    if hasattr(other, "release") and hasattr(other, "public"):  # a packaging Version
        return _key(str(other))
    if isinstance(other, Iterable):
        return _key(".".join(str(item) for item in other))
    raise _InvalidVersion(other)


class TorchVersion(str):
    """A str that compares with versions, tuples ((0, 1, 2)) and version strings."""

    __slots__ = ()

    def _compare(self, other: Any, method: str) -> bool:
        try:
            a, b = _key(self), _other_key(other)
        except _InvalidVersion:
            return getattr(str, method)(self, other)
        return getattr(a, method)(b)

    def __gt__(self, other: Any) -> bool:  # type: ignore[override]
        return self._compare(other, "__gt__")

    def __lt__(self, other: Any) -> bool:  # type: ignore[override]
        return self._compare(other, "__lt__")

    def __ge__(self, other: Any) -> bool:  # type: ignore[override]
        return self._compare(other, "__ge__")

    def __le__(self, other: Any) -> bool:  # type: ignore[override]
        return self._compare(other, "__le__")

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        return self._compare(other, "__eq__")

    __hash__ = str.__hash__


from retrograd.version import __version__ as _internal_version  # noqa: E402

__version__ = TorchVersion(_internal_version)
