"""torch._dynamo.exc's exceptions that retrograd raises."""

from __future__ import annotations

from retrograd._higher_order_ops.body import UncapturedHigherOrderOpError

__all__ = ["TorchDynamoException", "InvalidBackend", "UserError", "UncapturedHigherOrderOpError"]


class TorchDynamoException(RuntimeError):
    pass


class InvalidBackend(TorchDynamoException):
    def __init__(self, name: str) -> None:
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` "
                         "for available backends.")


class UserError(TorchDynamoException):
    """A mistake in how export (or a compile call) was asked: the message says which."""
