"""Grids and combinations of 1-d tensors: meshgrid, cartesian_prod, combinations.

All three are torch composites: meshgrid gives expanded views (ExpandBackward0), the other two
stack gathered columns (StackBackward0), so their gradients come from the ops they call.
"""

from __future__ import annotations

import itertools

import numpy as np

from retrograd import _warning_site as _ws
from retrograd._ops.indexing import index_select
from retrograd._ops.registry import register
from retrograd._ops.shape import stack
from retrograd._tensor import Tensor, _wrap

MESHGRID_EMPTY = "meshgrid expects a non-empty TensorList"
MESHGRID_DTYPE = "meshgrid expects all tensors to have the same dtype"
MESHGRID_INDEXING = 'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {}'
MESHGRID_RANK = "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {}"
MESHGRID_NO_INDEXING = ("torch.meshgrid: in an upcoming release, it will be required to pass the "
                        "indexing argument.")
NOT_VECTOR = "Expect a 1D vector, but got shape {}"
NEGATIVE_R = "Expect a non-negative number, but got {}"


def _tensor_list(tensors: tuple) -> list:
    """meshgrid(a, b) and meshgrid([a, b]) alike."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """torch.meshgrid: each 0-d or 1-d tensor viewed along its own dim and expanded to the grid;
    'xy' puts the first two tensors' dims the other way round."""
    given = _tensor_list(tensors)
    if indexing is None:
        _ws.warn(MESHGRID_NO_INDEXING, UserWarning, stacklevel=2)
        indexing = "ij"
    if not given:
        raise RuntimeError(MESHGRID_EMPTY)
    if any(t.dtype != given[0].dtype for t in given):
        raise RuntimeError(MESHGRID_DTYPE)
    for t in given:
        if t.dim() > 1:
            raise RuntimeError(MESHGRID_RANK.format(t))
    if indexing not in ("ij", "xy"):
        raise RuntimeError(MESHGRID_INDEXING.format(indexing))
    n = len(given)
    where = list(range(n))
    if indexing == "xy" and n >= 2:
        where[0], where[1] = 1, 0
    grid = [0] * n
    for t, d in zip(given, where):
        grid[d] = t.numel()
    out = []
    for t, d in zip(given, where):
        shape = [1] * n
        shape[d] = -1
        out.append(t.view(shape).expand(grid))
    return tuple(out)


def _check_vector(t: Tensor) -> None:
    if t.dim() != 1:
        raise RuntimeError(NOT_VECTOR.format(list(t.shape)))


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """torch.cartesian_prod: the rows of every combination of one element per tensor, the last
    tensor varying fastest; a single tensor is returned as it is."""
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], 1)


def _combination_rows(n: int, r: int, with_replacement: bool) -> np.ndarray:
    """The (count, r) index rows in lexicographic order."""
    if r == 2:  # the common case, without a Python loop over pairs
        return np.stack(np.triu_indices(n, 0 if with_replacement else 1), 1)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    flat = np.fromiter(itertools.chain.from_iterable(pick(range(n), r)), np.int64)
    return flat.reshape(-1, r)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """torch.combinations: the length-r combinations of a vector's elements, one per row."""
    _check_vector(input)
    if r < 0:
        raise RuntimeError(NEGATIVE_R.format(r))
    if r == 0:
        return input.new_empty(0)
    rows = _combination_rows(input.shape[0], r, with_replacement).astype(np.int64, copy=False)
    columns = [index_select(input, 0, _wrap(np.ascontiguousarray(rows[:, k])))
               for k in range(r)]
    return stack(columns, 1)


register("meshgrid", meshgrid)
register("cartesian_prod", cartesian_prod)
register("combinations", combinations)
