"""Collective fingerprints: before a collective moves data, every rank of the group shares a
short description of the call (op, shape, dtype, root, reduce op); if they differ, every rank
raises the same error naming two ranks and their calls, instead of hanging or reducing
mismatched buffers into garbage.

torch checks this only with TORCH_DISTRIBUTED_DEBUG=DETAIL; here the check is on by default
because MPI, unlike gloo, gives no error of its own for most mismatches. It costs one small
allgather per collective; RETROGRAD_DISTRIBUTED_CHECKS=0 turns it off. DDP's bucket
all-reduces skip it: their shapes are fixed at construction, where the parameters are checked.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

FINGERPRINT_BYTES = 160
MISMATCH = ("Detected mismatch between collectives on ranks. Rank {a} is running collective: "
            "CollectiveFingerPrint({da}), but Rank {b} is running collective: "
            "CollectiveFingerPrint({db}).")


def enabled() -> bool:
    return os.environ.get("RETROGRAD_DISTRIBUTED_CHECKS", "1") != "0"


def describe(op: str, tensor: Any = None, **extra: Any) -> str:
    parts = [f"OpType={op}"]
    if tensor is not None:
        parts.append(f"TensorShape={list(tensor.shape)}, TensorDtypes={tensor.dtype}")
    parts += [f"{k}={v}" for k, v in extra.items()]
    return ", ".join(parts)


def check(pg: Any, description: str) -> None:
    """Raise on every rank of `pg` if the ranks' descriptions differ."""
    from retrograd.distributed._core import Work

    if not enabled() or pg.size() == 1:
        return
    mine = np.zeros(FINGERPRINT_BYTES, np.uint8)
    text = description.encode()
    if len(text) > FINGERPRINT_BYTES:  # keep the head readable, make the tail a digest
        import hashlib

        text = text[:FINGERPRINT_BYTES - 20] + b"..." + hashlib.md5(text).hexdigest()[:17].encode()
    mine[:len(text)] = np.frombuffer(text, np.uint8)
    everyone = np.empty((pg.size(), FINGERPRINT_BYTES), np.uint8)
    Work([pg.comm.Iallgather(mine, everyone)], "fingerprint", "all ranks",
         collective=True).wait()
    differ = np.flatnonzero((everyone != everyone[0]).any(axis=1))
    if differ.size:
        b = int(differ[0])
        raise RuntimeError(MISMATCH.format(a=pg.ranks[0], da=_text(everyone[0]), b=pg.ranks[b],
                                           db=_text(everyone[b])))


def _text(row: np.ndarray) -> str:
    return bytes(row).rstrip(b"\0").decode(errors="replace")
