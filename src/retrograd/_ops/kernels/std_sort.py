"""The order GNU libstdc++'s std::sort leaves a row in, for ops whose ties torch breaks with it.

torch's CPU mode sorts (value, index) pairs by value alone with std::sort, which is not stable
(introsort: median-of-three quicksort down to runs of 16, heapsort past a depth limit, then
insertion sort), and reports the index of the element the sort happened to leave last among
equal values. With NaN, whose comparisons are all false, equal values need not even end up
adjacent. To give torch's indices (and, with NaN, its values) this module replays that algorithm
step for step on one row, in plain Python; callers use it only where a stable order would give
another answer (see kernels/statistics.py).
"""

from __future__ import annotations

_THRESHOLD = 16  # libstdc++'s _S_threshold


def std_sort_order(values: list) -> list:
    """The positions of `values` in the order std::sort(..., a < b) leaves them."""
    keys = list(values)
    order = list(range(len(keys)))
    n = len(keys)
    if n > 1:
        _introsort(keys, order, 0, n, 2 * (n.bit_length() - 1))
        _final_insertion_sort(keys, order, 0, n)
    return order


def _swap(keys: list, order: list, i: int, j: int) -> None:
    keys[i], keys[j] = keys[j], keys[i]
    order[i], order[j] = order[j], order[i]


def _introsort(keys: list, order: list, first: int, last: int, depth: int) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_sort(keys, order, first, last)
            return
        depth -= 1
        cut = _partition_pivot(keys, order, first, last)
        _introsort(keys, order, cut, last, depth)
        last = cut


def _partition_pivot(keys: list, order: list, first: int, last: int) -> int:
    mid = first + (last - first) // 2
    _median_to_first(keys, order, first, first + 1, mid, last - 1)
    # partition [first + 1, last) around the pivot now at first, without bounds checks
    pivot = keys[first]
    lo, hi = first + 1, last
    while True:
        while keys[lo] < pivot:
            lo += 1
        hi -= 1
        while pivot < keys[hi]:
            hi -= 1
        if not lo < hi:
            return lo
        _swap(keys, order, lo, hi)
        lo += 1


def _median_to_first(keys: list, order: list, result: int, a: int, b: int, c: int) -> None:
    ka, kb, kc = keys[a], keys[b], keys[c]
    if ka < kb:
        pick = b if kb < kc else (c if ka < kc else a)
    else:
        pick = a if ka < kc else (c if kb < kc else b)
    _swap(keys, order, result, pick)


def _final_insertion_sort(keys: list, order: list, first: int, last: int) -> None:
    if last - first > _THRESHOLD:
        _insertion_sort(keys, order, first, first + _THRESHOLD)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(keys, order, i)
    else:
        _insertion_sort(keys, order, first, last)


def _insertion_sort(keys: list, order: list, first: int, last: int) -> None:
    for i in range(first + 1, last):
        if keys[i] < keys[first]:
            k, o = keys[i], order[i]
            keys[first + 1:i + 1] = keys[first:i]
            order[first + 1:i + 1] = order[first:i]
            keys[first], order[first] = k, o
        else:
            _linear_insert(keys, order, i)


def _linear_insert(keys: list, order: list, last: int) -> None:
    k, o = keys[last], order[last]
    prev = last - 1
    while k < keys[prev]:
        keys[last], order[last] = keys[prev], order[prev]
        last = prev
        prev -= 1
    keys[last], order[last] = k, o


# --- heapsort (std::partial_sort over the whole range) ------------------------------------------


def _heap_sort(keys: list, order: list, first: int, last: int) -> None:
    n = last - first
    if n >= 2:
        parent = (n - 2) // 2
        while True:
            _adjust_heap(keys, order, first, parent, n, keys[first + parent],
                         order[first + parent])
            if parent == 0:
                break
            parent -= 1
    while last - first > 1:
        last -= 1
        k, o = keys[last], order[last]
        keys[last], order[last] = keys[first], order[first]
        _adjust_heap(keys, order, first, 0, last - first, k, o)


def _adjust_heap(keys: list, order: list, first: int, hole: int, n: int, k, o) -> None:
    top = hole
    child = hole
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if keys[first + child] < keys[first + child - 1]:
            child -= 1
        keys[first + hole], order[first + hole] = keys[first + child], order[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        keys[first + hole], order[first + hole] = keys[first + child - 1], order[first + child - 1]
        hole = child - 1
    # push the saved value back up towards top
    parent = (hole - 1) // 2
    while hole > top and keys[first + parent] < k:
        keys[first + hole], order[first + hole] = keys[first + parent], order[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    keys[first + hole], order[first + hole] = k, o
