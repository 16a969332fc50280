"""PackedSequence and the padding/packing helpers of torch.nn.utils.rnn.

A packed batch stores, time step by time step, the rows of the sequences still running at that
step: `data` is (sum(batch_sizes), *) and batch_sizes[t] is how many sequences are longer than t
(sequences sorted by decreasing length). Packing and padding are built from slicing and cat, so
gradients flow through them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

import retrograd
from retrograd._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceBase):
    """(data, batch_sizes, sorted_indices, unsorted_indices); made by pack_padded_sequence or
    pack_sequence, never by hand."""

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """data moved/cast like Tensor.to; the index tensors stay as they are."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(
            data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self

    def double(self) -> PackedSequence:
        return self.to(dtype=retrograd.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=retrograd.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=retrograd.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=retrograd.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=retrograd.int32)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse permutation (None for None)."""
    if permutation is None:
        return None
    output = retrograd.empty_like(permutation)
    output.scatter_(0, permutation, retrograd.arange(permutation.numel()))
    return output


def _batch_sizes(lengths: list[int]) -> list[int]:
    """batch_sizes[t] = how many of the (decreasing) lengths exceed t."""
    return [sum(1 for n in lengths if n > t) for t in range(lengths[0])]


def pack_padded_sequence(input: Tensor, lengths: Tensor | Sequence[int],
                         batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded (T, B, *) batch (B, T, * if batch_first) of sequences of `lengths`."""
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=retrograd.int64)
    else:
        lengths = retrograd.as_tensor(lengths, dtype=retrograd.int64)
    sorted_indices = None
    if not enforce_sorted:
        # a stable descending order, as torch's CPU sort gives for equal lengths
        order = np.argsort(-lengths.numpy(), kind="stable")
        sorted_indices = retrograd.from_numpy(order.astype(np.int64))
        lengths = lengths[sorted_indices]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    sizes = [int(n) for n in lengths.tolist()]
    if len(sizes) != input.size(1):
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(sizes)} (batch_size={input.size(1)})")
    if sizes and sizes[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(sizes, sizes[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    batch_sizes = _batch_sizes(sizes)
    data = retrograd.cat([input[t, :b] for t, b in enumerate(batch_sizes)])
    return PackedSequence(data, retrograd.tensor(batch_sizes, dtype=retrograd.int64),
                          sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """(padded batch, lengths): the inverse of pack_padded_sequence, in the original order."""
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_len}")
        max_len = total_length
    data = sequence.data
    batch = batch_sizes[0]
    rest = tuple(data.shape[1:])

    def filler(rows: int) -> Tensor:
        return retrograd.full((rows,) + rest, padding_value, dtype=data.dtype)

    steps, offset = [], 0
    for b in batch_sizes:
        piece = data[offset:offset + b]
        steps.append(piece if b == batch else retrograd.cat([piece, filler(batch - b)]))
        offset += b
    steps.extend(filler(batch) for _ in range(max_len - len(batch_sizes)))
    padded = retrograd.stack(steps)
    lengths = retrograd.tensor([sum(1 for b in batch_sizes if b > i) for i in range(batch)],
                               dtype=retrograd.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return padded, lengths


def pad_sequence(sequences: Tensor | Iterable[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack variable-length (L_i, *) tensors into (T, B, *) (B, T, * if batch_first)."""
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    elif not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    max_len = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        missing = max_len - s.size(0)
        if missing:
            fill = retrograd.full((missing,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
            s = retrograd.cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return retrograd.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """The list of sequences, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths.tolist())]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """pack_padded_sequence of pad_sequence(sequences)."""
    lengths = retrograd.as_tensor([s.size(0) for s in sequences], dtype=retrograd.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
