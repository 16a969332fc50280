"""Where torch keeps its compiled internals, retrograd keeps the few names code reaches for
there: the node classes (`_C._functions`) and the saved-tensor type (`_C._autograd`)."""

from retrograd._C import _autograd, _functions  # noqa: F401
