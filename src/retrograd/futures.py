"""retrograd.futures: torch.futures.Future, minimal and single-threaded.

A Future holds a value (or an exception) once set. Nothing runs in the background here: a
future made by a distributed Work completes when someone waits on it (or on the Work), and
waiting on a future made by then() first waits on its parent, so a chain of callbacks runs in
order on the waiting thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
S = TypeVar("S")

__all__ = ["Future", "collect_all", "wait_all"]


class Future(Generic[T]):
    def __init__(self, *, devices: Any = None) -> None:
        self._done = False
        self._value: Any = None
        self._exception: BaseException | None = None
        self._callbacks: list[Callable] = []
        # called by wait() to drive completion (a Work's wait, or the parent future's)
        self._wait_hook: Callable[[], Any] | None = None

    def done(self) -> bool:
        return self._done

    def wait(self) -> T:
        if not self._done:
            if self._wait_hook is None:
                raise RuntimeError("wait() on a Future that nothing will complete")
            self._wait_hook()
            if not self._done:
                raise RuntimeError("the Future was not completed by the work it waits for")
        return self.value()

    def value(self) -> T:
        if not self._done:
            raise RuntimeError("Future.value() called before the Future completed")
        if self._exception is not None:
            raise self._exception
        return self._value

    def set_result(self, result: T) -> None:
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        if not isinstance(result, BaseException):
            raise TypeError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, value: Any, exc: BaseException | None) -> None:
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._value, self._exception, self._done = value, exc, True
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback: Callable[[Future[T]], None]) -> None:
        if self._done:
            callback(self)
        else:
            self._callbacks.append(callback)

    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A future for callback(self), run once this one completes (its exception, if it
        raises, is the new future's)."""
        child: Future[S] = Future()

        def run(parent: Future[T]) -> None:
            try:
                out = callback(parent)
            except Exception as e:  # noqa: BLE001 - carried to whoever waits on the child
                child.set_exception(e)
                return
            child.set_result(out)

        def drive() -> None:
            try:
                self.wait()
            except Exception:  # noqa: BLE001 - the callback sees it through parent.value()
                pass

        child._wait_hook = drive
        self.add_done_callback(run)
        return child


def collect_all(futures: list[Future]) -> Future[list[Future]]:
    out: Future[list[Future]] = Future()

    def drive() -> None:
        for f in futures:
            try:
                f.wait()
            except Exception:  # noqa: BLE001 - each future keeps its own exception
                pass
        if not out.done():
            out.set_result(list(futures))

    out._wait_hook = drive
    return out


def wait_all(futures: list[Future]) -> list:
    return [f.wait() for f in futures]
