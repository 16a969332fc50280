"""Schedule actions: what one rank does at one step of a pipeline schedule.

An action names a stage, a kind and a microbatch, printed as PyTorch prints them: "0F1" is
stage 0's forward of microbatch 1, "3I2" an input-gradient pass, "3W2" a weight-gradient pass,
"1B0" a full backward, "2SEND_F4"/"2RECV_B4" communication.
"""

from __future__ import annotations

import csv
import io
import re
from enum import Enum
from typing import NamedTuple


class ComputationType(Enum):
    FORWARD = "F"
    FULL_BACKWARD = "B"
    BACKWARD_INPUT = "I"
    BACKWARD_WEIGHT = "W"
    SEND_F = "SEND_F"
    RECV_F = "RECV_F"
    SEND_B = "SEND_B"
    RECV_B = "RECV_B"

    def __str__(self) -> str:
        return self.value


F = ComputationType.FORWARD
B = ComputationType.FULL_BACKWARD
I = ComputationType.BACKWARD_INPUT  # noqa: E741 - the schedules' own letter
W = ComputationType.BACKWARD_WEIGHT
SEND_F = ComputationType.SEND_F
RECV_F = ComputationType.RECV_F
SEND_B = ComputationType.SEND_B
RECV_B = ComputationType.RECV_B
COMPUTE = (F, B, I, W)


class Action(NamedTuple):
    stage_index: int
    computation_type: ComputationType
    microbatch_index: int

    def __repr__(self) -> str:
        return f"{self.stage_index}{self.computation_type.value}{self.microbatch_index}"

    __str__ = __repr__

    @staticmethod
    def from_str(text: str) -> Action:
        m = re.fullmatch(r"(\d+)(F|B|I|W|SEND_F|RECV_F|SEND_B|RECV_B)(\d+)", text.strip())
        if m is None:
            raise RuntimeError(f"Invalid action string: {text}")
        return Action(int(m.group(1)), ComputationType(m.group(2)), int(m.group(3)))


def format_table(orders: dict) -> str:
    """The per-rank action lists side by side, one step per row."""
    ranks = sorted(orders)
    steps = max((len(orders[r]) for r in ranks), default=0)
    width = max([len(str(a)) for r in ranks for a in orders[r]] + [6]) + 2
    head = "step  " + "".join(f"rank {r}".ljust(width) for r in ranks)
    rows = [head]
    for i in range(steps):
        cells = [str(orders[r][i]) if i < len(orders[r]) and orders[r][i] is not None else ""
                 for r in ranks]
        rows.append(f"{i:<6d}" + "".join(c.ljust(width) for c in cells))
    return "\n".join(rows)


def to_csv(orders: dict, path: str | None = None) -> str:
    """One row per rank, one action per column (PyTorch's CSV layout); written if path given."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    for rank in sorted(orders):
        writer.writerow([str(a) if a is not None else "" for a in orders[rank]])
    text = buf.getvalue()
    if path is not None:
        with open(path, "w", newline="") as f:
            f.write(text)
    return text


def from_csv(text: str) -> dict:
    orders = {}
    for rank, row in enumerate(csv.reader(io.StringIO(text))):
        orders[rank] = [Action.from_str(c) if c else None for c in row]
    return orders
