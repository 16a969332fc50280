"""The Distribution base: shapes, argument and sample validation, expand, and torch's repr."""

from __future__ import annotations

from typing import Any

import retrograd
from retrograd import _warning_site as _ws
from retrograd._tensor import Size, Tensor
from retrograd.distributions import constraints
from retrograd.distributions.utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """Base class: batch_shape and event_shape, sample via rsample where one exists."""

    has_rsample = False
    has_enumerate_support = False
    # on unless Python runs with -O, like torch (which keys it to __debug__)
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument and sample validation on or off for distributions made afterwards
        without an explicit `validate_args`."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = Size(), event_shape: Any = Size(),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                _ws.warn(
                    f"{self.__class__} does not define `arg_constraints`. "
                    + "Please set `arg_constraints = {}` or initialize the distribution "
                    + "with `validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                # a parameter derived lazily (probs from logits) is checked only once it exists
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        raise NotImplementedError

    @property
    def support(self) -> Any:
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with retrograd.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        _ws.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                 FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return retrograd.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = Size()) -> Size:
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """torch's checks of a value given to log_prob/cdf: a tensor, the event shape on the
        right, broadcastable with the batch, and inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs "
                f"{self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            _ws.warn(
                f"{self.__class__} does not define `support` to enable "
                + "sample validation. Please initialize the distribution with "
                + "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if support is None:
            raise AssertionError("support is unexpectedly None")
        if not bool(support.check(value).all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        """A blank instance for expand(); a subclass with its own __init__ must expand itself."""
        if _instance is None and type(self).__init__ != cls.__init__:  # type: ignore[misc]
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls: type, batch_shape: Any, _instance: Any,
                       names: tuple) -> Any:
        """expand() of a distribution whose state is the parameters `names`, tensors of its
        batch shape: each expanded, the rest set up by cls's base constructor."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for name in names:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        super(cls, new).__init__(batch_shape, validate_args=False)  # type: ignore[arg-type]
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return type(self).__name__ + "(" + args + ")"
