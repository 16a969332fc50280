"""Collectives of picklable Python objects (torch's *_object functions): each object travels
as its pickle, preceded by an exchange of the pickles' lengths."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from retrograd.distributed._core import ProcessGroup, Work, _member

__all__ = ["all_gather_object", "broadcast_object_list", "gather_object", "recv_object_list",
           "scatter_object_list", "send_object_list"]


def _wait(pg: ProcessGroup, req: Any, op: str) -> None:
    Work([req], op, "all ranks", collective=True).wait()


def _pickle(obj: Any) -> np.ndarray:
    return np.frombuffer(pickle.dumps(obj), np.uint8)


def _unpickle(buf: np.ndarray) -> Any:
    return pickle.loads(buf.tobytes())


def _gathered_bytes(pg: ProcessGroup, data: np.ndarray, root: int | None) -> tuple:
    """Every rank's bytes (at `root`, or everywhere when root is None) and their lengths."""
    n = pg.size()
    sizes = np.empty(n, np.int64)
    _wait(pg, pg.comm.Iallgather(np.array([data.size], np.int64), sizes), "allgather")
    recv = np.empty(int(sizes.sum()), np.uint8)
    counts = (sizes.tolist(), np.cumsum([0, *sizes[:-1]]).tolist())
    if root is None:
        _wait(pg, pg.comm.Iallgatherv(data, [recv, counts]), "allgather")
    else:
        _wait(pg, pg.comm.Igatherv(data, [recv, counts], root=root), "gather")
    return recv, sizes


def _split(recv: np.ndarray, sizes: np.ndarray) -> list:
    bounds = np.cumsum([0, *sizes])
    return [_unpickle(recv[bounds[i]:bounds[i + 1]]) for i in range(len(sizes))]


def all_gather_object(object_list: list, obj: Any, group: Any = None) -> None:
    pg = _member(group)
    if pg is None:
        return
    recv, sizes = _gathered_bytes(pg, _pickle(obj), None)
    object_list[:pg.size()] = _split(recv, sizes)


def gather_object(obj: Any, object_gather_list: list | None = None, dst: int | None = None,
                  group: Any = None, group_dst: int | None = None) -> None:
    pg = _member(group)
    if pg is None:
        return
    root = group_dst if group_dst is not None else pg.group_rank(0 if dst is None else dst)
    recv, sizes = _gathered_bytes(pg, _pickle(obj), root)
    if pg.rank() == root:
        if object_gather_list is None:
            raise ValueError("Argument ``object_gather_list`` must be specified on "
                             "destination rank.")
        object_gather_list[:pg.size()] = _split(recv, sizes)


def broadcast_object_list(object_list: list, src: int | None = None, group: Any = None,
                          device: Any = None, group_src: int | None = None) -> None:
    """Replace object_list's items on every rank with src's (the lists have equal lengths)."""
    pg = _member(group)
    if pg is None:
        return
    root = group_src if group_src is not None else pg.group_rank(0 if src is None else src)
    pickles: list = []
    if pg.rank() == root:
        pickles = [_pickle(o) for o in object_list]
        sizes = np.array([p.size for p in pickles], np.int64)
    else:
        sizes = np.empty(len(object_list), np.int64)
    _wait(pg, pg.comm.Ibcast(sizes, root=root), "broadcast")
    data = np.concatenate(pickles) if pg.rank() == root and pickles else \
        np.empty(int(sizes.sum()), np.uint8)
    _wait(pg, pg.comm.Ibcast(data, root=root), "broadcast")
    if pg.rank() != root:
        object_list[:] = _split(data, sizes)


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list: list |
                        None = None, src: int | None = None, group: Any = None,
                        group_src: int | None = None) -> None:
    pg = _member(group)
    if pg is None:
        return
    root = group_src if group_src is not None else pg.group_rank(0 if src is None else src)
    holder: list = [scatter_object_input_list if pg.rank() == root else None]
    broadcast_object_list(holder, src=pg.ranks[root], group=group)
    scatter_object_output_list[0] = holder[0][pg.rank()]


def send_object_list(object_list: list, dst: int | None = None, group: Any = None,
                     device: Any = None, group_dst: int | None = None) -> None:
    """Send the objects to one rank, which receives them with recv_object_list: their pickles'
    lengths, then the pickles."""
    from retrograd import tensor
    from retrograd.distributed._core import send

    if _member(group) is None:
        return
    pickles = [_pickle(o) for o in object_list]
    sizes = np.array([p.size for p in pickles], np.int64)
    send(tensor(sizes), dst, group, group_dst=group_dst)
    send(tensor(np.concatenate(pickles) if pickles else np.empty(0, np.uint8)), dst, group,
         group_dst=group_dst)


def recv_object_list(object_list: list, src: int | None = None, group: Any = None,
                     device: Any = None, group_src: int | None = None) -> int:
    """Fill object_list in place with the objects a rank sent with send_object_list (as many
    as the list holds); the sender's rank (-1 when this rank is not in `group`)."""
    from retrograd import empty, int64, uint8
    from retrograd.distributed._core import recv

    if _member(group) is None:
        return -1
    sizes = empty(len(object_list), dtype=int64)
    sender = recv(sizes, src, group, group_src=group_src)
    lengths = sizes.numpy()
    data = empty(int(lengths.sum()), dtype=uint8)
    recv(data, sender, group)
    object_list[:] = _split(data.numpy(), lengths)
    return sender
